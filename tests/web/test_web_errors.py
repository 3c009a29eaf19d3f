"""Every error the web app answers is the JSON body of docs/web.md, with all five keys:
the host check and the token check included (ASGI transport, and one real socket); a
page's error is an HTML page whose hint names the pages, not the API's schema."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from html import unescape
from pathlib import Path
from typing import Any

import httpx
import pytest
from _web_helpers import ServerThread, asgi_client, settings
from starlette.types import Message

from plansmith.web import create_app

pytestmark = pytest.mark.anyio

KEYS = {"type", "message", "location", "hint", "details"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings(tmp_path))
    async with asgi_client(app) as c:
        yield c
    await app.state.controller.aclose()


def _error(response: httpx.Response, status: int) -> dict[str, Any]:
    """The error of a JSON error answer, checked to carry exactly the five keys."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error: dict[str, Any] = response.json()["error"]
    assert set(error) == KEYS
    return error


async def test_a_foreign_host_is_a_400_with_the_json_error_body(
    client: httpx.AsyncClient,
) -> None:
    for host in ("evil.example", "127.0.0.1.evil.example", "localhost.evil.example:8765"):
        error = _error(await client.get("/api/domains", headers={"Host": host}), 400)
        assert error["type"] == "UntrustedHostError"
        assert host in error["message"]
        assert error["location"] == "header.host"
        assert "localhost" in error["hint"]
        assert "--host" in error["hint"]
        assert error["details"] == []
    refused_page = await client.get("/", headers={"Host": "evil.example"})
    assert _error(refused_page, 400)["type"] == "UntrustedHostError"
    for host in ("127.0.0.1:8765", "LOCALHOST", "[::1]:8765"):
        assert (await client.get("/api/domains", headers={"Host": host})).status_code == 200


def test_a_foreign_host_is_refused_with_json_over_a_real_socket(tmp_path: Path) -> None:
    app = create_app(settings(tmp_path))
    with ServerThread(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        error = _error(client.get("/api/domains", headers={"Host": "evil.com"}), 400)
        assert "evil.com" in error["message"]
        assert client.get("/api/domains").status_code == 200


async def test_a_request_without_a_host_header_is_refused_with_json(tmp_path: Path) -> None:
    app = create_app(settings(tmp_path))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/api/domains",
        "raw_path": b"/api/domains",
        "root_path": "",
        "query_string": b"",
        "headers": [],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8765),
    }
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    await app.state.controller.aclose()
    assert sent[0]["status"] == 400
    body = httpx.Response(400, content=sent[1]["body"]).json()
    assert set(body["error"]) == KEYS
    assert "no Host header" in body["error"]["message"]


async def test_a_public_host_with_a_token_answers_any_host_name(tmp_path: Path) -> None:
    app = create_app(settings(tmp_path, host="0.0.0.0", token="s3cret"))
    async with asgi_client(app) as client:
        ok = await client.get(
            "/api/domains", headers={"Host": "plans.example", "Authorization": "Bearer s3cret"}
        )
        assert ok.status_code == 200
        error = _error(await client.get("/api/domains", headers={"Host": "plans.example"}), 401)
        assert error["type"] == "HTTPError"
    await app.state.controller.aclose()


async def test_a_missing_token_is_a_401_whose_hint_says_how_to_send_it(tmp_path: Path) -> None:
    app = create_app(settings(tmp_path, token="s3cret"))
    async with asgi_client(app) as client:
        response = await client.get("/api/domains")
        error = _error(response, 401)
        assert response.headers["www-authenticate"] == "Bearer"
        assert error["message"] == "a valid bearer token is required"
        assert error["location"] == "header.authorization"
        assert "Authorization: Bearer" in error["hint"]
        assert "?token=" in error["hint"]
        assert error["details"] == []
    await app.state.controller.aclose()


async def test_a_validation_error_has_the_field_path_as_its_location(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/api/plan", json={"domain": "../etc", "problem": "x"})
    error = _error(response, 422)
    assert error["type"] == "RequestValidationError"
    assert error["location"] == "body.domain"
    assert error["message"].startswith("body.domain: ")
    assert "/openapi.json" in error["hint"]
    assert error["details"][0]["loc"] == ["body", "domain"]
    unnamed = await client.post("/api/plan", json={"domain": "docs", "problem": "x", "args": {}})
    assert _error(unnamed, 422)["type"] != "RequestValidationError"  # args may be empty
    missing = _error(await client.post("/api/plan", json={"domain": "docs"}), 422)
    # neither a problem nor a goal: the whole body is at fault, and the message says which keys
    assert missing["location"] == "body"
    assert "give a problem or a goal" in missing["message"]


async def test_every_other_error_carries_the_five_keys(client: httpx.AsyncClient) -> None:
    unknown_problem = await client.post("/api/plan", json={"domain": "docs", "problem": "nope"})
    assert _error(unknown_problem, 422)["type"] == "InputError"
    missing_run = _error(await client.get("/api/runs/r-000000000000"), 404)
    assert missing_run["type"] == "RunNotFoundError"
    no_route = _error(await client.get("/api/nothing"), 404)
    assert no_route["type"] == "HTTPError"
    assert "/openapi.json" in no_route["hint"]
    assert _error(await client.delete("/api/domains"), 405)["type"] == "HTTPError"


#: the pages a person can open (docs/web.md, Pages), as the pages' hint names them
PAGES = {
    "/",
    "/runs",
    "/plan?domain=D&problem=P",
    "/runs/RUN_ID",
    "/runs/RUN_ID/plan",
    "/runs/RUN_ID/report",
}


async def test_a_failed_page_request_hints_at_the_pages_not_the_api_schema(
    client: httpx.AsyncClient,
) -> None:
    for method, path, status in (
        ("GET", "/runs/no-such-page/x", 404),
        ("POST", "/runs", 405),
        ("POST", "/runs/r-000000000000/report", 405),
        ("GET", "/plan?domain=docs", 422),
    ):
        page = await client.request(method, path)
        assert page.status_code == status, path
        assert page.headers["content-type"].startswith("text/html"), path
        assert "openapi" not in page.text, path
        found = re.search(r"<dt>hint</dt><dd>(.*?)</dd>", page.text)
        assert found is not None, path
        hint = unescape(found[1])
        assert set(re.findall(r"/[^\s,()]*", hint)) == PAGES, hint
    for named in PAGES:  # each page the hint names is one
        url = named.replace("RUN_ID", "r-000000000000").replace("=D", "=docs")
        shown = await client.get(url.replace("=P", "=problem-2"))
        assert shown.status_code == 200, named
        assert shown.headers["content-type"].startswith("text/html"), named
    schema_hint = "the API's operations and their request schemas are in /openapi.json"
    assert _error(await client.get("/api/runs/no-such/x"), 404)["hint"] == schema_hint
    assert _error(await client.post("/api/domains"), 405)["hint"] == schema_hint
