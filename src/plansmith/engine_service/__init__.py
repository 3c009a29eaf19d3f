"""The engine as a ``PlansmithService``: what plansmith's MCP server (and other faces) call.

``ResearchService`` runs research questions over document sources (the research
domain) through the engine's planner, binder, runner and run log.
"""

from plansmith.engine_service._folders import DomainFolder, load_folders, shipped_domain_dirs
from plansmith.engine_service._research_cache import QueryCache
from plansmith.engine_service._research_desk import ResearchDesk
from plansmith.engine_service._research_quota import (
    CallsMeasured,
    CallVolume,
    SourceQuota,
    measure_calls,
)
from plansmith.engine_service._research_run import ResearchRequest, prepare_research, run_research
from plansmith.engine_service._research_service import ResearchService, budget_from
from plansmith.engine_service._research_sources import excludes_for, sources_from_specs
from plansmith.engine_service._service import EngineService

__all__ = [
    "EngineService",
    "DomainFolder",
    "load_folders",
    "shipped_domain_dirs",
    # research
    "ResearchService",
    "ResearchRequest",
    "ResearchDesk",
    "QueryCache",
    "SourceQuota",
    "CallVolume",
    "CallsMeasured",
    "measure_calls",
    "budget_from",
    "prepare_research",
    "run_research",
    "sources_from_specs",
    "excludes_for",
]
