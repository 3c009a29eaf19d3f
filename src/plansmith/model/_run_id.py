"""The one rule for run ids: the engine checks a new run's id with it, the web the ids
of its paths and queries (the same message).

A run id names the run's directory (``home/runs/RUN_ID``), so it is one path component.
"""

from __future__ import annotations

import re

from plansmith.errors import InputError

__all__ = ["RUN_ID_MAX_LENGTH", "RUN_ID_PATTERN", "RUN_ID_FORM", "check_run_id"]

RUN_ID_MAX_LENGTH = 128
#: the rule as a regular expression (Python's and JSON Schema's alike)
RUN_ID_PATTERN = rf"^[A-Za-z0-9_-][A-Za-z0-9._-]{{0,{RUN_ID_MAX_LENGTH - 1}}}$"
#: the rule in words, as messages give it
RUN_ID_FORM = (
    f"1 to {RUN_ID_MAX_LENGTH} characters of letters, digits, '-', '_' and '.', "
    "not starting with '.'"
)
_RUN_ID = re.compile(RUN_ID_PATTERN)


def check_run_id(run_id: object) -> str:
    """``run_id`` if it is a run id a run may have; else ``InputError`` naming the
    allowed form."""
    if not isinstance(run_id, str) or _RUN_ID.fullmatch(run_id) is None:
        raise InputError(
            f"{run_id!r} is not a run id: a run id is {RUN_ID_FORM}",
            hint="choose such an id, or give none (the engine makes one: r-HEX)",
        )
    return run_id
