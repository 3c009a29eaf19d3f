"""Permission tiers and timeout classes of the tools, decided by the server alone.

Tiers are cumulative: a ``write`` server also reads, an ``execute`` server also
writes. The tier is fixed when the server starts (``--tier``); no argument, file
content or ``_meta`` of a request can raise it.
"""

from __future__ import annotations

from enum import IntEnum

from plansmith.errors import InputError

__all__ = ["Tier", "TimeoutClass", "TOOL_TIERS", "TOOL_TIMEOUTS", "parse_tier", "allowed"]


class _Ranked(IntEnum):
    """Ranked words, each printed as its name in lower case."""

    def __str__(self) -> str:
        return self.name.lower()


class Tier(_Ranked):
    """What a server may do; each tier includes the ones below it."""

    READ = 1
    WRITE = 2
    EXECUTE = 3


class TimeoutClass(_Ranked):
    """Which of the configured timeouts (fast, medium, slow) bounds a tool."""

    FAST = 1
    MEDIUM = 2
    SLOW = 3


TOOL_TIERS: dict[str, Tier] = {
    "read_file": Tier.READ,
    "list_directory": Tier.READ,
    "search_in_files": Tier.READ,
    "find_symbol": Tier.READ,
    "get_dependencies": Tier.READ,
    "get_diff": Tier.READ,
    "get_build_logs": Tier.READ,
    "parse_failures": Tier.READ,
    "report_diagnosis": Tier.READ,
    "write_file": Tier.WRITE,
    "edit_file": Tier.WRITE,
    "create_branch": Tier.WRITE,
    "commit_changes": Tier.WRITE,
    "apply_patch": Tier.WRITE,
    "run_tests": Tier.EXECUTE,
    "run_build": Tier.EXECUTE,
}

TOOL_TIMEOUTS: dict[str, TimeoutClass] = {
    **{name: TimeoutClass.FAST for name, tier in TOOL_TIERS.items() if tier is Tier.READ},
    "get_diff": TimeoutClass.MEDIUM,
    "write_file": TimeoutClass.MEDIUM,
    "edit_file": TimeoutClass.MEDIUM,
    "create_branch": TimeoutClass.MEDIUM,
    "commit_changes": TimeoutClass.MEDIUM,
    "apply_patch": TimeoutClass.MEDIUM,
    "parse_failures": TimeoutClass.MEDIUM,
    "run_tests": TimeoutClass.SLOW,
    "run_build": TimeoutClass.SLOW,
}


def parse_tier(text: str) -> Tier:
    """``read``, ``write`` or ``execute`` (any case)."""
    try:
        return Tier[text.strip().upper()]
    except KeyError:
        raise InputError(
            f"unknown tier {text!r}", hint="use one of: read, write, execute"
        ) from None


def allowed(server_tier: Tier, tool: str) -> bool:
    """Whether a server at ``server_tier`` may run ``tool`` (unknown tools: never)."""
    needed = TOOL_TIERS.get(tool)
    return needed is not None and needed <= server_tier
