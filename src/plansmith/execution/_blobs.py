"""The blob store: values too large for an event, in files named by their sha256."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
from pathlib import Path

from plansmith.errors import ExecutionError, Location

__all__ = ["BlobStore", "read_only_error"]

_DIGEST = re.compile(r"[0-9a-f]{64}")


class BlobStore:
    """Content-addressed files: ``ROOT/ab/cdef...`` named by the sha256 of their bytes.

    ``get`` checks the bytes against their name: a truncated or changed file is an
    ``ExecutionError``, never a value. ``put`` writes a file under a name of its own
    (process id and a random part) and renames it into place, so two engines writing the
    same blob at once do not mix their bytes, and a failed write leaves no file behind.
    """

    def __init__(self, root: Path, *, read_only: bool = False) -> None:
        self.root = root
        self.read_only = read_only

    def path(self, ref: str) -> Path:
        """The file of ``ref`` (``sha256:`` and 64 hex digits, else ``ExecutionError``)."""
        digest = ref.removeprefix("sha256:")
        if digest == ref or not _DIGEST.fullmatch(digest):
            raise ExecutionError(
                f"{ref[:80]!r} is not a blob reference (sha256: and 64 hex digits)",
                location=Location(str(self.root)),
                hint="the event that holds it is damaged; restore the run log from a backup",
            )
        return self.root / digest[:2] / digest[2:]

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        ref = f"sha256:{digest}"
        path = self.root / digest[:2] / digest[2:]
        if self.read_only:
            raise read_only_error(path)
        with contextlib.suppress(OSError):
            if path.stat().st_size == len(data):
                return ref  # there already (a damaged copy, of another size, is replaced)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "xb") as f:
                f.write(data)
            os.replace(tmp, path)
        except OSError as error:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise ExecutionError(
                f"cannot write blob {ref} to the blob store: {error.strerror or error}",
                location=Location(str(path)),
                hint=f"check the free space and permissions of {self.root}",
            ) from None
        return ref

    def get(self, ref: str) -> bytes:
        path = self.path(ref)
        try:
            data = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            raise ExecutionError(
                f"blob {ref} is missing from {self.root}",
                location=Location(str(path)),
                hint="the blob store keeps the values too large for an event; restore the"
                " file from a backup of the run log's home",
            ) from None
        except OSError as error:
            raise ExecutionError(
                f"cannot read blob {ref}: {error.strerror or error}",
                location=Location(str(path)),
                hint=f"check the permissions of {self.root}",
            ) from None
        if hashlib.sha256(data).hexdigest() != path.parent.name + path.name:
            raise ExecutionError(
                f"blob {ref} is damaged: its {len(data)} bytes are not the ones stored"
                " under that hash (truncated or changed)",
                location=Location(str(path)),
                hint="restore the file from a backup of the run log's home; the value it"
                " held cannot be read",
            )
        return data


def read_only_error(path: Path) -> ExecutionError:
    return ExecutionError(
        "the run log is open read-only",
        location=Location(str(path)),
        hint="open it without read_only to write runs",
    )
