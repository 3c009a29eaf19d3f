"""One rule for run ids: the web takes the run ids the engine takes (``check_run_id``,
1 to 128 characters) and refuses the others with the engine's message."""

from __future__ import annotations

from pathlib import Path

import pytest
from _web_helpers import asgi_client, settings

from plansmith.errors import InputError
from plansmith.model import RUN_ID_PATTERN

pytestmark = pytest.mark.anyio

LONG = "r-" + "a" * 98  # 100 characters: the web took at most 64
TOO_LONG = "r" * 129


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _engine_message(run_id: str) -> str:
    from plansmith.engine import check_run_id

    with pytest.raises(InputError) as caught:
        check_run_id(run_id)
    return caught.value.message


async def test_a_100_character_run_id_is_a_run_id_for_the_engine_and_the_web(
    tmp_path: Path,
) -> None:
    from plansmith.engine import Engine, check_run_id
    from plansmith.web import create_app

    assert len(LONG) == 100
    assert check_run_id(LONG) == LONG
    engine = Engine(tmp_path / "home")
    engine.log.create_run(LONG, "2026-01-01T00:00:00.000Z", {"domain": "d.yaml"})
    app = create_app(engine)
    async with asgi_client(app) as client:
        run = await client.get(f"/api/runs/{LONG}")
        listed = await client.get("/api/runs")
        older = await client.get("/api/runs", params={"before": LONG})
        report = await client.get(f"/api/runs/{LONG}/report")
        page = await client.get(f"/runs/{LONG}")
        missing = await client.get(f"/api/runs/{LONG[:-1]}x")
    await app.state.controller.aclose()
    assert run.status_code == 200, run.text
    assert run.json()["run_id"] == LONG
    assert [r["run_id"] for r in listed.json()] == [LONG]
    assert (older.status_code, older.json()) == (200, [])
    assert report.status_code == 200, report.text
    assert page.status_code == 200
    assert (missing.status_code, missing.json()["error"]["type"]) == (404, "RunNotFoundError")


@pytest.mark.parametrize("bad", [TOO_LONG, ".hidden", "a b", "{x}"])
async def test_a_run_id_the_engine_refuses_the_web_refuses_with_the_engines_message(
    tmp_path: Path, bad: str
) -> None:
    from plansmith.web import create_app

    message = _engine_message(bad)
    assert "is not a run id: a run id is 1 to 128 characters" in message
    app = create_app(settings(tmp_path))
    async with asgi_client(app) as client:
        answers = {
            "path.run_id": [
                await client.get(f"/api/runs/{bad}"),
                await client.get(f"/api/runs/{bad}/report"),
                await client.post(
                    f"/api/runs/{bad}/approve", json={"plan_hash": "sha256:" + "0" * 64}
                ),
            ],
            "query.before": [await client.get("/api/runs", params={"before": bad})],
        }
        page = await client.get(f"/runs/{bad}")
    await app.state.controller.aclose()
    for location, responses in answers.items():
        for response in responses:
            assert response.status_code == 422, response.text
            error = response.json()["error"]
            assert error["type"] == "RequestValidationError"
            assert error["location"] == location
            assert error["message"] == f"{location}: {message}"
    assert page.status_code == 422
    assert page.headers["content-type"].startswith("text/html")
    assert "is not a run id" in page.text


async def test_the_schema_states_the_engines_rule(tmp_path: Path) -> None:
    from plansmith.web import create_app

    app = create_app(settings(tmp_path))
    async with asgi_client(app) as client:
        schema = (await client.get("/openapi.json")).json()
    await app.state.controller.aclose()
    (run_id,) = [
        p for p in schema["paths"]["/api/runs/{run_id}"]["get"]["parameters"] if p["in"] == "path"
    ]
    assert run_id["schema"]["pattern"] == RUN_ID_PATTERN
    assert run_id["schema"]["maxLength"] == 128
