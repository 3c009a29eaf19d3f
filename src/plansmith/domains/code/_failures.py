"""Parse a pytest log into failures, and rank the project symbols that may cause them (pure).

A failure is a test id from pytest's ``FAILED``/``ERROR`` lines, with the first
``E`` line of its section as the message and the ``file.py:N:`` lines of its
traceback as frames. The suspects of a failure are project functions and
classes (defined outside test files):

* a frame inside the symbol's definition: +3 (the error happened there);
* the test is named after it (``test_frequencies`` -> ``frequencies``): +1;
* the test body calls it: +1;
* a symbol the test calls, calls it: +0.5 (one level down the call graph).

Scores add up over all failures, so a symbol behind several failing tests
(``countby`` calls ``frequencies``) ranks above each of them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

__all__ = [
    "Definition",
    "Failure",
    "parse_log",
    "index_module",
    "calls_in_test",
    "is_test_file",
    "rank_suspects",
]

_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+?)(?: - (.*))?$")
_SECTION = re.compile(r"^_{3,} (.+?) _{3,}$")
_FRAME = re.compile(r"^([A-Za-z0-9_./\-]+\.py):(\d+): ?(\w*)")
_MAX = 200


@dataclass(frozen=True, slots=True)
class Failure:
    """One failing test: its id, file, message and traceback frames (file, line)."""

    test: str
    file: str
    function: str
    message: str = ""
    frames: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Definition:
    """A function or class defined in a project file, with the names it calls."""

    name: str
    qualname: str
    path: str
    line: int
    end_line: int
    kind: str
    calls: frozenset[str] = field(default_factory=frozenset)


def _sections(lines: list[str]) -> dict[str, list[str]]:
    """The traceback section of each test, by the name in its ``____ name ____`` header."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        header = _SECTION.match(line)
        if header:
            current = sections.setdefault(header.group(1).strip(), [])
        elif line.startswith("=") and current is not None:
            current = None
        elif current is not None:
            current.append(line)
    return sections


def parse_log(text: str) -> list[Failure]:
    """The failures of a pytest run, in the order of its short summary (200 at most)."""
    lines = text.splitlines()
    sections = _sections(lines)
    failures: list[Failure] = []
    seen: set[str] = set()
    for line in lines:
        found = _FAILED.match(line)
        if not found or found.group(1) in seen:
            continue
        test = found.group(1)
        seen.add(test)
        file, _, rest = test.partition("::")
        function = rest.split("[", 1)[0]
        body = sections.get(function.replace("::", "."), sections.get(function.split("::")[-1], []))
        errors = [b[1:].strip() for b in body if b.startswith("E ") and b[1:].strip()]
        frames = tuple(
            (m.group(1), int(m.group(2))) for m in map(_FRAME.match, body) if m is not None
        )
        message = errors[0] if errors else (found.group(2) or "")
        failures.append(Failure(test, file, function, message[:500], frames[:20]))
        if len(failures) >= _MAX:
            break
    return failures


def is_test_file(path: str) -> bool:
    """Whether ``path`` is a test module (``test_*.py``, ``*_test.py``, conftest, tests/)."""
    parts = path.split("/")
    name = parts[-1]
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(p in ("tests", "test", "testing") for p in parts[:-1])
    )


def _called_names(node: ast.AST) -> frozenset[str]:
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            if isinstance(sub.func, ast.Name):
                names.add(sub.func.id)
            elif isinstance(sub.func, ast.Attribute):
                names.add(sub.func.attr)
    return frozenset(names)


def index_module(tree: ast.Module, path: str) -> Iterator[Definition]:
    """The functions, methods and classes of a parsed module, with the names each calls."""

    def visit(node: ast.AST, prefix: str, in_class: bool) -> Iterator[Definition]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                qual = prefix + child.name
                if isinstance(child, ast.ClassDef):
                    kind = "class"
                else:
                    kind = "method" if in_class else "function"
                end = child.end_lineno or child.lineno
                calls = _called_names(child)
                yield Definition(child.name, qual, path, child.lineno, end, kind, calls)
                if isinstance(child, ast.ClassDef):
                    yield from visit(child, qual + ".", True)

    yield from visit(tree, "", False)


def calls_in_test(tree: ast.Module, function: str) -> frozenset[str]:
    """The names called in the body of test ``function`` (``test_x`` or ``Class::test_x``)."""
    parts = function.split("::")
    scope: list[ast.stmt] = tree.body
    for i, part in enumerate(parts):
        found = next(
            (
                n
                for n in scope
                if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                and n.name == part
            ),
            None,
        )
        if found is None:
            return frozenset()
        if i == len(parts) - 1:
            return _called_names(found)
        scope = found.body
    return frozenset()


def rank_suspects(
    failures: Iterable[Failure],
    calls_of: Mapping[str, frozenset[str]],
    definitions: Iterable[Definition],
) -> list[tuple[str, float, list[str]]]:
    """(name, score, reasons) of every suspect, best first (ties by name).

    ``calls_of`` maps a test id to the names its body calls.
    """
    by_name: dict[str, list[Definition]] = {}
    for d in definitions:
        by_name.setdefault(d.name, []).append(d)
    scores: dict[str, float] = {}
    reasons: dict[str, list[str]] = {}

    def add(name: str, points: float, why: str) -> None:
        scores[name] = scores.get(name, 0.0) + points
        reasons.setdefault(name, []).append(why)

    for failure in failures:
        short = failure.test.rsplit("::", 1)[-1].split("[", 1)[0]
        for name, defs in by_name.items():
            for file, line in failure.frames:
                if any(d.path == file and d.line <= line <= d.end_line for d in defs):
                    add(name, 3, f"{failure.test}: traceback passes {file}:{line}")
                    break
        target = short.removeprefix("test_")
        if target != short and target in by_name:
            add(target, 1, f"{failure.test}: named after it")
        direct = sorted(n for n in calls_of.get(failure.test, frozenset()) if n in by_name)
        for name in direct:
            add(name, 1, f"{failure.test}: calls it")
        below = {c for n in direct for d in by_name[n] for c in d.calls if c in by_name}
        for name in sorted(below - set(direct)):
            add(name, 0.5, f"{failure.test}: calls it through {', '.join(direct)}")
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(name, score, reasons[name]) for name, score in ranked[:_MAX]]
