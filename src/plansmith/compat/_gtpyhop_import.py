"""The stand-in's submodules: ``import gtpyhop.test_harness`` and the like under the alias.

GTPyhop is a package: its examples import ``gtpyhop.test_harness``,
``gtpyhop.memory_tracking`` and ``gtpyhop.examples.<name>``. When
``sys.modules["gtpyhop"]`` is plansmith's stand-in (a module with an empty
``__path__``, so that Python treats it as a package), :class:`StandInFinder`,
appended to ``sys.meta_path`` when the stand-in is first imported, resolves
``gtpyhop.<submodule>``:

* ``main``, ``logging_system``, ``test_harness`` (and ``test_harness.test_harness``),
  ``memory_tracking`` (and its ``tracker`` and ``monitor``): a module named so,
  with the names of the plansmith module that provides them (its attributes are
  that module's objects, so state such as the logger registry is shared);
* ``examples`` and everything below it: the installed GTPyhop's own example files
  (data that GTPyhop ships), found in its folder on ``sys.path`` without importing
  it; ``gtpyhop.examples`` is missing when GTPyhop is not installed.

Any other ``gtpyhop.<name>`` is missing (``ModuleNotFoundError``). The finder
does nothing unless the stand-in is ``sys.modules["gtpyhop"]``: with the real
GTPyhop imported, its own package resolves its submodules as usual.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["STAND_IN", "SUBMODULES", "StandInFinder", "install_finder", "installed_gtpyhop_dirs"]

#: The stand-in's module name.
STAND_IN = "plansmith.compat.gtpyhop"

#: ``gtpyhop.<name>`` -> (the plansmith module providing it, whether it is a package).
SUBMODULES: dict[str, tuple[str, bool]] = {
    "gtpyhop.main": (STAND_IN, False),
    "gtpyhop.logging_system": ("plansmith.compat._gtpyhop_logging", False),
    "gtpyhop.test_harness": ("plansmith.compat._gtpyhop_harness", True),
    "gtpyhop.test_harness.test_harness": ("plansmith.compat._gtpyhop_harness", False),
    "gtpyhop.memory_tracking": ("plansmith.compat._gtpyhop_memory", True),
    "gtpyhop.memory_tracking.tracker": ("plansmith.compat._gtpyhop_memory", False),
    "gtpyhop.memory_tracking.monitor": ("plansmith.compat._gtpyhop_memory", False),
}

_EXAMPLES = "gtpyhop.examples"


def installed_gtpyhop_dirs() -> list[str]:
    """The folders of the GTPyhop package installed on ``sys.path`` (not imported:
    ``sys.modules`` may hold the stand-in under its name); [] when there is none."""
    spec = importlib.machinery.PathFinder.find_spec("gtpyhop")
    if spec is None or spec.submodule_search_locations is None:
        return []
    return list(spec.submodule_search_locations)


def mcp_orchestration_example(name: str) -> Path:
    """The folder of GTPyhop's example ``examples/mcp-orchestration/NAME`` in the installed
    GTPyhop package (not imported). ``InputError`` when GTPyhop or the example is not
    there, with what to install."""
    from plansmith.errors import InputError, Location  # noqa: PLC0415 - stdlib-only module

    dirs = installed_gtpyhop_dirs()
    if not dirs:
        raise InputError(
            "gtpyhop is not installed", hint="pip install gtpyhop==2.0.2 (its examples hold it)"
        )
    folder = Path(dirs[0]) / "examples" / "mcp-orchestration" / name
    if not (folder / "domain.py").is_file():
        raise InputError(
            f"no {name} example in {folder.parent}",
            location=Location(str(folder)),
            hint=f"install gtpyhop==2.0.2, which ships examples/mcp-orchestration/{name}",
        )
    return folder


class _Facade(importlib.abc.Loader):
    """Makes ``gtpyhop.<name>`` a module holding the objects of a plansmith module."""

    def __init__(self, source: str) -> None:
        self.source = source

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module

    def exec_module(self, module: ModuleType) -> None:
        source = importlib.import_module(self.source)
        names = vars(module)
        names["__doc__"] = source.__doc__
        for name, value in vars(source).items():
            if not name.startswith("__") or name in {"__all__", "__version__"}:
                names.setdefault(name, value)

        def __getattr__(name: str) -> Any:  # noqa: N807 - the module's PEP 562 hook
            return getattr(source, name)  # the live settings (``gtpyhop.main.verbose``)

        names["__getattr__"] = __getattr__


class StandInFinder(importlib.abc.MetaPathFinder):
    """Finds ``gtpyhop.<submodule>`` while the stand-in is ``sys.modules["gtpyhop"]``."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("gtpyhop."):
            return None
        stand_in = sys.modules.get(STAND_IN)
        if stand_in is None or sys.modules.get("gtpyhop") is not stand_in:
            return None
        if fullname in SUBMODULES:
            source, is_package = SUBMODULES[fullname]
            return importlib.machinery.ModuleSpec(fullname, _Facade(source), is_package=is_package)
        if fullname == _EXAMPLES:
            # GTPyhop's examples (a namespace package) from the installed package's
            # folders; below it, their own ``__path__`` finds the rest.
            return importlib.machinery.PathFinder.find_spec(fullname, installed_gtpyhop_dirs())
        return None


_FINDER = StandInFinder()


def install_finder() -> None:
    """Append the finder to ``sys.meta_path`` (once)."""
    if not any(isinstance(f, StandInFinder) for f in sys.meta_path):
        sys.meta_path.append(_FINDER)
