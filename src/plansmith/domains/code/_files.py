"""Reading and writing files inside the sandbox: size limits, binary refusal, no symlink races.

Files are reached with :func:`~plansmith.domains.code._beneath.beneath`, from a
descriptor of the root, so a folder swapped for a link after the check is not
walked through.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from contextlib import suppress

from plansmith.domains.code._beneath import beneath, open_beneath
from plansmith.domains.code._errors import RefusedError, os_failure
from plansmith.domains.code._paths import Resolved

__all__ = ["MAX_READ_BYTES", "MAX_WRITE_BYTES", "read_bytes", "read_text", "write_bytes", "sha256"]

MAX_READ_BYTES = 8 * 1024 * 1024
MAX_WRITE_BYTES = 1024 * 1024


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def read_bytes(target: Resolved) -> bytes:
    """The bytes of a regular file, reached beneath its root without following a link out."""
    try:
        fd = open_beneath(target, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise RefusedError(
            "not_found",
            f"no such file: {target.relative}",
            fix="list_directory shows what exists",
            path=target.relative,
        ) from None
    except OSError as error:
        raise RefusedError(
            "unreadable",
            f"cannot open {target.relative}: {error.strerror}",
            fix="pick another file",
            path=target.relative,
        ) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise RefusedError(
                "not_a_file",
                f"{target.relative} is {kind}",
                fix="use list_directory for folders",
                path=target.relative,
            )
        if info.st_size > MAX_READ_BYTES:
            raise RefusedError(
                "file_too_large",
                f"{target.relative} has {info.st_size} bytes, more than {MAX_READ_BYTES}",
                fix="search_in_files finds the part you need",
                path=target.relative,
            )
        return handle.read(MAX_READ_BYTES + 1)


def read_text(target: Resolved) -> tuple[str, bytes]:
    """The text of a file (UTF-8, invalid bytes replaced) and its bytes; binary files refused."""
    data = read_bytes(target)
    if b"\x00" in data[:8192]:
        raise RefusedError(
            "binary_file",
            f"{target.relative} looks binary",
            fix="only text files are served",
            path=target.relative,
        )
    return data.decode("utf-8", errors="replace"), data


def write_bytes(target: Resolved, data: bytes) -> bool:
    """Replace (or create) the file atomically; returns whether it was created.

    A file system error the caller can act on (a folder on the way removed or replaced
    while the call runs, no permission, a full disk) is a typed refusal (``os_failure``).
    """
    if len(data) > MAX_WRITE_BYTES:
        raise RefusedError(
            "content_too_large",
            f"{len(data)} bytes is more than the {MAX_WRITE_BYTES} a write may carry",
            fix="split the change into edit_file calls",
            path=target.relative,
        )
    try:
        return _replace(target, data)
    except OSError as error:  # a link loop, a folder removed or replaced meanwhile, ...
        failure = os_failure(error, target.relative)
        if failure is None:
            raise
        raise failure from None


def _replace(target: Resolved, data: bytes) -> bool:
    with beneath(target, make_folders=True) as (folder, name):
        try:
            info: os.stat_result | None = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise RefusedError(
                "not_a_file",
                f"{target.relative} is a directory",
                fix="name a file",
                path=target.relative,
            )
        regular = info is not None and stat.S_ISREG(info.st_mode)
        mode = stat.S_IMODE(info.st_mode) if info is not None and regular else 0o644
        temp = f".plansmith-{secrets.token_hex(6)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temp, flags, mode, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        finally:
            with suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=folder)
    return info is None
