"""Files uploaded for a domain's file inputs (``POST /api/uploads``).

An upload is a ``multipart/form-data`` request with one file in the field ``file``, sent
with the header ``X-Plansmith-Upload: 1`` (``_same_origin`` refuses a multipart POST
without it: a page of another site cannot send that header without a CORS preflight,
which this app never grants). It is stored under the home's ``uploads/`` as
``<sha256 prefix>/<name>``: the name is the file's own, stripped of any folder and of
every character but letters, digits, ``.``, ``_`` and ``-``; the same content with the
same name is the same file. A file larger than ``max_upload`` bytes is refused (413)
and nothing is kept; so is a request that does not say its length (411).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request

from plansmith.errors import InputError, Location
from plansmith.web._errors import RequestRefusedError

__all__ = ["UPLOADS", "UPLOAD_OPENAPI", "StoredUpload", "receive_upload", "safe_name"]

UPLOADS = "uploads"  # the folder of the home uploads are stored in
_FIELD = "file"
_CHUNK = 1 << 20
_MULTIPART_SLACK = 64 * 1024  # a request's bytes beyond its file: boundaries, headers
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

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
