"""The sampling translator on the labelled request set, with scripted models
(bench/bench_translator.py, which prints the table of docs/benchmarks.md): whatever the
model answers, no invalid goal is planned, no request costs more than 2 model calls,
every refusal says why, and with a model that answers right the translator finds at
least every goal the offline matcher finds."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from bench_translator import (
    BARRED,
    BEHAVIOURS,
    MAX_CALLS,
    Outcome,
    evaluate,
    load_rows,
    matcher_recall,
    missed,
    tally,
)


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    return anyio.run(evaluate, load_rows())


def _of(outcomes: list[Outcome], behaviour: str) -> list[Outcome]:
    return [o for o in outcomes if o.behaviour == behaviour]


def test_every_request_went_through_with_every_behaviour(outcomes: list[Outcome]) -> None:
    rows = load_rows()
    assert len(outcomes) == len(rows) * len(BEHAVIOURS)
    assert {o.behaviour for o in outcomes} == set(BEHAVIOURS)
    assert all(1 <= o.calls <= MAX_CALLS for o in outcomes)  # asked, at most twice


def test_the_bars_hold(outcomes: list[Outcome]) -> None:
    groups = tally(outcomes)
    assert missed(groups, matcher_recall(load_rows())) == []
    for behaviour in BARRED:
        assert groups[behaviour].invalid_planned == 0
        assert groups[behaviour].must_not_planned == 0
        assert groups[behaviour].out_of_domain_planned == 0
        assert groups[behaviour].refused_without_reason == 0


def test_a_right_model_plans_the_labelled_goals_and_says_no_goal_in_one_call(
    outcomes: list[Outcome],
) -> None:
    right = _of(outcomes, "right")
    groups = tally(outcomes)
    assert groups["right"].recall >= matcher_recall(load_rows())
    assert groups["right"].precision == 1.0  # whatever is planned is the labelled goal
    for o in right:
        if o.row.expect is None:  # the prompt's "no goal" answer: needs_choice, one call
            assert (o.status, o.calls) == ("needs_choice", 1), o
            assert "the request is not a goal of this domain" in o.reason
        elif o.planned:
            assert (o.right, o.calls) == (True, 1), o
        else:  # the domain's default facts name an object the row's objects leave out
            assert o.status == "refused", o
            assert "in init" in o.reason, o


def test_an_invalid_or_unreadable_answer_is_repaired_once_then_refused(
    outcomes: list[Outcome],
) -> None:
    for behaviour in ("wrong", "malformed"):
        for o in _of(outcomes, behaviour):
            assert not o.valid_answer, o  # the script does answer something invalid
            assert (o.status, o.calls) == ("refused", 2), o
            assert "InputError: the host model's goal was refused" in o.reason, o


def test_a_plausible_goal_for_a_request_outside_the_domain_gets_through(
    outcomes: list[Outcome],
) -> None:
    """For the record: validation cannot tell a real goal of the domain, given for a
    request outside it, from the right one (the offline matcher plans none of them)."""
    plausible = tally(outcomes)["wrong-but-valid"]
    assert plausible.out_of_domain_planned == plausible.out_of_domain
    assert plausible.invalid_planned == 0
