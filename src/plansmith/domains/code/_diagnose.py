"""parse_failures and report_diagnosis: the read-tier steps of the "diagnose" plan.

``parse_failures`` reads a test log of the session, parses its failures and
ranks the project symbols that may cause them (see ``_failures``); it reads the
failing test files and the project's Python files through the sandbox.
``report_diagnosis`` only formats what earlier steps found: it reads nothing.
"""

from __future__ import annotations

import ast

from plansmith.domains.code._errors import RefusedError
from plansmith.domains.code._failures import (
    Definition,
    Failure,
    calls_in_test,
    index_module,
    is_test_file,
    parse_log,
    rank_suspects,
)
from plansmith.domains.code._files import read_text
from plansmith.domains.code._paths import Sandbox
from plansmith.domains.code._redact import redact
from plansmith.domains.code._results import MAX_PAGE
from plansmith.domains.code._results_plan import (
    DiagnosisResult,
    FailureInfo,
    FailuresResult,
    Suspect,
)
from plansmith.domains.code._sessions import Session
from plansmith.domains.code._tools_read import MAX_SCAN_FILES, walk_files

__all__ = ["parse_failures", "report_diagnosis"]


def _parse(box: Sandbox, path: str) -> ast.Module | None:
    try:
        text, _ = read_text(box.resolve(path))
        return ast.parse(text, filename=path)
    except (RefusedError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _project_definitions(box: Sandbox) -> list[Definition]:
    found: list[Definition] = []
    for scanned, (_, relative) in enumerate(walk_files(box.resolve("."), "*.py")):
        if scanned >= MAX_SCAN_FILES:
            break
        if is_test_file(relative):
            continue
        tree = _parse(box, relative)
        if tree is not None:
            found.extend(index_module(tree, relative))
    return found


def parse_failures(session: Session, log_id: str | None) -> FailuresResult:
    """The failures of a test log (latest by default) and their ranked suspects."""
    if log_id is None:
        tests = [i for i in session.log_ids if i.startswith("test-")]
        log_id = tests[-1] if tests else None
    if log_id is None or log_id not in session.log_ids:
        raise RefusedError(
            "unknown_log",
            f"no test log {log_id!r} in this session",
            fix="call run_tests first, then pass its log_id",
        )
    text = (session.logs / f"{log_id}.log").read_text(encoding="utf-8")
    failures = parse_log(text)
    if not failures:
        raise RefusedError(
            "no_failures",
            f"the test run {log_id} has no failing test",
            fix="nothing to diagnose: the tests pass (or pytest printed no summary)",
        )
    box = session.sandbox
    calls: dict[str, frozenset[str]] = {}
    trees: dict[str, ast.Module | None] = {}
    for failure in failures:
        if failure.file not in trees:
            trees[failure.file] = _parse(box, failure.file)
        tree = trees[failure.file]
        calls[failure.test] = calls_in_test(tree, failure.function) if tree else frozenset()
    ranked = rank_suspects(failures, calls, _project_definitions(box))
    return FailuresResult(
        log_id=log_id,
        failures=[_info(f) for f in failures],
        suspects=[Suspect(name=n, score=s, reasons=r[:20]) for n, s, r in ranked],
        top_suspect=ranked[0][0] if ranked else "",
    )


def _info(failure: Failure) -> FailureInfo:
    return FailureInfo(
        test=failure.test,
        file=failure.file,
        message=redact(failure.message),
        frames=[f"{file}:{line}" for file, line in failure.frames],
    )


def report_diagnosis(
    *,
    failures: list[FailureInfo],
    suspects: list[Suspect],
    symbol: str,
    path: str,
    line: int,
    first_line: int,
    code: list[str],
) -> DiagnosisResult:
    """The diagnosis as Markdown: failing tests, the suspect, its code, the other suspects."""
    tests = [f.test for f in failures][:MAX_PAGE]
    out = [
        f"# Diagnosis: `{symbol}` in `{path}`",
        "",
        f"{len(failures)} failing test(s). The most likely cause is `{symbol}`, defined at "
        f"`{path}:{line}`.",
        "",
        "## Failing tests",
        "",
        *(f"- `{f.test}`: {f.message or '(no message)'}" for f in failures[:50]),
        "",
        f"## `{symbol}` ({path}, from line {first_line})",
        "",
        "```python",
        *code,
        "```",
        "",
        "## Suspects, best first",
        "",
        "| symbol | score | why |",
        "|---|---:|---|",
        *(f"| `{s.name}` | {s.score:g} | {'; '.join(s.reasons[:3])} |" for s in suspects[:10]),
    ]
    return DiagnosisResult(
        file=path,
        function=symbol,
        line=line,
        failing_tests=tests,
        report=redact("\n".join(out) + "\n"),
    )
