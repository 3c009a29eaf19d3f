"""The compiled build's C extension (``_native.c``, built by hatch_build.py), or None.

A plain install has no extension: the planner runs its Python code, which gives
the same plans byte for byte (tests/test_build.py).
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["native", "native_available"]


def _load() -> ModuleType | None:
    try:
        from plansmith.planning import _native  # noqa: PLC0415
    except ImportError:  # a plain install: pure Python
        return None
    return _native


native = _load()
"""The extension module (``Hff``, ``Successors``), or None."""


def native_available() -> bool:
    """Whether this install has the C extension (the compiled build)."""
    return native is not None
