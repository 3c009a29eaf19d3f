"""The doc-pipeline example plans and golden files for test_plan_json* and test_render*."""

from __future__ import annotations

import os
from pathlib import Path

from plansmith.model import DecompositionNode, GroundAction, Plan, Problem
from plansmith.planning import build_plan, instantiate

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
EXAMPLES = ROOT / "examples" / "doc-pipeline"
SCHEMA = ROOT / "schemas" / "plan.schema.json"


def _act(problem: Problem, name: str, *args: str) -> GroundAction:
    schema = problem.domain.action(name)
    assert schema is not None
    ground = instantiate(schema, args)
    assert ground is not None
    return ground


def doc_pipeline_plans() -> tuple[Plan, Plan]:
    """The classical plan for two-docs and an HTN plan for two-docs-htn (with its tree)."""
    from plansmith.formats import load_domain, load_problem

    domain = load_domain(EXAMPLES / "domain.yaml")
    classical = load_problem(EXAMPLES / "problem.yaml", domain)
    htn = load_problem(EXAMPLES / "problem-htn.yaml", domain)
    calls = [("summarise", "notes"), ("summarise", "q3"), ("index", "notes"), ("index", "q3")]
    seq = [_act(classical, *c) for c in calls]
    settings = (("kind", "classical"), ("search", "lazy-gbfs"), ("heuristic", "ff"))
    tree = tuple(
        DecompositionNode(
            "publish",
            (doc,),
            "summarise_then_index",
            children=(
                DecompositionNode("summarise", (doc,), step=first),
                DecompositionNode("index", (doc,), step=second),
            ),
        )
        for doc, first, second in (("notes", "s1", "s2"), ("q3", "s3", "s4"))
    )
    return (
        build_plan(classical, seq, settings),
        build_plan(htn, [seq[0], seq[2], seq[1], seq[3]], (("kind", "htn"),), decomposition=tree),
    )


def check_golden(name: str, text: str) -> None:
    """Compare ``text`` with tests/golden/NAME; PLANSMITH_UPDATE_GOLDEN=1 rewrites it."""
    path = GOLDEN / name
    if os.environ.get("PLANSMITH_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        return
    assert path.exists(), f"{path} is missing; run the tests once with PLANSMITH_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), (
        f"{name} differs from its golden file; if the change is intended, "
        "rerun with PLANSMITH_UPDATE_GOLDEN=1 and review the diff"
    )
