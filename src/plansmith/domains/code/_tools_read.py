"""Read tier: read a file, list a directory, search text, page build logs.

Every text is redacted as a whole before it is paged or searched, so secrets
cannot be rebuilt from pages or from search hits. Directory walks never follow
symbolic links and never enter ``.git``; folders are opened beneath their root
(:mod:`~plansmith.domains.code._beneath`) and walked with :func:`os.fwalk`.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from plansmith.domains.code._beneath import open_beneath, stat_beneath
from plansmith.domains.code._errors import RefusedError
from plansmith.domains.code._files import read_text, sha256
from plansmith.domains.code._paths import Resolved, Sandbox
from plansmith.domains.code._redact import redact
from plansmith.domains.code._results import (
    BuildLogsResult,
    Entry,
    ListDirectoryResult,
    LogInfo,
    ReadFileResult,
    SearchMatch,
    SearchResult,
    page,
)
from plansmith.domains.code._sessions import Session

__all__ = [
    "read_file",
    "list_directory",
    "search_in_files",
    "get_build_logs",
    "walk_files",
    "list_names",
    "MAX_SCAN_FILES",
]

MAX_SCAN_FILES = 20_000
MAX_LINE_CHARS = 400
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".ruff_cache"})


def read_file(box: Sandbox, path: str, offset: int, limit: int) -> ReadFileResult:
    target = box.resolve(path)
    text, data = read_text(target)
    lines = redact(text).splitlines()
    chunk, following = page(lines, offset, limit)
    return ReadFileResult(
        path=target.relative,
        offset=offset,
        next_offset=following,
        first_line=offset + 1,
        lines=chunk,
        total_lines=len(lines),
        bytes=len(data),
        sha256=sha256(data),
    )


def _entry(folder: int, name: str) -> Entry:
    shown = redact(name)
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except OSError:
        return Entry(name=shown, kind="other", size=None)
    if stat.S_ISLNK(info.st_mode):
        return Entry(name=shown, kind="symlink", size=None)
    if stat.S_ISDIR(info.st_mode):
        return Entry(name=shown, kind="directory", size=None)
    kind = "file" if stat.S_ISREG(info.st_mode) else "other"
    return Entry(name=shown, kind=kind, size=info.st_size)


def _open_folder(target: Resolved) -> int | None:
    """A descriptor of the folder ``target`` (reached beneath its root), or None."""
    try:
        return open_beneath(target, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            return None
        raise


def list_names(target: Resolved) -> list[str] | None:
    """The names in the folder ``target`` (sorted, without VCS folders), or None."""
    try:
        folder = _open_folder(target)
    except RefusedError as error:
        if error.code == "symlink_loop":
            return None
        raise
    if folder is None:
        return None
    try:
        return sorted(n for n in os.listdir(folder) if n not in SKIP_DIRS)
    finally:
        os.close(folder)


def list_directory(box: Sandbox, path: str, offset: int, limit: int) -> ListDirectoryResult:
    target = box.resolve(path)
    folder = _open_folder(target)
    if folder is None:
        raise RefusedError(
            "not_a_directory",
            f"{target.relative} is not a directory",
            fix="use read_file for files",
            path=target.relative,
        )
    try:
        names = sorted(n for n in os.listdir(folder) if n not in SKIP_DIRS)
        chunk, following = page(names, offset, limit)
        entries = [_entry(folder, n) for n in chunk]
    finally:
        os.close(folder)
    return ListDirectoryResult(
        path=target.relative,
        offset=offset,
        next_offset=following,
        entries=entries,
        total=len(names),
    )


def walk_files(target: Resolved, pattern: str | None = None) -> Iterator[tuple[Path, str]]:
    """Regular files under ``target`` (sorted; no symlinks, no VCS folders): path and relative.

    Refuses a ``target`` that does not exist (``not_found``).
    """
    info = stat_beneath(target)
    if info is None:
        raise RefusedError(
            "not_found",
            f"no such file or folder: {target.relative}",
            fix="list_directory shows what exists",
            path=target.relative,
        )
    if stat.S_ISREG(info.st_mode):
        yield target.path, target.relative
        return
    top = _open_folder(target) if stat.S_ISDIR(info.st_mode) else None
    if top is None:
        return
    try:
        for folder, dirs, files, folder_fd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            for name in sorted(files):
                try:
                    entry = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
                except OSError:
                    continue
                if not stat.S_ISREG(entry.st_mode):
                    continue
                inner = os.path.normpath(os.path.join(folder, name))
                relative = inner if target.relative == "." else f"{target.relative}/{inner}"
                if (
                    pattern is None
                    or fnmatch.fnmatch(relative, pattern)
                    or fnmatch.fnmatch(name, pattern)
                ):
                    yield target.path / inner, relative
    finally:
        os.close(top)


def _compile(pattern: str, regex: bool, case_sensitive: bool) -> re.Pattern[str]:
    flags = 0 if case_sensitive else re.IGNORECASE
    try:
        return re.compile(pattern if regex else re.escape(pattern), flags)
    except re.error as error:
        raise RefusedError(
            "invalid_regex",
            f"the pattern is not a valid regular expression: {error}",
            fix="escape special characters, or pass regex=false",
        ) from None


def search_in_files(
    box: Sandbox,
    *,
    pattern: str,
    path: str,
    glob: str | None,
    regex: bool,
    case_sensitive: bool,
    offset: int,
    limit: int,
) -> SearchResult:
    target = box.resolve(path)
    matcher = _compile(pattern, regex, case_sensitive)
    wanted = offset + limit + 1
    found: list[SearchMatch] = []
    scanned = 0
    complete = True
    for full, relative in walk_files(target, glob):
        if scanned >= MAX_SCAN_FILES:
            complete = False
            break
        scanned += 1
        try:
            text, _ = read_text(Resolved(full, target.root, relative, target.writable))
        except RefusedError:
            continue  # binary, too large, unreadable: not searched
        for number, line in enumerate(redact(text).splitlines(), 1):
            if matcher.search(line[:4096]):
                found.append(SearchMatch(path=relative, line=number, text=line[:MAX_LINE_CHARS]))
        if len(found) >= wanted:
            complete = False
            break
    chunk, following = page(found, offset, limit)
    return SearchResult(
        pattern=pattern,
        offset=offset,
        next_offset=following,
        matches=chunk,
        files_scanned=scanned,
        complete=complete,
    )


def get_build_logs(
    session: Session, log_id: str | None, offset: int, limit: int
) -> BuildLogsResult:
    available = []
    for known in session.log_ids:
        count = len((session.logs / f"{known}.log").read_text(encoding="utf-8").splitlines())
        available.append(LogInfo(log_id=known, lines=count))
    if log_id is None:
        log_id = session.log_ids[-1] if session.log_ids else None
    elif log_id not in session.log_ids:
        raise RefusedError(
            "unknown_log",
            f"no log {log_id!r} in this session",
            fix="call without log_id for the latest, or pick one from 'available'",
        )
    lines: list[str] = []
    if log_id is not None:
        lines = (session.logs / f"{log_id}.log").read_text(encoding="utf-8").splitlines()
    chunk, following = page(lines, offset, limit)
    return BuildLogsResult(
        log_id=log_id,
        offset=offset,
        next_offset=following,
        lines=chunk,
        total_lines=len(lines),
        available=available,
    )
