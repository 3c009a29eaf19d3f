"""HTN planning: decomposition of YAML task networks and of Python-function
(GTPyhop-style) domains, both into the same plan artifact.

Names are imported on first use (``plansmith plan`` of a GTPyhop folder needs
the Python-function planner, not the task-network one)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plansmith._lazy import lazy_exports

if TYPE_CHECKING:
    from plansmith.planning.htn._check import check_htn
    from plansmith.planning.htn._limits import Budget
    from plansmith.planning.htn._plan_htn import HTN_SETTINGS, plan_htn
    from plansmith.planning.htn._pyexact import (
        GREEDY_STRATEGIES,
        GTPYHOP_STRATEGIES,
        seek_plan_gtpyhop,
    )
    from plansmith.planning.htn._pygoals import goals_not_achieved, is_multigoal, unigoal_satisfied
    from plansmith.planning.htn._pyplan import PY_SETTINGS, PY_STRATEGIES, plan_python
    from plansmith.planning.htn._pyreplay import unchanged_steps, without_unchanged
    from plansmith.planning.htn._pysearch import PySearchResult, seek_plan
    from plansmith.planning.htn._pyseed import FIXED_HASH_SEED, process_hash_seed
    from plansmith.planning.htn._pystate import fast_copy

__all__ = [
    # YAML / model task networks
    "plan_htn",
    "check_htn",
    "HTN_SETTINGS",
    # Python-function (GTPyhop-style) domains
    "Budget",
    "PY_SETTINGS",
    "PY_STRATEGIES",
    "plan_python",
    "FIXED_HASH_SEED",
    "process_hash_seed",
    "seek_plan",
    "seek_plan_gtpyhop",
    "GTPYHOP_STRATEGIES",
    "GREEDY_STRATEGIES",
    "PySearchResult",
    "unchanged_steps",
    "without_unchanged",
    "fast_copy",
    "goals_not_achieved",
    "is_multigoal",
    "unigoal_satisfied",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "plansmith.planning.htn._check": ("check_htn",),
        "plansmith.planning.htn._limits": ("Budget",),
        "plansmith.planning.htn._plan_htn": ("HTN_SETTINGS", "plan_htn"),
        "plansmith.planning.htn._pyexact": (
            "GREEDY_STRATEGIES",
            "GTPYHOP_STRATEGIES",
            "seek_plan_gtpyhop",
        ),
        "plansmith.planning.htn._pygoals": (
            "goals_not_achieved",
            "is_multigoal",
            "unigoal_satisfied",
        ),
        "plansmith.planning.htn._pyplan": ("PY_SETTINGS", "PY_STRATEGIES", "plan_python"),
        "plansmith.planning.htn._pyreplay": ("unchanged_steps", "without_unchanged"),
        "plansmith.planning.htn._pysearch": ("PySearchResult", "seek_plan"),
        "plansmith.planning.htn._pyseed": ("FIXED_HASH_SEED", "process_hash_seed"),
        "plansmith.planning.htn._pystate": ("fast_copy",),
    },
)
