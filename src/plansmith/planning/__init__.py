"""The pure, synchronous planner: grounding, search, heuristics, HTN, validation, explanation."""

from plansmith.planning._dag import build_plan, problem_hash
from plansmith.planning._explain import explain
from plansmith.planning._grounding import ground
from plansmith.planning._instantiate import function_table, instantiate
from plansmith.planning._planner import plan
from plansmith.planning._options import (
    HEURISTIC_NAMES,
    SEARCH_NAMES,
    HeuristicName,
    PlanOptions,
    SearchName,
)
from plansmith.planning._plan_steps import PlanIssue
from plansmith.planning._solve import SolveResult, solve
from plansmith.planning._task import GroundTask
from plansmith.planning._validate import check_plan, validate
from plansmith.planning.heuristics import HEURISTICS
from plansmith.planning.search import SEARCHES

__all__ = [
    "plan",
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
    "explain",
    # grounding and search
    "ground",
    "GroundTask",
    "solve",
    "SolveResult",
    "SEARCHES",
    "HEURISTICS",
]
