"""The research tool's rate and circuit-breaker arguments through plansmith's MCP server
(the SDK's in-memory client; the source is a real corpus server over the planted notes):
a run's own rate reaches the run (its trace and report show it, and the source's own
call log shows no more calls than the rate allows), and bad values are tool errors with
a hint and the argument's name, with no run made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from plansmith.domains.research import PLANTED_DIR
from plansmith.domains.research.desk import ResearchService
from plansmith.engine import Engine
from plansmith.mcp import FaceService

QUESTION = "What is Frobnicator?"
RATE = 2  # calls per second, this run's own


def _runs(home: Path) -> list[str]:
    runs = home / "runs"
    return sorted(p.name for p in runs.iterdir()) if runs.exists() else []


async def _scenario(tmp: Path) -> dict[str, Any]:
    from mcp import Client

    from plansmith.mcp import build_face_server

    engine = Engine(tmp / "home")
    research = ResearchService(engine, {"notes": PLANTED_DIR / "notes"}, depth=3)
    face = build_face_server(FaceService.on(engine, {}), env={}, research=research)
    out: dict[str, Any] = {"bad": {}}
    try:
        async with Client(face) as client:
            tools = (await client.list_tools()).tools
            out["schema"] = next(t for t in tools if t.name == "start_research").input_schema
            bad: dict[str, dict[str, Any]] = {
                "rate": {"rate": "5/parsec"},
                "source": {"rate": {"elsewhere": "5/s"}},
                "failures": {"breaker_failures": -1},
                "cooldown": {"breaker_cooldown": 0},
            }
            for name, arguments in bad.items():
                before = _runs(tmp / "home")
                result = await client.call_tool(
                    "start_research", {"question": QUESTION, **arguments}
                )
                out["bad"][name] = (result, before == _runs(tmp / "home"))
            started = await client.call_tool(
                "start_research",
                {
                    "question": QUESTION,
                    "rate": f"{RATE}/s",
                    "breaker_failures": 2,
                    "breaker_cooldown": 7.5,
                },
            )
            assert not started.is_error, started.content
            run_id = started.structured_content["run_id"]
            await research.wait(run_id, owner="local")
            report = await client.call_tool("get_research_report", {"run_id": run_id})
            out["report"] = report.structured_content
    finally:
        engine.close()
    out["log"] = research.log_path("notes").read_text(encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    result: dict[str, Any] = anyio.run(_scenario, tmp_path_factory.mktemp("limits"))
    return result


def test_the_tool_takes_a_rate_and_breaker_settings(record: dict[str, Any]) -> None:
    properties = record["schema"]["properties"]
    assert {"rate", "breaker_failures", "breaker_cooldown"} <= set(properties)


def test_the_runs_own_limits_reach_the_run_trace_and_report(record: dict[str, Any]) -> None:
    report = record["report"]
    assert report["state"] == "succeeded"
    limits = report["trace"]["usage"]["limits"]
    own = (
        "notes (this run's own): 2 calls per 1 s; "
        "breaker after 2 failures in a row, cool-down 7.5 s"
    )
    assert own in limits
    assert any(line.startswith("notes: no rate quota; breaker after 5") for line in limits)
    assert f"- Limits of {own}." in report["markdown"]


def test_the_source_never_saw_calls_faster_than_the_runs_rate(record: dict[str, Any]) -> None:
    import json

    calls = [json.loads(line) for line in record["log"].splitlines()]
    starts = sorted(float(c["started"]) for c in calls)
    assert len(starts) > RATE  # the rate was reached, so it was tested
    for first, later in zip(starts, starts[RATE:], strict=False):
        assert later - first >= 1.0 - 0.01  # any RATE + 1 calls in a row span a second


@pytest.mark.parametrize(
    ("case", "argument", "words"),
    [
        ("rate", "rate", "not a rate: '5/parsec'"),
        ("source", "rate", "a rate for an unknown source: 'elsewhere'"),
        ("failures", "breaker_failures", "breaker failures must be a whole number >= 0"),
        ("cooldown", "breaker_cooldown", "cool-down must be a number of seconds > 0"),
    ],
)
def test_bad_limits_are_tool_errors_with_a_hint_and_make_no_run(
    record: dict[str, Any], case: str, argument: str, words: str
) -> None:
    result, no_run = record["bad"][case]
    assert result.is_error
    text = result.content[0].text
    assert "QuotaConfigError: " in text, text
    assert words in text
    assert f"argument {argument}" in text
    assert "hint:" in text
    assert no_run
