"""The optional model calls of a research run, two at most: with a model available, one
call proposes more subquestions (kept or dropped by the rules, facet ``model``), and one
call after the verification explains the flagged conflicts, in the report under a
heading marking it as model text; both are counted in llm_calls. Offline, nothing
changes.

Through ``plansmith research`` (a real process) with an OpenAI-compatible endpoint on
127.0.0.1 (a fake one, written here: ``_fake_chat``), through plansmith's MCP server
with the same endpoint, and through the MCP server with the host's model (sampling, the
SDK's in-memory client with a sampling callback). The sources are real corpus servers
over a folder of two planted notes that disagree on a date and a worker count."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from _fake_chat import fake_chat_endpoint

from plansmith.domains.research import EXPLANATION_HEADING
from plansmith.domains.research.desk import ResearchService
from plansmith.engine import Engine
from plansmith.mcp import FaceService

CLI = "import plansmith.cli._research; from plansmith.cli import app; app()"
QUESTION = "When was Frobnicator 4.2 released?"
NOTES = {
    "frobnicator-a.md": "Frobnicator 4.2 was released on 2023-03-14 and supports 64 workers.\n",
    "frobnicator-b.md": "Frobnicator 4.2 was released on 2024-09-30 and supports 128 workers.\n",
}
ANSWER = "The notes may describe two different builds: check frobnicator-b.md first."
PROPOSALS = """1. Which workers limit does Frobnicator 4.2 have?
- How do I bake bread?
"""
ANSWERS = {"decompose": PROPOSALS, "": ANSWER}


def _notes(tmp: Path) -> Path:
    notes = tmp / "NOTES"
    notes.mkdir(parents=True, exist_ok=True)
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    return notes


def _cli(tmp: Path, env: dict[str, str], *options: str) -> dict[str, Any]:
    command = [sys.executable, "-c", CLI, "research", QUESTION, "--json"]
    command += ["--source", f"NOTES={_notes(tmp)}", "--home", str(tmp / "home"), *options]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PLANSMITH_LLM_")}
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=tmp,
        timeout=180,
        check=False,
        env={**clean, **env},
    )
    assert done.returncode == 0, done.stderr
    payload: dict[str, Any] = json.loads(done.stdout)["report"]
    return payload


def _model_section(markdown: str) -> str:
    head = f"## {EXPLANATION_HEADING}"
    assert head in markdown
    return markdown.split(head, 1)[1].split("\n## ", 1)[0]


def _model_decisions(trace: dict[str, Any]) -> dict[str, str]:
    decisions = trace["problem"]["decisions"]
    return {
        d["subquestion"]: d["reason"]
        for d in decisions
        if "Frobnicator" in d["subquestion"] or "bread" in d["subquestion"]
    }


def test_the_cli_asks_the_endpoint_twice_at_most_and_marks_its_text(tmp_path: Path) -> None:
    with fake_chat_endpoint(ANSWERS) as endpoint:
        report = _cli(tmp_path, endpoint.env())
    assert len(endpoint.requests) == 2  # proposals, then the explanation after verify
    proposing, request = endpoint.requests
    assert "Question: When was Frobnicator 4.2 released?" in proposing["messages"][-1]["content"]
    # the proposals went through the rules: the on-topic one kept, the other dropped
    decided = _model_decisions(report["trace"])
    assert decided["Which workers limit does Frobnicator 4.2 have?"].endswith("(model)")
    assert decided["How do I bake bread?"].startswith("off-topic")
    assert request["model"] == "fake-model"
    prompt = request["messages"][-1]["content"]
    assert "2023-03-14" in prompt
    assert "2024-09-30" in prompt
    assert "frobnicator-a.md" in prompt
    assert report["llm_calls"] == 2
    assert report["trace"]["llm_calls"] == 2
    assert report["trace"]["explanation"] == ANSWER
    assert report["trace"]["explanation_via"] == "openai"
    section = _model_section(report["markdown"])
    assert "Model text (openai), not verified" in section
    assert f"> {ANSWER}" in section
    assert "- Model calls: 2 (of at most 2)" in report["markdown"]
    # the flag is the verifier's, with or without a model
    assert "## Disputed claims" in report["markdown"]
    assert report["markdown"].index("## Disputed claims") < report["markdown"].index(
        f"## {EXPLANATION_HEADING}"
    )


def test_offline_nothing_changes(tmp_path: Path) -> None:
    with fake_chat_endpoint(ANSWERS) as endpoint:
        offline = _cli(tmp_path / "a", endpoint.env(), "--offline")
    (tmp_path / "b").mkdir()
    unset = _cli(tmp_path / "b", {})
    assert endpoint.requests == []
    for report in (offline, unset):
        assert report["llm_calls"] == 0
        assert EXPLANATION_HEADING not in report["markdown"]
        assert "Model calls" not in report["markdown"]
        assert "## Disputed claims" in report["markdown"]


def test_no_conflict_no_explanation(tmp_path: Path) -> None:
    notes = tmp_path / "NOTES"
    notes.mkdir()
    (notes / "a.md").write_text("Frobnicator 4.2 was released on 2023-03-14.\n")
    with fake_chat_endpoint(ANSWERS) as endpoint:
        command = [sys.executable, "-c", CLI, "research", QUESTION, "--json"]
        command += ["--source", f"NOTES={notes}", "--home", str(tmp_path / "home")]
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
            env={**os.environ, **endpoint.env()},
        )
    assert done.returncode == 0, done.stderr
    assert len(endpoint.requests) == 1  # the proposals only: nothing to explain
    assert json.loads(done.stdout)["report"]["llm_calls"] == 1
    assert EXPLANATION_HEADING not in json.loads(done.stdout)["report"]["markdown"]


async def _mcp(tmp: Path, env: dict[str, str], answers: list[str]) -> dict[str, Any]:
    from mcp import Client
    from mcp.types import CreateMessageResult, TextContent

    from plansmith.mcp import build_face_server

    async def sampling(ctx: Any, params: Any) -> CreateMessageResult:
        answers.append(params.messages[0].content.text)
        text = PROPOSALS if "decompose" in (params.system_prompt or "") else ANSWER
        return CreateMessageResult(
            role="assistant", model="fake", content=TextContent(type="text", text=text)
        )

    engine = Engine(tmp / "home")
    research = ResearchService(engine, {"NOTES": _notes(tmp)})
    face = build_face_server(FaceService.on(engine, {}), env=env, research=research)
    out: dict[str, Any] = {}
    try:
        host: Any = sampling  # the SDK's callback type
        async with Client(face, sampling_callback=host) as client:
            started = await client.call_tool("start_research", {"question": QUESTION})
            run_id = started.structured_content["run_id"]
            await research.wait(run_id, owner="local")
            report = await client.call_tool("get_research_report", {"run_id": run_id})
            out["report"] = report.structured_content
            first = await client.call_tool("explain_research_conflicts", {"run_id": run_id})
            out["explained"] = first.structured_content
            again = await client.call_tool("explain_research_conflicts", {"run_id": run_id})
            out["again"] = again.structured_content
            out["unknown"] = await client.call_tool(
                "explain_research_conflicts", {"run_id": "r-nope"}
            )
    finally:
        engine.close()
    return out


def test_mcp_with_the_endpoint_proposes_and_explains_in_the_run(tmp_path: Path) -> None:
    prompts: list[str] = []
    with fake_chat_endpoint(ANSWERS) as endpoint:
        out = anyio.run(_mcp, tmp_path, endpoint.env(), prompts)
    assert len(endpoint.requests) == 2
    report = out["report"]
    assert report["llm_calls"] == 2
    assert f"> {ANSWER}" in _model_section(report["markdown"])
    decided = _model_decisions(report["trace"])
    assert decided["Which workers limit does Frobnicator 4.2 have?"].endswith("(model)")
    # explained already: the host's model is not asked too
    assert prompts == []
    assert out["explained"]["llm_calls"] == 2


def test_mcp_sampling_asks_the_host_for_proposals_then_once_after_the_run(
    tmp_path: Path,
) -> None:
    prompts: list[str] = []
    out = anyio.run(_mcp, tmp_path, {}, prompts)
    assert out["report"]["llm_calls"] == 1  # the proposals; the run itself asked nothing
    assert EXPLANATION_HEADING not in out["report"]["markdown"]
    decided = _model_decisions(out["report"]["trace"])
    assert decided["Which workers limit does Frobnicator 4.2 have?"].endswith("(model)")
    assert decided["How do I bake bread?"].startswith("off-topic")
    assert len(prompts) == 2  # proposals, then one explanation however often it is asked
    assert "Question: When was Frobnicator 4.2 released?" in prompts[0]
    assert "2023-03-14" in prompts[1]
    assert "2024-09-30" in prompts[1]
    explained = out["explained"]
    assert explained["llm_calls"] == 2
    section = _model_section(explained["markdown"])
    assert "Model text (sampling), not verified" in section
    assert f"> {ANSWER}" in section
    assert explained["trace"]["explanation_via"] == "sampling"
    assert out["again"]["llm_calls"] == 2
    assert out["again"]["markdown"] == explained["markdown"]
    unknown = out["unknown"]
    assert unknown.is_error
    assert "RunNotFoundError" in unknown.content[0].text


def test_proposals_are_read_one_per_line_at_most_four() -> None:
    from plansmith.domains.research import MAX_PROPOSALS, read_proposals

    text = "1. What is A?\n2) What is B?\n- What is C?\n* What is D?\n\u2022 What is E?\nx\n"
    assert read_proposals(text) == ("What is A?", "What is B?", "What is C?", "What is D?")
    assert MAX_PROPOSALS == 4
    assert read_proposals("") == ()


def test_a_proposal_prompt_shows_the_parts_and_the_planned_subquestions() -> None:
    from plansmith.domains.research import classify, proposal_prompt, propose

    q = classify("What is tomllib, and when was zoneinfo added?")
    prompt = proposal_prompt(q, [s.text for s in propose(q)])
    assert "Kind: compound" in prompt
    assert "Part 1: What is tomllib (explain)" in prompt
    assert "Part 2: when was zoneinfo added (fact)" in prompt
    assert "- What is tomllib?" in prompt


def test_the_desk_never_asks_past_two_model_calls(tmp_path: Path) -> None:
    from plansmith.domains.research import research_problem
    from plansmith.domains.research.desk import QueryCache, ResearchDesk, SourceQuota
    from plansmith.domains.research.verify import Evidence, verify

    asked: list[str] = []

    async def fake_model(system: str, user: str) -> str:
        asked.append(user)
        return "An explanation."

    async def no_source(*_: Any) -> Any:
        raise AssertionError("no source is called")

    evidence = [
        Evidence("NOTES", f"{n}.md", f"p{n}", text, 1, 1, subquestion="sq1")
        for n, text in enumerate(NOTES.values())
    ]
    groups = verify(evidence).groups
    problem = research_problem(QUESTION, ["NOTES"])

    def desk(calls: int) -> ResearchDesk:
        return ResearchDesk(
            "r-1",
            problem,
            no_source,
            QueryCache(),
            {"NOTES": SourceQuota()},
            run_dir=tmp_path,
            model=fake_model,
            model_via="fake",
            llm_calls=calls,
        )

    spent = desk(2)
    anyio.run(spent.explain, groups)
    assert asked == []
    assert spent.llm_calls == 2
    assert spent.explained is None
    fresh = desk(1)
    anyio.run(fresh.explain, groups)
    anyio.run(fresh.explain, groups)  # once only
    assert len(asked) == 1
    assert fresh.llm_calls == 2
    assert fresh.explained is not None
    assert fresh.explained.text == "An explanation."
    assert fresh.trace().explanation_via == "fake"
