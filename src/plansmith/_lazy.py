"""Lazy package exports (PEP 562), so that ``plansmith plan`` imports only what it uses.

A package lists ``{module: names}``; a name is imported from its module the first
time it is read, then cached in the package's namespace. Type checkers see the
real imports under ``if TYPE_CHECKING:`` in the package's ``__init__``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

__all__ = ["lazy_exports"]


def lazy_exports(package: str, table: Mapping[str, tuple[str, ...]]) -> Callable[[str], object]:
    """A module ``__getattr__`` that imports each exported name on first use."""
    where = {name: module for module, names in table.items() for name in names}

    def getattr_(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return getattr_
