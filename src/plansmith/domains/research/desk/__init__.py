"""The research desk: research questions run over document sources (the research
domain) through the engine's planner, binder, runner and run log; what the faces
(``plansmith research``, the MCP face's research tools) call.

Not imported by ``plansmith.domains.research`` (which the corpus server imports):
this package imports the engine.
"""

from plansmith.domains.research.desk._cache import QueryCache
from plansmith.domains.research.desk._desk import ResearchDesk
from plansmith.domains.research.desk._limits import (
    REAL_CLOCK,
    CircuitBreaker,
    LimitClock,
    RateQuota,
    SourceGuard,
    guards_for,
)
from plansmith.domains.research.desk._quota import (
    CallsMeasured,
    CallVolume,
    LimitSettings,
    QuotaConfigError,
    SourceQuota,
    describe_quota,
    limit_settings,
    measure_calls,
    parse_rate,
)
from plansmith.domains.research.desk._run import ResearchRequest, prepare_research, run_research
from plansmith.domains.research.desk._service import ResearchService, budget_from
from plansmith.domains.research.desk._specs import (
    default_source_specs,
    excludes_for,
    sources_from_specs,
)
from plansmith.domains.research.desk._types import ResearchHandle, ResearchReport, ResearchStatus

__all__ = [
    "ResearchService",
    "ResearchRequest",
    "ResearchHandle",
    "ResearchStatus",
    "ResearchReport",
    "ResearchDesk",
    "QueryCache",
    "SourceQuota",
    "QuotaConfigError",
    "parse_rate",
    "LimitSettings",
    "limit_settings",
    "describe_quota",
    "RateQuota",
    "CircuitBreaker",
    "SourceGuard",
    "LimitClock",
    "REAL_CLOCK",
    "guards_for",
    "CallVolume",
    "CallsMeasured",
    "measure_calls",
    "budget_from",
    "prepare_research",
    "run_research",
    "sources_from_specs",
    "excludes_for",
    "default_source_specs",
]
