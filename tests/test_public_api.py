"""The public API is what each package's ``__all__`` names, and nothing is exported by accident."""

from __future__ import annotations

import importlib
import pkgutil

import plansmith

PUBLIC_PACKAGES = ["plansmith", "plansmith.errors", "plansmith.model", "plansmith.formats", "plansmith.planning"]


def _modules() -> list[str]:
    names = ["plansmith"]
    for info in pkgutil.walk_packages(plansmith.__path__, "plansmith."):
        names.append(info.name)
    return names


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
        for symbol in getattr(module, "__all__", []):
            if not hasattr(module, symbol):
                broken.append(f"{name}.{symbol}")
    assert broken == []


def test_public_packages_export_only_public_names() -> None:
    for name in PUBLIC_PACKAGES:
        module = importlib.import_module(name)
        assert all(not symbol.startswith("_") or symbol == "__version__" for symbol in module.__all__), name
