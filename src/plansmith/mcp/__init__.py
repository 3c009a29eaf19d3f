"""plansmith as an MCP server (``plansmith mcp``): plan, approve, run, status and report
from any MCP host, over the engine's run table; with research sources, the research
tools; for the code domain, ``draft_patch``."""

from plansmith.mcp._openai import OpenAIConfig, openai_config, openai_model
from plansmith.mcp._server import SessionInfo, build_face_server, serve_face_http
from plansmith.mcp._service import DriveElsewhere, FaceService, drive_with_cli
from plansmith.mcp._types import (
    ActionInfo,
    ApprovalResult,
    BindingCheck,
    DomainInfo,
    DomainList,
    DomainSummary,
    GoalInfo,
    PlanResult,
    RunHandle,
    RunList,
    RunReport,
    RunStatus,
    StepInfo,
    Translation,
)

__all__ = [
    "build_face_server",
    "serve_face_http",
    "SessionInfo",
    "FaceService",
    "DriveElsewhere",
    "drive_with_cli",
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
    "OpenAIConfig",
    "openai_config",
    "openai_model",
]
