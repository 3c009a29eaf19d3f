"""MCP servers: the servers config, the session pool and the MCP invoker (the only
importer of ``mcp``)."""

from plansmith.servers._config import (
    DEFAULT_MAX_IN_FLIGHT,
    HttpServer,
    InProcessServer,
    ServerConfig,
    ServersConfig,
    StdioServer,
    load_servers,
    parse_servers,
)
from plansmith.servers._dask import DaskPool, classify_dask_error, dask_pool_factory
from plansmith.servers._face_patch import DraftRequest, PatchDraft, PatchService, add_patch_tools
from plansmith.servers._face_research import (
    ResearchHandle,
    ResearchReport,
    ResearchService,
    ResearchStatus,
    add_research_tools,
)
from plansmith.servers._face_server import SessionInfo, build_face_server, serve_face_http
from plansmith.servers._face_service import (
    ActionInfo,
    ApprovalResult,
    BindingCheck,
    DomainInfo,
    DomainList,
    DomainSummary,
    GoalInfo,
    PlanResult,
    PlansmithService,
    RunHandle,
    RunList,
    RunReport,
    RunStatus,
    StepInfo,
    Translation,
)
from plansmith.servers._invoker import McpInvoker, PoolFactory, ToolPool
from plansmith.servers._pool import ServerPool, to_tool_result
from plansmith.servers._warm import DEFAULT_IDLE_TIMEOUT, WarmPools, WarmRun

__all__ = [
    "StdioServer",
    "HttpServer",
    "InProcessServer",
    "ServerConfig",
    "ServersConfig",
    "load_servers",
    "parse_servers",
    "DEFAULT_MAX_IN_FLIGHT",
    "ServerPool",
    "McpInvoker",
    "PoolFactory",
    "ToolPool",
    "to_tool_result",
    # servers kept warm between the runs of a long-lived face (serve, mcp)
    "WarmPools",
    "WarmRun",
    "DEFAULT_IDLE_TIMEOUT",
    # the Dask executor's pool (needs the dask extra when it connects)
    "DaskPool",
    "dask_pool_factory",
    "classify_dask_error",
    # plansmith's own MCP server (the face) and the service it is built on
    "build_face_server",
    "SessionInfo",
    "serve_face_http",
    "PlansmithService",
    "DomainSummary",
    "DomainList",
    "GoalInfo",
    "ActionInfo",
    "DomainInfo",
    "StepInfo",
    "BindingCheck",
    "Translation",
    "PlanResult",
    "ApprovalResult",
    "RunHandle",
    "RunStatus",
    "RunList",
    "RunReport",
    # draft_patch: an LLM-drafted patch for the code domain's patch plan
    "PatchService",
    "PatchDraft",
    "DraftRequest",
    "add_patch_tools",
    # research tools of the face
    "ResearchService",
    "ResearchHandle",
    "ResearchStatus",
    "ResearchReport",
    "add_research_tools",
]
