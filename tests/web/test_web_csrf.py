"""Cross-site request forgery (issue 27, defect 4): a state-changing request from another
site (``Origin``, ``Sec-Fetch-Site``) is a 403, one not sent as JSON a 415, each with the
five-key error body, and neither changes anything; the same-origin JSON request and a
client that sends no ``Origin`` (curl, SDKs) still work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from _web_helpers import SLOW_BINDINGS, ServerThread, write_domains

from plansmith.web import WebSettings, create_app

KEYS = {"type", "message", "location", "hint", "details"}

FOREIGN = [
    {"Origin": "http://evil.example", "Content-Type": "text/plain"},  # the attack of the issue
    {"Origin": "http://evil.example", "Content-Type": "application/json"},
    {"Origin": "null", "Content-Type": "application/json"},
    {"Origin": "http://127.0.0.1:1", "Content-Type": "application/json"},  # another port
    {"Origin": "http://localhost.evil.example", "Content-Type": "application/json"},
    {"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"},
    {"Sec-Fetch-Site": "same-site", "Content-Type": "application/json"},
]

NOT_JSON = [
    {"Content-Type": "text/plain"},
    {"Content-Type": "application/x-www-form-urlencoded"},
    {"Content-Type": "multipart/form-data; boundary=x"},
    {},  # no Content-Type at all (a bodyless POST included)
]


def _error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error: dict[str, Any] = response.json()["error"]
    assert set(error) == KEYS
    assert error["hint"]
    assert error["location"]
    assert error["details"] == []
    return error


def _refused(response: httpx.Response, headers: dict[str, str]) -> None:
    """A foreign request: 403 (Origin or Sec-Fetch-Site); else, not JSON: 415."""
    if "Origin" in headers or "Sec-Fetch-Site" in headers:
        error = _error(response, 403)
        assert error["type"] == "CrossSiteRequestError"
        assert error["location"] in ("header.origin", "header.sec-fetch-site")
    else:
        error = _error(response, 415)
        assert error["type"] == "UnsupportedMediaTypeError"
        assert error["location"] == "header.content-type"


def _create(client: httpx.Client, problem: str = "problem-1") -> dict[str, Any]:
    created = client.post("/api/runs", json={"domain": "docs", "problem": problem})
    assert created.status_code == 201, created.text
    run: dict[str, Any] = created.json()
    return run


def test_foreign_or_non_json_requests_change_nothing(tmp_path: Path) -> None:
    root = write_domains(tmp_path, sizes=(1,), bindings=SLOW_BINDINGS)
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        waiting = _create(client)
        runs_before = len(client.get("/api/runs").json())
        # approve: refused, the run still awaits approval
        body = f'{{"plan_hash": "{waiting["plan_hash"]}"}}'
        for headers in FOREIGN + NOT_JSON:
            url = f"/api/runs/{waiting['run_id']}/approve"
            _refused(client.post(url, content=body, headers=headers), headers)
        # create: refused, no run is recorded
        for headers in FOREIGN + NOT_JSON:
            create = '{"domain": "docs", "problem": "problem-1"}'
            _refused(client.post("/api/runs", content=create, headers=headers), headers)
        assert len(client.get("/api/runs").json()) == runs_before
        assert client.get(f"/api/runs/{waiting['run_id']}").json()["status"] == (
            "awaiting approval"
        )

        # a running run: cancel is refused (empty text/plain body, as in the issue), and
        # it still runs
        running = _create(client)
        approve_url = f"/api/runs/{running['run_id']}/approve"
        same_origin = {"Origin": server.url, "Sec-Fetch-Site": "same-origin"}
        approved = client.post(
            approve_url, json={"plan_hash": running["plan_hash"]}, headers=same_origin
        )
        assert approved.status_code == 202, approved.text  # the page's own request works
        for headers in FOREIGN + NOT_JSON:
            url = f"/api/runs/{running['run_id']}/cancel"
            _refused(client.post(url, content=b"", headers=headers), headers)
        assert client.get(f"/api/runs/{running['run_id']}").json()["status"] == "running"

        # the same-origin JSON request (a bodyless one too) cancels it
        cancelled = client.post(
            f"/api/runs/{running['run_id']}/cancel",
            headers={**same_origin, "Content-Type": "application/json"},
        )
        assert cancelled.status_code == 202, cancelled.text
        assert client.get(f"/api/runs/{running['run_id']}").json()["status"] == "cancelled"


def test_clients_without_an_origin_and_reads_stay_allowed(tmp_path: Path) -> None:
    root = write_domains(tmp_path, sizes=(1,), bindings=SLOW_BINDINGS)
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        port = server.port
        run = _create(client)  # no Origin (curl, an SDK): allowed
        # the same origin in capitals or with a trailing slash
        for origin in (f"http://127.0.0.1:{port}", f"HTTP://127.0.0.1:{port}/"):
            planned = client.post(
                "/api/plan",
                json={"domain": "docs", "problem": "problem-1"},
                headers={"Origin": origin},
            )
            assert planned.status_code == 200, (origin, planned.text)
        # reads are not state-changing: a foreign Origin may read (the host check and the
        # token guard them; a browser's CORS keeps the answer from the foreign page)
        foreign = {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
        assert client.get(f"/api/runs/{run['run_id']}", headers=foreign).status_code == 200
        # routing still comes first: an unknown path is a 404, a wrong method a 405
        assert client.post("/api/nope", headers=foreign).status_code == 404
        assert client.post("/api/domains", headers=foreign).status_code == 405
        cancelled = client.post(f"/api/runs/{run['run_id']}/cancel", json={"reason": "done"})
        assert cancelled.status_code == 202


def test_the_schema_documents_the_refusals(tmp_path: Path) -> None:
    root = write_domains(tmp_path, sizes=(1,))
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        schema = client.get("/openapi.json").json()
    cancel = schema["paths"]["/api/runs/{run_id}/cancel"]["post"]["responses"]
    assert {"403", "415"} <= set(cancel)
