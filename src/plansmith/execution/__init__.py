"""Execution: the step state table, events, the invoker protocol and its wrappers, the run
log, replanning, approval and the async runner."""

from plansmith.execution._approval import ApprovalPolicy, tiers_needing_approval
from plansmith.execution._codec import bound_from_dict, bound_to_dict
from plansmith.execution._emit import (
    Emitter,
    check_view,
    elapsed_ms,
    is_blob_ref,
    iso_time,
    unpack,
    utc_now,
)
from plansmith.execution._events import (
    EVENT_TYPES,
    AwaitingApproval,
    Event,
    PlanApproved,
    PlanReady,
    Replanned,
    RunCancelled,
    RunCreated,
    RunFinished,
    RunRetried,
    RunStarted,
    StepEvent,
    StepFailed,
    StepProgress,
    StepRetrying,
    StepSkipped,
    StepStarted,
    StepSucceeded,
    event_from_dict,
)
from plansmith.execution._fake import FakeInvoker
from plansmith.execution._invoker import (
    IDEMPOTENCY_META_KEY,
    RETRYABLE_META_KEY,
    ErrorClass,
    ProgressFn,
    ReadyFn,
    ToolCall,
    ToolInvoker,
    ToolResult,
)
from plansmith.execution._json_values import finite_json, parse_json_text
from plansmith.execution._lease import Lease, RunLeases, new_engine_id, owner_gone
from plansmith.execution._log import BlobStore, MemoryRunLog, RunInfo, RunLog, SqliteRunLog
from plansmith.execution._log_pg import PostgresRunLog, is_postgres_url, open_run_log, redact_url
from plansmith.execution._messages import MESSAGE_LIMIT
from plansmith.execution._metrics import (
    OUTCOMES,
    UNKNOWN_DOMAIN,
    Figures,
    RunFacts,
    RunMetrics,
    ToolFigures,
    figures_of,
    metrics_of,
    parse_time,
    parse_window,
    run_domain,
    run_facts,
)
from plansmith.execution._migrations import MIGRATIONS, SCHEMA_VERSION, Migration
from plansmith.execution._policy import backoff_delay, should_retry
from plansmith.execution._replan import (
    Rebinder,
    ReplanFn,
    Replanner,
    ReplanRequest,
    StepKey,
    current_state,
    make_replan,
    rename_steps,
)
from plansmith.execution._replay import (
    PartEnd,
    RecordedPart,
    ReplayInvoker,
    recorded_parts,
    replay_env,
    replay_replan,
    step_histories,
)
from plansmith.execution._run_log import run_exists
from plansmith.execution._runner import Runner, RunOutcome, idempotency_key, unapproved_tiers
from plansmith.execution._states import (
    TRANSITIONS,
    RunState,
    StepState,
    apply_event,
    fold,
    ready_steps,
    transition,
)
from plansmith.execution._stats import (
    PRIOR_CALLS,
    ActionStats,
    LearnedCost,
    declared_costs,
    learned_cost_table,
    learned_costs,
    stats_of,
    with_action_costs,
    with_costs,
)
from plansmith.execution._tracing import TraceView
from plansmith.execution._tracing_env import TraceSetup, tracing_from_env
from plansmith.execution._tracing_invoker import TracingInvoker
from plansmith.execution._view import RUN_STATES, ReplanView, RetryView, RunView, StepView
from plansmith.execution._wrappers import (
    CallRecord,
    ClassifyingInvoker,
    RecordingInvoker,
    RetryInvoker,
    TimeoutInvoker,
)

__all__ = [
    # events
    "Event",
    "StepEvent",
    "RunCreated",
    "PlanReady",
    "AwaitingApproval",
    "PlanApproved",
    "RunStarted",
    "StepStarted",
    "StepProgress",
    "StepSucceeded",
    "StepFailed",
    "StepSkipped",
    "StepRetrying",
    "Replanned",
    "RunFinished",
    "RunCancelled",
    "RunRetried",
    "EVENT_TYPES",
    "event_from_dict",
    # invoker protocol and implementations
    "ErrorClass",
    "ProgressFn",
    "ToolCall",
    "ToolResult",
    "ToolInvoker",
    "ReadyFn",
    "IDEMPOTENCY_META_KEY",
    "RETRYABLE_META_KEY",
    "MESSAGE_LIMIT",
    "finite_json",
    "parse_json_text",
    "TimeoutInvoker",
    "ClassifyingInvoker",
    "RetryInvoker",
    "RecordingInvoker",
    "CallRecord",
    "FakeInvoker",
    "ReplayInvoker",
    "RecordedPart",
    "recorded_parts",
    "PartEnd",
    "step_histories",
    "replay_env",
    "replay_replan",
    "should_retry",
    "backoff_delay",
    # state machine
    "StepState",
    "TRANSITIONS",
    "transition",
    "ready_steps",
    "RunState",
    "fold",
    "apply_event",
    # the run view: what every face shows
    "RunView",
    "StepView",
    "RetryView",
    "ReplanView",
    "RUN_STATES",
    # log
    "RunLog",
    "RunInfo",
    "MemoryRunLog",
    "SqliteRunLog",
    "BlobStore",
    "PostgresRunLog",
    "open_run_log",
    "run_exists",
    "is_postgres_url",
    "redact_url",
    "Migration",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    # leases: one engine drives a run at a time
    "Lease",
    "RunLeases",
    "new_engine_id",
    "owner_gone",
    "Emitter",
    "check_view",
    "utc_now",
    "is_blob_ref",
    "iso_time",
    "elapsed_ms",
    "unpack",
    "bound_to_dict",
    "ActionStats",
    "LearnedCost",
    "stats_of",
    "learned_costs",
    "with_action_costs",
    "learned_cost_table",
    "declared_costs",
    "with_costs",
    "PRIOR_CALLS",
    # run metrics: per domain, per tool, per time window
    "RunMetrics",
    "Figures",
    "RunFacts",
    "ToolFigures",
    "metrics_of",
    "figures_of",
    "run_facts",
    "run_domain",
    "parse_window",
    "parse_time",
    "OUTCOMES",
    "UNKNOWN_DOMAIN",
    "bound_from_dict",
    # replanning and approval
    "StepKey",
    "Replanner",
    "Rebinder",
    "ReplanRequest",
    "ReplanFn",
    "current_state",
    "rename_steps",
    "make_replan",
    "ApprovalPolicy",
    "tiers_needing_approval",
    "unapproved_tiers",
    # runner
    "Runner",
    "RunOutcome",
    "idempotency_key",
    # tracing (needs the otel extra when built)
    "TraceView",
    "TracingInvoker",
    "TraceSetup",
    "tracing_from_env",
]
