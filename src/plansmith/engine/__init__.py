"""The engine: owns runs. It plans, binds, starts servers, approves and drives each run,
and keeps them in its run log (see ``Engine``)."""

from plansmith._run_digests import ChangedInput
from plansmith.engine._engine import Engine, InvokerFactory
from plansmith.engine._follow_up import (
    AFTER_KEY,
    Inheritance,
    after_of,
    follow_up_context,
    inheritance,
    inherited_reads,
    is_inherited,
)
from plansmith.engine._inputs import (
    ASKED_KEY,
    COSTS_KEY,
    HOLD_KEY,
    OWNER_KEY,
    POLICY_KEY,
    RunInputs,
    Subscriber,
    check_run_id,
    made_from_files,
    recorded_costs,
    recorded_policy,
)
from plansmith.engine._made import (
    MADE_KEY,
    MAKERS_GROUP,
    MadeRun,
    MakeContext,
    RunMaker,
    find_maker,
    made_by,
)
from plansmith.engine._open import open_engine
from plansmith.engine._planning import (
    Planner,
    ban_failed,
    load_problem_files,
    make_costed_plan,
    make_plan,
    make_replanner,
    remaining_tasks,
)
from plansmith.engine._report import build_report, plan_progress, report_markdown
from plansmith.engine._table import RunFeed, RunHandle, RunTable, run_owner
from plansmith.engine._tools import ReplanFactory, RunTools, load_run_files

__all__ = [
    "Engine",
    "open_engine",
    "RunInputs",
    "ChangedInput",
    "RunTools",
    "ReplanFactory",
    "Planner",
    "InvokerFactory",
    "Subscriber",
    "load_problem_files",
    "load_run_files",
    "make_plan",
    "make_costed_plan",
    "make_replanner",
    "ban_failed",
    "remaining_tasks",
    "made_from_files",
    # runs a domain's code makes (a run maker), made again from recorded arguments
    "MADE_KEY",
    "MAKERS_GROUP",
    "MadeRun",
    "MakeContext",
    "RunMaker",
    "find_maker",
    "made_by",
    "check_run_id",
    "recorded_policy",
    "recorded_costs",
    "COSTS_KEY",
    "POLICY_KEY",
    "OWNER_KEY",
    "HOLD_KEY",
    "ASKED_KEY",
    "RunTable",
    "RunHandle",
    "RunFeed",
    "run_owner",
    # a run's report (JSON and Markdown) and its progress, from its events
    "build_report",
    "report_markdown",
    "plan_progress",
    # follow-up runs: a new goal from a finished run's final state, its outputs inherited
    "AFTER_KEY",
    "Inheritance",
    "after_of",
    "follow_up_context",
    "inheritance",
    "inherited_reads",
    "is_inherited",
]
