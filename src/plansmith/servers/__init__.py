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
from plansmith.servers._face_research import (
    ResearchHandle,
    ResearchReport,
    ResearchService,
    ResearchStatus,
    add_research_tools,
)
from plansmith.servers._face_server import build_face_server
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
    # plansmith's own MCP server (the face) and the service it is built on
    "build_face_server",
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
    # research tools of the face
    "ResearchService",
    "ResearchHandle",
    "ResearchStatus",
    "ResearchReport",
    "add_research_tools",
]
