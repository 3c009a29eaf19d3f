"""HTN planning: decomposition of YAML task networks and of Python-function
(GTPyhop-style) domains, both into the same plan artifact."""

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
