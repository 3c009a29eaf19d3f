"""The public API is what each package's ``__all__`` names, and nothing is exported by accident."""

from __future__ import annotations

import importlib
import pkgutil

import plansmith

PUBLIC_PACKAGES = [
    "plansmith",
    "plansmith.errors",
    "plansmith.model",
    "plansmith.formats",
    "plansmith.planning",
]


def _modules() -> list[str]:
    found = pkgutil.walk_packages(plansmith.__path__, "plansmith.")
    return ["plansmith", *(info.name for info in found)]


def test_every_module_declares_all() -> None:
    missing = []
    for name in _modules():
        module = importlib.import_module(name)
        if not hasattr(module, "__all__"):
            missing.append(name)
    assert missing == []


def test_every_name_in_all_exists() -> None:
    broken = []
    for name in _modules():
        module = importlib.import_module(name)
        exported = getattr(module, "__all__", [])
        broken.extend(f"{name}.{s}" for s in exported if not hasattr(module, s))
    assert broken == []


def test_public_packages_export_only_public_names() -> None:
    for name in PUBLIC_PACKAGES:
        module = importlib.import_module(name)
        assert all(
            not symbol.startswith("_") or symbol == "__version__" for symbol in module.__all__
        ), name
