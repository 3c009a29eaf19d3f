"""The pure, synchronous planner: grounding, search, heuristics, HTN, validation, explanation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plansmith._lazy import lazy_exports

if TYPE_CHECKING:
    from plansmith.planning._dag import build_plan, problem_hash
    from plansmith.planning._explain import explain
    from plansmith.planning._grounding import ground
    from plansmith.planning._instantiate import function_table, instantiate
    from plansmith.planning._options import (
        HEURISTIC_NAMES,
        SEARCH_NAMES,
        HeuristicName,
        PlanOptions,
        SearchName,
    )
    from plansmith.planning._plan_steps import PlanIssue, object_args
    from plansmith.planning._planner import plan
    from plansmith.planning._solve import SolveResult, solve
    from plansmith.planning._task import GroundTask
    from plansmith.planning._translate import GoalCandidate, GoalMatch, ground_goal, match_goal
    from plansmith.planning._validate import check_plan, validate
    from plansmith.planning.heuristics import HEURISTICS
    from plansmith.planning.search import SEARCHES

__all__ = [
    "plan",
    "match_goal",
    "ground_goal",
    "GoalMatch",
    "GoalCandidate",
    "PlanOptions",
    "SearchName",
    "HeuristicName",
    "SEARCH_NAMES",
    "HEURISTIC_NAMES",
    "instantiate",
    "function_table",
    # the plan artifact
    "build_plan",
    "problem_hash",
    "validate",
    "check_plan",
    "PlanIssue",
    "object_args",
    "explain",
    # grounding and search
    "ground",
    "GroundTask",
    "solve",
    "SolveResult",
    "SEARCHES",
    "HEURISTICS",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "plansmith.planning._dag": (
            "build_plan",
            "problem_hash",
        ),
        "plansmith.planning._explain": ("explain",),
        "plansmith.planning._grounding": ("ground",),
        "plansmith.planning._instantiate": (
            "function_table",
            "instantiate",
        ),
        "plansmith.planning._options": (
            "HEURISTIC_NAMES",
            "SEARCH_NAMES",
            "HeuristicName",
            "PlanOptions",
            "SearchName",
        ),
        "plansmith.planning._plan_steps": ("PlanIssue", "object_args"),
        "plansmith.planning._planner": ("plan",),
        "plansmith.planning._solve": (
            "SolveResult",
            "solve",
        ),
        "plansmith.planning._task": ("GroundTask",),
        "plansmith.planning._translate": (
            "GoalCandidate",
            "GoalMatch",
            "match_goal",
            "ground_goal",
        ),
        "plansmith.planning._validate": (
            "check_plan",
            "validate",
        ),
        "plansmith.planning.heuristics": ("HEURISTICS",),
        "plansmith.planning.search": ("SEARCHES",),
    },
)
