"""Run journals: the append-only write-ahead record of a SQLite run log's newest events.

``SqliteRunLog.flush`` makes a step's events durable by appending them to the run's
journal, ``DIR/journal/NAME.jsonl`` beside ``DIR/runs.db``. The writer maps the file
into memory (``MAP_SHARED``) over space it has filled with zeros ahead of time
(``RESERVE_BYTES`` at a time, one ``pwrite``), and a flush copies its lines into the
mapping: the bytes are in the kernel's page cache as soon as they are copied, so they
survive a SIGKILL of the engine as a ``write`` would (the same durability as a SQLite
commit in WAL mode with ``synchronous=NORMAL`` against a process crash), without a
system call a step. Where the file cannot be mapped, each flush is one ``pwrite``.
Closing the writer cuts the file back to its lines. The rows reach SQLite later, in
batches; see ``SqliteRunLog``.

One line per event, a JSON object whose ``body`` is the event's JSON exactly as in the
``events`` table::

    {"run_id":"r-1","seq":7,"type":"StepSucceeded","body":{"type":"StepSucceeded",...}}

A line is complete only with its newline: a reader ignores a last line without one (a
write torn by a crash), so what it returns is always a run of whole lines from the
start of the file. The space reserved ahead is zeros, and JSON text never holds a zero
byte: a reader ignores the line where the zeros begin and everything after it, as long
as no complete line follows there (a live writer's line being copied, or what a killed
writer left). A complete line it cannot parse is damage, not a crash's leftover (each
flush writes whole lines, and a failed write is cut off again): an ``ExecutionError``
at ``FILE:LINE``, rather than the silent loss of every later line. ``NAME`` is the run
id when it is made of ``[A-Za-z0-9_-]``, else the run id with every other byte written
as ``%XX``, or (when that is longer than 200 bytes) its sha256 and ``.sha256``: one name
per run id, and no two run ids share one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import re
from pathlib import Path
from typing import NamedTuple

from plansmith.errors import ExecutionError, Location

__all__ = [
    "JOURNAL_DIR",
    "RESERVE_BYTES",
    "JournalRow",
    "JournalWriter",
    "journal_name",
    "journal_path",
    "journal_line",
    "read_journal",
]

JOURNAL_DIR = "journal"
_PLAIN = re.compile(r"[A-Za-z0-9_-]+")
_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_BODY = ',"body":'
_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)  # not O_APPEND: mapped
RESERVE_BYTES = 128 * 1024  # zeros written ahead of the lines, then mapped
_ZEROS = bytes(RESERVE_BYTES)


def journal_name(run_id: str) -> str:
    """The journal's file name for ``run_id`` (see the module docstring)."""
    if _PLAIN.fullmatch(run_id) and len(run_id) <= 200:
        return run_id + ".jsonl"
    raw = run_id.encode("utf-8", "surrogatepass")
    escaped = "".join(chr(b) if b in _SAFE else f"%{b:02X}" for b in raw)
    if len(escaped) <= 200:
        return escaped + ".jsonl"
    return hashlib.sha256(raw).hexdigest() + ".sha256.jsonl"


def journal_path(db: Path, run_id: str) -> Path:
    """Where the run log ``db`` (``DIR/runs.db``) keeps the journal of ``run_id``."""
    return db.parent / JOURNAL_DIR / journal_name(run_id)


def journal_line(run_json: str, seq: int, kind: str, body: str) -> str:
    """One journal line; ``run_json`` is the run id as a JSON string."""
    return f'{{"run_id":{run_json},"seq":{seq},"type":"{kind}","body":{body}}}\n'


class JournalRow(NamedTuple):
    run_id: str
    seq: int
    type: str
    body: str  # the text of the events table's body


def _row(line: bytes) -> JournalRow | None:
    """The row of one complete line, or None when it is not one this module wrote."""
    try:
        text = line.decode("utf-8")
        at = text.find(_BODY)
        if at < 0 or not text.endswith("}"):
            return None
        head = json.loads(text[:at] + "}")
        body = text[at + len(_BODY) : -1]
        json.loads(body)  # a whole JSON value, not bytes left by a crash
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(head, dict):
        return None
    run_id, seq, kind = head.get("run_id"), head.get("seq"), head.get("type")
    if not isinstance(run_id, str) or type(seq) is not int or not isinstance(kind, str):
        return None
    return JournalRow(run_id, seq, kind, body)


def _without_reserve(data: bytes) -> bytes:
    """``data`` up to the line where the zeros a writer reserves begin, when no complete
    line follows them (see the module docstring); else ``data`` as it is, and the
    reader finds the damage."""
    zero = data.find(0)
    if zero < 0:
        return data
    start = data.rfind(b"\n", 0, zero) + 1
    rest = data[start:].rstrip(b"\0")
    if rest.find(b"\n", 0, len(rest) - 1) >= 0:
        return data  # a complete line after the zeros: damage, not a writer's leftover
    return data[:start]


def read_journal(path: Path) -> list[JournalRow]:
    """The rows of the whole lines of the journal at ``path``, a torn last line left out
    ([] when there is no such file). Raises ``ExecutionError`` if it cannot be read, or
    at the first complete line that is not a row (see the module docstring)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return []
    except OSError as error:
        raise ExecutionError(
            f"cannot read the run journal: {error.strerror or error}", location=Location(str(path))
        ) from None
    rows: list[JournalRow] = []
    data = _without_reserve(data)
    for number, line in enumerate(data.split(b"\n")[:-1], 1):  # the last: torn or empty
        row = _row(line)
        if row is None:
            raise ExecutionError(
                f"line {number} of the run journal cannot be read: it is not an event"
                f" row ({len(line)} bytes: {line[:40]!r})",
                location=Location(str(path), number),
                hint="the journal is damaged (a complete line, so no crash left it): restore"
                " it from a backup, or move it aside to use the run log without the events"
                " it holds; until then its run cannot be shown, replayed or resumed",
            )
        rows.append(row)
    return rows


class JournalWriter:
    """The journal of one run, open for appending: its lines are copied into the file
    mapped over zeros written ahead (see the module docstring), or written with one
    ``pwrite`` each where it cannot be mapped."""

    __slots__ = ("end", "fd", "head", "last", "map", "path", "run_json", "size")

    def __init__(self, path: Path, run_id: str, *, last: int = 0) -> None:
        self.path = path
        self.run_json = json.dumps(run_id)
        self.head = f'{{"run_id":{self.run_json},"seq":'  # how each of its lines begins
        self.last = last  # the seq of the run's last durable event
        self.map: mmap.mmap | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.fd = os.open(path, _FLAGS, 0o644)
            self.size = os.fstat(self.fd).st_size  # where the next line goes
        except OSError as error:
            raise self._error("open", error) from None
        # a file with lines already (never made so by the log, which imports a killed
        # engine's journal and removes it first) is appended to with ``pwrite``
        self.end = -1 if self.size else 0  # the end of the mapped space; -1: not mapped

    def _error(self, what: str, error: OSError) -> ExecutionError:
        return ExecutionError(
            f"cannot {what} the run journal: {error.strerror or error}",
            location=Location(str(self.path)),
            hint="check the free space and permissions of the run log's directory",
        )

    def write(self, data: bytes) -> None:
        """Append ``data`` (whole lines). A failed write is cut off again, so that the
        journal never holds half a line before later ones."""
        size = self.size
        new = size + len(data)
        if new > self.end:  # always, when not mapped (``end`` -1)
            self._reserve(new)
        mapped = self.map
        if mapped is None:
            self._pwrite(data)
            return
        mapped[size:new] = data
        self.size = new

    def _reserve(self, new: int) -> None:
        """Make the mapped space reach past ``new`` bytes: zeros written after it, and
        the file mapped again. Where the file cannot be mapped, the writer goes on with
        ``pwrite`` (``end`` stays -1)."""
        if self.end < 0:
            return
        end = self.end
        try:
            while end < new:
                if os.pwrite(self.fd, _ZEROS, end) < RESERVE_BYTES:  # the disk is full
                    raise OSError(28, os.strerror(28))  # ENOSPC
                end += RESERVE_BYTES
        except OSError as error:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, max(self.end, self.size))
            raise self._error("write", error) from None
        try:
            mapped = mmap.mmap(self.fd, end, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except (OSError, ValueError):  # a filesystem that cannot map files
            self._unmap()
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, self.size)
            self.end = -1
            return
        self._unmap()
        self.map, self.end = mapped, end

    def _pwrite(self, data: bytes) -> None:
        try:
            written = os.pwrite(self.fd, data, self.size)
            while written < len(data):  # only when the disk is full or on a signal
                more = os.pwrite(self.fd, data[written:], self.size + written)
                if more == 0:
                    raise OSError(28, os.strerror(28))  # ENOSPC
                written += more
        except OSError as error:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, self.size)
            raise self._error("write", error) from None
        self.size += written

    def _unmap(self) -> None:
        mapped, self.map = self.map, None
        if mapped is not None:
            mapped.close()

    def rotate(self) -> None:
        """Go on in a new, empty file at ``path`` (every row so far is in SQLite): one
        ``rename`` over the old file, so a reader opens either the whole old file or the
        new one. Left as it is when ``path`` no longer names this file."""
        if not self.is_at_path():
            return
        fresh = self.path.with_name(self.path.name + ".new")
        try:
            fd = os.open(fresh, _FLAGS | os.O_TRUNC, 0o644)
            try:
                os.rename(fresh, self.path)
            except OSError:
                os.close(fd)
                raise
        except OSError as error:
            raise self._error("renew", error) from None
        self._unmap()
        old, self.fd, self.size = self.fd, fd, 0
        self.end = 0 if self.end >= 0 else -1
        os.close(old)

    def is_at_path(self) -> bool:
        """True while ``path`` names this file (no other engine has imported and
        removed it, nor made a new one there)."""
        try:
            here, there = os.fstat(self.fd), os.stat(self.path)
        except OSError:
            return False
        return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)

    def remove(self) -> None:
        """Delete the file (if it is still this one) and close it."""
        try:
            if self.is_at_path():
                self.path.unlink(missing_ok=True)
        finally:
            self.close(cut=False)

    def close(self, *, cut: bool = True) -> None:
        """Close the file, cut back to its lines (``cut``: the zeros reserved after them
        dropped)."""
        if self.fd >= 0:
            self._unmap()
            fd, self.fd = self.fd, -1
            try:
                if cut and self.end > self.size:
                    with contextlib.suppress(OSError):
                        os.ftruncate(fd, self.size)
            finally:
                os.close(fd)
