"""The structured results of the tools (each tool's ``outputSchema``) and the paging rule.

Every tool that returns lines or entries pages them: at most :data:`MAX_PAGE`
(200) per call, from ``offset``; ``next_offset`` is the offset of the next page,
or null when there is none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, TypeVar

from pydantic import BaseModel, Field

__all__ = [
    "MAX_PAGE",
    "Limit",
    "Offset",
    "page",
    "ReadFileResult",
    "Entry",
    "ListDirectoryResult",
    "SearchMatch",
    "SearchResult",
    "SymbolMatch",
    "SymbolResult",
    "Dependency",
    "DependenciesResult",
    "DiffResult",
    "LogInfo",
    "BuildLogsResult",
    "WriteResult",
    "EditResult",
    "BranchResult",
    "CommitResult",
    "RunResult",
]

MAX_PAGE = 200
T = TypeVar("T")

Limit = Annotated[int, Field(ge=1, le=MAX_PAGE, description=f"at most {MAX_PAGE} per call")]
Offset = Annotated[int, Field(ge=0, le=100_000_000, description="how many to skip")]


def page(items: Sequence[T], offset: int, limit: int) -> tuple[list[T], int | None]:
    """``items[offset:offset+limit]`` (limit capped at MAX_PAGE) and the next offset."""
    limit = max(1, min(limit, MAX_PAGE))
    chunk = list(items[offset : offset + limit])
    end = offset + len(chunk)
    return chunk, (end if end < len(items) else None)


class _Paged(BaseModel):
    offset: int
    next_offset: int | None = Field(
        description="pass as offset to get the next page; null at the end"
    )


class ReadFileResult(_Paged):
    path: str = Field(description="relative to its root (the worktree)")
    first_line: int = Field(description="1-based number of lines[0]")
    lines: list[str]
    total_lines: int
    bytes: int
    sha256: str = Field(description="of the file's bytes on disk")


class Entry(BaseModel):
    name: str
    kind: str = Field(description="file, directory, symlink or other")
    size: int | None


class ListDirectoryResult(_Paged):
    path: str
    entries: list[Entry]
    total: int


class SearchMatch(BaseModel):
    path: str
    line: int
    text: str


class SearchResult(_Paged):
    pattern: str
    matches: list[SearchMatch]
    files_scanned: int
    complete: bool = Field(description="false when the scan stopped at its file budget")


class SymbolMatch(BaseModel):
    path: str
    line: int
    end_line: int
    offset: int = Field(description="line - 1: read_file's offset of the definition's first line")
    kind: str = Field(description="class, function, method, variable or pattern")
    qualname: str
    language: str
    signature: str


class SymbolResult(_Paged):
    name: str
    matches: list[SymbolMatch]
    files_scanned: int


class Dependency(BaseModel):
    name: str
    spec: str
    group: str = Field(description="runtime, build, an extra's name, or a dependency group")
    source: str


class DependenciesResult(BaseModel):
    sources: list[str]
    dependencies: list[Dependency] = Field(description=f"at most {MAX_PAGE}")
    notes: list[str]


class DiffResult(_Paged):
    base: str
    lines: list[str]
    total_lines: int
    files: list[str] = Field(
        description=f"changed tracked files ('STATUS\\tpath'), {MAX_PAGE} at most"
    )
    untracked: list[str] = Field(description=f"untracked files, {MAX_PAGE} at most")


class LogInfo(BaseModel):
    log_id: str
    lines: int


class BuildLogsResult(_Paged):
    log_id: str | None
    lines: list[str]
    total_lines: int
    available: list[LogInfo]


class WriteResult(BaseModel):
    path: str
    bytes: int
    sha256: str
    created: bool


class EditResult(BaseModel):
    path: str
    replacements: int
    first_line: int = Field(description="1-based line of the first replacement")
    sha256: str


class BranchResult(BaseModel):
    branch: str
    commit: str
    start_point: str


class CommitResult(BaseModel):
    commit: str
    branch: str | None
    message: str
    files: list[str] = Field(description=f"the files the commit changed, {MAX_PAGE} at most")


class RunResult(BaseModel):
    kind: str = Field(description="test or build")
    argv: list[str] = Field(description="the configured command, then the validated selectors")
    exit_code: int
    passed: bool
    duration_s: float
    counts: dict[str, int] = Field(description="pytest's summary counts when it printed them")
    failures: list[str] = Field(
        description=f"failing test ids (pytest 'FAILED' / 'ERROR' lines), {MAX_PAGE} at most"
    )
    log_id: str = Field(description="the whole output, paged by get_build_logs")
    tail: list[str] = Field(description="the last lines of the output")
