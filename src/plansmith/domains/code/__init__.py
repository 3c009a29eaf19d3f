"""The code-tools domain: ``plansmith-code``, a sandboxed, tiered MCP server for coding agents.

See :mod:`plansmith.domains.code.server` and ``docs/code-tools.md``.
"""

from plansmith.domains.code._audit import verify_chain
from plansmith.domains.code._config import Commands, ServerConfig, Timeouts, load_config
from plansmith.domains.code._draft import DraftCheck, check_draft
from plansmith.domains.code._draft_diff import MAX_DRAFT_BYTES, MAX_DRAFT_FILES, read_diff
from plansmith.domains.code._draft_prompt import (
    DRAFT_SYSTEM_PROMPT,
    Diagnosis,
    draft_prompt,
    draft_repair_prompt,
)
from plansmith.domains.code._errors import RefusedError, UnavailableError
from plansmith.domains.code._inputs import CODE_INPUTS, CodeInputs
from plansmith.domains.code._paths import Sandbox
from plansmith.domains.code._problem import (
    DOMAIN_DIR,
    diagnose_problem,
    patch_digest,
    patch_problem,
    server_files,
)
from plansmith.domains.code._redact import redact
from plansmith.domains.code._sessions import SessionManager
from plansmith.domains.code._tiers import TOOL_TIERS, Tier

__all__ = [
    "DOMAIN_DIR",
    "CODE_INPUTS",
    "CodeInputs",
    "diagnose_problem",
    "patch_problem",
    "patch_digest",
    "server_files",
    # LLM-drafted patches (draft_patch on plansmith's MCP server)
    "Diagnosis",
    "DraftCheck",
    "check_draft",
    "read_diff",
    "draft_prompt",
    "draft_repair_prompt",
    "DRAFT_SYSTEM_PROMPT",
    "MAX_DRAFT_BYTES",
    "MAX_DRAFT_FILES",
    "ServerConfig",
    "Commands",
    "Timeouts",
    "load_config",
    "Tier",
    "TOOL_TIERS",
    "Sandbox",
    "SessionManager",
    "RefusedError",
    "UnavailableError",
    "redact",
    "verify_chain",
]
