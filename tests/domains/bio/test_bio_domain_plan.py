"""The bio domain under the planner: availability picks the path, and GC, ORFs and search
are unordered in the plan DAG."""

from __future__ import annotations

from collections.abc import Collection

import pytest

from plansmith.domains.bio import DOMAIN_DIR, problem_yaml
from plansmith.model import Plan

formats = pytest.importorskip("plansmith.formats")
planning = pytest.importorskip("plansmith.planning")

ALL = ("blastn", "mafft", "clustalo", "fasttree")
INPUTS = {"gene": "q.gb", "family": "f.fasta"}


def _plan(goal: str, available: Collection[str], search: str = "astar") -> Plan:
    plan = planning.plan
    domain = formats.load_domain(DOMAIN_DIR / "domain.yaml")
    problem = formats.parse_problem(problem_yaml(goal, INPUTS, available=available), domain)
    result: Plan = plan(problem, planning.PlanOptions(search=search))
    return result


def _actions(plan: Plan) -> list[str]:
    return [s.action for s in plan.steps]


def _ancestors(plan: Plan, step_id: str) -> set[str]:
    seen: set[str] = set()
    todo = [step_id]
    while todo:
        step = plan.step(todo.pop())
        assert step is not None
        for a in step.after:
            if a not in seen:
                seen.add(a)
                todo.append(a)
    return seen


def test_full_report_with_every_tool_takes_blast_mafft_and_fasttree() -> None:
    plan = _plan("full family report", ALL)
    assert sorted(_actions(plan)) == sorted(
        [
            "load_sequences",
            "load_sequences",
            "gc_content",
            "find_orfs",
            "make_blast_db",
            "search_blast",
            "align_mafft",
            "tree_fasttree",
            "write_report",
        ]
    )
    assert plan.cost == 10


def test_without_blastn_the_plan_searches_with_biopython() -> None:
    plan = _plan("full family report", ("mafft", "clustalo", "fasttree"))
    assert "search_biopython" in _actions(plan)
    assert not {"search_blast", "make_blast_db"} & set(_actions(plan))


def test_with_no_programs_every_step_is_biopython() -> None:
    plan = _plan("full family report", ())
    assert {"search_biopython", "align_biopython", "tree_nj"} <= set(_actions(plan))
    assert plan.cost == 16


def test_clustalo_is_the_second_choice_for_alignment() -> None:
    assert "align_clustalo" in _actions(_plan("phylogeny of these sequences", ("clustalo",)))


def test_gc_orfs_and_search_are_unordered_in_the_dag() -> None:
    for available in (ALL, ()):
        plan = _plan("full family report", available)
        ids = {s.action: s.id for s in plan.steps if s.action != "load_sequences"}
        search = ids.get("search_blast") or ids["search_biopython"]
        trio = [ids["gc_content"], ids["find_orfs"], search]
        for x in trio:
            for y in trio:
                if x != y:
                    assert x not in _ancestors(plan, y), (x, y)


def test_full_report_plan_has_the_documented_shape() -> None:
    plan = _plan("full family report", ALL)
    by_action = {s.action: s for s in plan.steps}
    report = by_action["write_report"]
    before_report = _ancestors(plan, report.id)
    assert {by_action[a].id for a in ("gc_content", "find_orfs", "search_blast")} <= before_report
    tree_before = _ancestors(plan, by_action["tree_fasttree"].id)
    assert by_action["align_mafft"].id in tree_before
    assert by_action["search_blast"].id in _ancestors(plan, by_action["align_mafft"].id)


@pytest.mark.parametrize("search", ["astar", "lazy-gbfs"])
def test_default_and_optimal_search_agree_on_the_blast_path(search: str) -> None:
    assert "search_blast" in _actions(_plan("homologues of this gene", ALL, search))


def test_summary_and_phylogeny_goals_plan() -> None:
    assert sorted(_actions(_plan("GC and ORF summary", ()))) == [
        "find_orfs",
        "gc_content",
        "load_sequences",
        "write_summary",
    ]
    assert _actions(_plan("phylogeny of these sequences", ALL)) == [
        "load_sequences",
        "align_mafft",
        "tree_fasttree",
        "render_tree",
    ]
