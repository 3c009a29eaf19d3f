"""The bio domain's ask: after the search, a person chooses to align every homologue or
only the top 5. The question carries the search's figures; "top5" has the rest planned
again with keep_top_hits (the alignment then holds the query and 5 hits); "all" keeps
the plan; a replay reproduces the run from the recorded answer without asking."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from bio_engine_run import outputs_of, run_goal, succeeded_actions

from plansmith.domains import bio
from plansmith.engine import Engine
from plansmith.execution import (
    AnswerRecorded,
    AskReply,
    AskRequest,
    AwaitingAnswer,
    Replanned,
    step_histories,
)

GOAL = "reviewed family report"


def _need(*tools: str) -> None:
    missing = [t for t in tools if t not in bio.detect_tools()]
    if missing:
        pytest.skip(f"not installed: {missing} (Debian: ncbi-blast+ mafft fasttree)")


def _records(path: str) -> int:
    return sum(line.startswith(">") for line in Path(path).read_text().splitlines())


def _answering(answer: str, asked: list[AskRequest]) -> object:
    async def person(request: AskRequest) -> AskReply:
        asked.append(request)
        return AskReply(answer, by="test:biologist")

    return person


def test_the_top5_answer_trims_the_homologues_before_the_alignment(tmp_path: Path) -> None:
    _need("blastn", "mafft", "fasttree")
    asked: list[AskRequest] = []
    outcome, events = run_goal(
        tmp_path, ("blastn", "mafft", "fasttree"), goal=GOAL, asker=_answering("top5", asked)
    )
    assert outcome.state == "succeeded", outcome.reason
    assert len(asked) == 1
    search = outputs_of(outcome, events, "search_blast")
    question = asked[0].question
    assert f"The search found {search['hit_count']} hits of gene in family" in question
    assert search["top_subject"] in question
    assert asked[0].schema.choices == ("all", "top5")
    actions = succeeded_actions(events)
    assert actions.index("review_homologues") < actions.index("keep_top_hits")
    assert actions.index("keep_top_hits") < actions.index("align_mafft")
    assert outputs_of(outcome, events, "keep_top_hits")["count"] == 6
    alignment = outputs_of(outcome, events, "align_mafft")["alignment"]
    assert _records(alignment) == 6  # the query and the 5 best hits
    replans = [e for e in events if isinstance(e, Replanned)]
    assert len(replans) == 1
    assert "answered 'top5'" in replans[0].reason
    answer = next(e for e in events if isinstance(e, AnswerRecorded))
    assert (answer.answer, answer.by) == ("top5", "test:biologist")

    async def nobody(request: AskRequest) -> AskReply:
        raise AssertionError("a replay asked")

    async def replay() -> tuple[list[object], list[object]]:
        engine = Engine(tmp_path, asker=nobody)
        try:
            again = await engine.replay(outcome.run_id)
            return list(again), list(engine.log.events(outcome.run_id))
        finally:
            engine.close()

    replayed, recorded = anyio.run(replay)
    assert step_histories(replayed) == step_histories(recorded)  # type: ignore[arg-type]


def test_the_all_answer_keeps_the_plan_and_aligns_every_homologue(tmp_path: Path) -> None:
    _need("blastn", "mafft", "fasttree")
    asked: list[AskRequest] = []
    outcome, events = run_goal(
        tmp_path, ("blastn", "mafft", "fasttree"), goal=GOAL, asker=_answering("all", asked)
    )
    assert outcome.state == "succeeded", outcome.reason
    assert "keep_top_hits" not in succeeded_actions(events)
    assert not [e for e in events if isinstance(e, Replanned)]
    search = outputs_of(outcome, events, "search_blast")
    alignment = outputs_of(outcome, events, "align_mafft")["alignment"]
    assert _records(alignment) == 1 + search["hit_count"]  # the query, then every hit
    assert search["hit_count"] > 5


def test_with_no_one_to_ask_the_bio_run_waits_after_the_search(tmp_path: Path) -> None:
    _need("blastn", "mafft", "fasttree")
    outcome, events = run_goal(tmp_path, ("blastn", "mafft", "fasttree"), goal=GOAL)
    assert outcome.state == "awaiting answer"
    waiting = next(e for e in events if isinstance(e, AwaitingAnswer))
    assert waiting.action == "review_homologues"
    assert "align_mafft" not in succeeded_actions(events)
