"""find_symbol: where a class, function or variable is defined.

Python files are parsed with :mod:`ast` (classes, functions, methods as
``Class.method``, module-level assignments); a dotted name matches the
qualified name, a plain name matches the last part. Other languages are
matched by definition patterns (``function x``, ``fn x``, ``func x``,
``class x``, ``struct x``, ...).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from plansmith.domains.code._errors import RefusedError
from plansmith.domains.code._files import read_text
from plansmith.domains.code._paths import Resolved, Sandbox
from plansmith.domains.code._redact import redact
from plansmith.domains.code._results import SymbolMatch, SymbolResult, page
from plansmith.domains.code._tools_read import MAX_SCAN_FILES, walk_files

__all__ = ["find_symbol", "SYMBOL_NAME"]

SYMBOL_NAME = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"

_LANGUAGES = {
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".scala": "scala",
    ".sh": "shell",
    ".lua": "lua",
}


def _pattern(name: str) -> re.Pattern[str]:
    n = re.escape(name)
    return re.compile(
        rf"^\s*(?:export\s+|pub(?:\([a-z]+\))?\s+|public\s+|private\s+|protected\s+|static\s+"
        rf"|async\s+|abstract\s+|final\s+|default\s+)*"
        rf"(?:(?:function\*?|fn|func|def|class|struct|enum|trait|interface|type|module|object"
        rf"|impl|const|let|var|sub|local\s+function)\s+(?:\([^)]*\)\s*)?{n}\b"
        rf"|{n}\s*(?::[^=]*)?=\s*(?:async\s*)?(?:function\b|\([^)]*\)\s*=>))"
    )


def _python(tree: ast.Module) -> Iterator[tuple[str, str, ast.AST]]:
    """(qualname, kind, node) of every definition in a module."""

    def visit(node: ast.AST, prefix: str, in_class: bool) -> Iterator[tuple[str, str, ast.AST]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                qual = f"{prefix}{child.name}"
                yield qual, "class", child
                yield from visit(child, qual + ".", True)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                qual = f"{prefix}{child.name}"
                yield qual, "method" if in_class else "function", child
                yield from visit(child, qual + ".<locals>.", False)
            elif isinstance(child, ast.Assign | ast.AnnAssign) and not prefix:
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        yield target.id, "variable", child

    yield from visit(tree, "", False)


def _matches(qual: str, name: str) -> bool:
    if "." in name:
        return qual == name or qual.endswith("." + name)
    return qual.rsplit(".", 1)[-1] == name


def _scan(full: Path, relative: str, name: str, root: Resolved) -> list[SymbolMatch]:
    language = "python" if full.suffix == ".py" else _LANGUAGES.get(full.suffix)
    if language is None:
        return []
    try:
        text, _ = read_text(Resolved(full, root.root, relative, root.writable))
    except RefusedError:
        return []
    lines = redact(text).splitlines()
    found = []
    if full.suffix == ".py":
        try:
            tree = ast.parse(text, filename=relative)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        if tree is not None:
            for qual, kind, node in _python(tree):
                if _matches(qual, name):
                    line = getattr(node, "lineno", 1)
                    found.append(
                        SymbolMatch(
                            path=relative,
                            line=line,
                            end_line=getattr(node, "end_lineno", None) or line,
                            offset=line - 1,
                            kind=kind,
                            qualname=qual,
                            language="python",
                            signature=lines[line - 1].strip()[:300] if line <= len(lines) else "",
                        )
                    )
            return found
    matcher = _pattern(name.rsplit(".", 1)[-1])
    for number, line in enumerate(lines, 1):
        if matcher.search(line[:2000]):
            found.append(
                SymbolMatch(
                    path=relative,
                    line=number,
                    end_line=number,
                    offset=number - 1,
                    kind="pattern",
                    qualname=name,
                    language=language,
                    signature=line.strip()[:300],
                )
            )
    return found


def find_symbol(box: Sandbox, name: str, path: str, offset: int, limit: int) -> SymbolResult:
    if not re.match(SYMBOL_NAME, name):
        raise RefusedError(
            "invalid_symbol",
            f"{name!r} is not an identifier or dotted name",
            fix="e.g. frequencies or Class.method",
        )
    target = box.resolve(path)
    found: list[SymbolMatch] = []
    scanned = 0
    for full, relative in walk_files(target):
        if scanned >= MAX_SCAN_FILES:
            break
        scanned += 1
        found.extend(_scan(full, relative, name, target))
    chunk, following = page(found, offset, limit)
    return SymbolResult(
        name=name, offset=offset, next_offset=following, matches=chunk, files_scanned=scanned
    )
