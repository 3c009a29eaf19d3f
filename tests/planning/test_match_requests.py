"""The offline matcher on the labelled request set (tests/planning/data/requests.jsonl):
never plans a request it must not, plans most of the others right, and says why not.

The set and its evaluation are bench/bench_matcher.py's (which prints the table)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from bench_matcher import Outcome, load_rows, run, shipped_domains, tally
from plansmith.formats import parse_problem


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    return run(load_rows(), shipped_domains())


def test_the_set_covers_the_shipped_domains_with_goals_and_out_of_domain_requests(
    outcomes: list[Outcome],
) -> None:
    domains = shipped_domains()
    assert set(domains) == {"doc-pipeline", "lab-prep", "bio", "code"}
    assert len(outcomes) >= 150
    assert {o.row.domain for o in outcomes} == set(domains)
    assert sum(o.row.kind == "out-of-domain" for o in outcomes) >= 30
    for o in outcomes:  # every expected goal is a goal of its domain over its objects
        if o.row.expect is None:
            continue
        domain, default = domains[o.row.domain]
        objects = o.row.objects or {t.name: t.type for t in default}
        listed = ", ".join(f"{name}: {kind}" for name, kind in objects.items())
        text = (
            f"problem: p\ndomain: {domain.name}\nobjects: {{{listed}}}\n"
            f"goal: [{', '.join(o.row.expect)}]\n"
        )
        assert parse_problem(text, domain).goal, o.row


def test_no_request_that_must_not_be_planned_is_planned(outcomes: list[Outcome]) -> None:
    planned = [o.row.request for o in outcomes if o.row.expect is None and o.planned]
    assert planned == []
    assert tally(outcomes)["all"].out_of_domain_planned == 0


def test_nine_in_ten_requests_with_a_goal_are_planned_right(outcomes: list[Outcome]) -> None:
    total = tally(outcomes)["all"]
    assert total.right >= 0.9 * total.with_goal, [
        (o.row.request, o.verdict) for o in outcomes if o.row.expect and not o.right
    ]


def test_every_answer_not_sure_says_why_and_so_does_each_candidate(
    outcomes: list[Outcome],
) -> None:
    for o in outcomes:
        match = o.match
        if match.sure:
            assert match.reason == "", o.row
            assert match.candidates[0].reason == "", o.row
            assert all(c.reason for c in match.candidates[1:]), o.row
        else:
            assert match.reason, o.row
            assert all(c.reason for c in match.candidates), o.row
            assert match.goal == (), o.row
