"""Compatibility modules: other planners' APIs, run by plansmith.

``plansmith.compat.gtpyhop`` provides GTPyhop 2.0.2's API, so that GTPyhop
domain packages plan under plansmith unchanged. It is imported on first use (when a
GTPyhop domain is loaded), not with this package: a server that loads none never
imports it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plansmith.compat import gtpyhop
    from plansmith.compat._gtpyhop_plan import planner_strategy

from plansmith.compat._gtpyhop_import import (  # stdlib only
    installed_gtpyhop_dirs,
    mcp_orchestration_example,
)

__all__ = ["gtpyhop", "installed_gtpyhop_dirs", "mcp_orchestration_example", "planner_strategy"]


def __getattr__(name: str) -> object:
    """``plansmith.compat.gtpyhop``, imported the first time it is read (PEP 562)."""
    if name == "gtpyhop":
        return importlib.import_module("plansmith.compat.gtpyhop")
    if name == "planner_strategy":  # what a loaded GTPyhop domain chose, for plan_python
        return importlib.import_module("plansmith.compat._gtpyhop_plan").planner_strategy
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
