"""Files uploaded for a domain's file inputs (``POST /api/uploads``).

An upload is a ``multipart/form-data`` request with one file in the field ``file``, sent
with the header ``X-Plansmith-Upload: 1`` (``_same_origin`` refuses a multipart POST
without it: a page of another site cannot send that header without a CORS preflight,
which this app never grants). It is stored under the home's ``uploads/`` as
``<sha256 prefix>/<name>``: the name is the file's own, stripped of any folder and of
every character but letters, digits, ``.``, ``_`` and ``-``; the same content with the
same name is the same file. A file larger than ``max_upload`` bytes is refused (413)
and nothing is kept; so is a request that does not say its length (411).

Uploads are pruned (``prune_uploads``): one not used for ``upload_keep_days`` (stored,
stored again, or named by a plan or run request: ``mark_used`` sets its time) is
deleted as the app starts and after each upload, and so is a partial file an
interrupted upload left for over a day.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request

from plansmith.errors import InputError, Location
from plansmith.web._errors import RequestRefusedError

__all__ = [
    "UPLOADS",
    "UPLOAD_OPENAPI",
    "StoredUpload",
    "receive_upload",
    "safe_name",
    "prune_uploads",
    "mark_used",
]

UPLOADS = "uploads"  # the folder of the home uploads are stored in
_FIELD = "file"
_CHUNK = 1 << 20
_MULTIPART_SLACK = 64 * 1024  # a request's bytes beyond its file: boundaries, headers
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_PART_KEEP_S = 86_400.0  # a partial file older than this was left by an interrupted upload

#: the request body in the OpenAPI schema (the operation reads the form itself, after
#: the same-origin and token checks, so that a refused upload is never read)
UPLOAD_OPENAPI: dict[str, Any] = {
    "parameters": [
        {
            "name": "X-Plansmith-Upload",
            "in": "header",
            "required": True,
            "schema": {"type": "string", "enum": ["1"]},
        }
    ],
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": [_FIELD],
                    "properties": {_FIELD: {"type": "string", "format": "binary"}},
                }
            }
        },
    },
}


@dataclass(frozen=True, slots=True)
class StoredUpload:
    path: Path
    size: int
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "name": self.path.name,
            "size": self.size,
            "sha256": self.sha256,
        }


def safe_name(filename: str | None) -> str:
    """The file's own name without folders, in letters, digits and ``._-`` (at most 100
    characters, no leading dot); ``upload`` when nothing is left."""
    base = PurePosixPath((filename or "").replace("\\", "/")).name
    name = _UNSAFE.sub("_", base).lstrip(".")[-100:].lstrip(".")
    return name or "upload"


def _too_large(limit: int) -> RequestRefusedError:
    return RequestRefusedError(
        413,
        "UploadTooLargeError",
        f"the upload is larger than {limit} bytes",
        location="body.file",
        hint="upload a smaller file, or start the server with a larger max_upload",
    )


def _check_length(request: Request, limit: int) -> None:
    content_type = request.headers.get("content-type", "")
    if content_type.split(";", 1)[0].strip().lower() != "multipart/form-data":
        raise RequestRefusedError(
            415,
            "UnsupportedMediaTypeError",
            f"an upload must be sent as multipart/form-data (Content-Type: {content_type!r})",
            location="header.content-type",
            hint="send the file in the field 'file' of a multipart/form-data body",
        )
    length = request.headers.get("content-length", "")
    if not length.isdigit():
        raise RequestRefusedError(
            411,
            "LengthRequiredError",
            "an upload must state its length (Content-Length)",
            location="header.content-length",
            hint="send the file as multipart/form-data with a Content-Length header",
        )
    if int(length) > limit + _MULTIPART_SLACK:
        raise _too_large(limit)


async def _store(file: UploadFile, folder: Path, limit: int) -> StoredUpload:
    folder.mkdir(parents=True, exist_ok=True)
    part = folder / f".part-{secrets.token_hex(8)}"
    digest, size = hashlib.sha256(), 0
    try:
        with part.open("wb") as out:
            while chunk := await file.read(_CHUNK):
                size += len(chunk)
                if size > limit:
                    raise _too_large(limit)
                digest.update(chunk)
                out.write(chunk)
        hexdigest = digest.hexdigest()
        target = (folder / hexdigest[:16] / safe_name(file.filename)).resolve()
        if not target.is_relative_to(folder.resolve()):  # never: the name has no folder
            raise InputError("the upload's name leaves the uploads folder")
        target.parent.mkdir(exist_ok=True)
        os.replace(part, target)  # the same content and name: the same file, whole
        os.utime(target)  # used now (a file stored again keeps its place for as long)
    finally:
        with contextlib.suppress(FileNotFoundError):
            part.unlink()
    return StoredUpload(target, size, hexdigest)


async def receive_upload(request: Request, folder: Path, limit: int) -> StoredUpload:
    """Store the request's one file under ``folder`` (see the module docstring)."""
    _check_length(request, limit)
    async with request.form(max_files=1, max_fields=0) as form:
        file = form.get(_FIELD)
        if not isinstance(file, UploadFile):
            raise InputError(
                f"the upload has no file in its field {_FIELD!r}",
                location=Location(argument=_FIELD),
                hint=f"send multipart/form-data with the file in the field {_FIELD!r}",
            )
        return await _store(file, folder, limit)


def mark_used(folder: Path, paths: Iterable[str | Path]) -> None:
    """Set the time of each of ``paths`` that is an upload under ``folder`` to now: a plan
    or run request that names an upload keeps it from being pruned for as long again."""
    root = folder.resolve()
    for path in paths:
        try:
            resolved = Path(path).resolve()
        except (OSError, RuntimeError):  # a name no file system can resolve: no upload
            continue
        if resolved.is_relative_to(root) and resolved.is_file():
            with contextlib.suppress(OSError):
                os.utime(resolved)


def prune_uploads(folder: Path, keep_s: float, now: float) -> int:
    """Delete the uploads under ``folder`` not used for ``keep_s`` seconds before ``now``
    (``time.time()``), the partial files older than a day, and the prefix folders left
    empty; the number of files deleted. ``keep_s`` 0 or less keeps every upload."""
    if not folder.is_dir():
        return 0
    deleted = 0
    for prefix in folder.iterdir():
        if not prefix.is_dir() or prefix.is_symlink():
            deleted += (
                _prune_file(prefix, _PART_KEEP_S, now) if prefix.name.startswith(".part-") else 0
            )
            continue
        for file in prefix.iterdir():
            if keep_s > 0 and file.is_file() and not file.is_symlink():
                deleted += _prune_file(file, keep_s, now)
        with contextlib.suppress(OSError):  # not empty: kept
            prefix.rmdir()
    return deleted


def _prune_file(file: Path, keep_s: float, now: float) -> int:
    try:
        if now - file.stat().st_mtime > keep_s:
            file.unlink()
            return 1
    except FileNotFoundError:  # deleted meanwhile (another request's prune)
        pass
    return 0
