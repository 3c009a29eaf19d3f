"""Who approves from this terminal, as the run log records it."""

from __future__ import annotations

import getpass

__all__ = ["cli_person"]


def cli_person() -> str:
    """``cli:LOGIN`` (``cli:unknown`` where the uid has no login name, in a container)."""
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli:unknown"
