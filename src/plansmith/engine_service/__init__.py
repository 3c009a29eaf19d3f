"""The engine as a ``PlansmithService``: what plansmith's MCP server (and other faces) call."""

from plansmith.engine_service._folders import DomainFolder, load_folders, shipped_domain_dirs
from plansmith.engine_service._service import EngineService

__all__ = ["EngineService", "DomainFolder", "load_folders", "shipped_domain_dirs"]
