"""The layer rules import-linter cannot say: no module imports another package's
private modules (``plansmith.P._x`` from outside ``plansmith.P``); it imports what that
package's ``__init__`` (or a public module of it) exports."""

from __future__ import annotations

import ast
from pathlib import Path

import plansmith

SRC = Path(plansmith.__file__).parent


def _private_imports_across_packages() -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        own = parts[0] if len(parts) > 1 else ""
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module is not None:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                module = name.split(".")
                if module[0] != "plansmith" or len(module) < 3 or module[1] == own:
                    continue
                if any(p.startswith("_") for p in module[2:]):
                    found.append(f"{path.relative_to(SRC.parent)}:{node.lineno}: {name}")
    return found


def test_no_module_imports_a_private_module_of_another_package() -> None:
    assert _private_imports_across_packages() == []
