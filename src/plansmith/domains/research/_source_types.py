"""What kind of document a source holds, and whether a source folder can be read at all.

A source folder's type comes from its config, a file ``.plansmith-source.toml`` in the
folder holding ``type = "notes"`` (one of :data:`SOURCE_TYPES`), or else is inferred:
the installed Python documentation, or a folder named like ``docs``,
``documentation``, ``manual`` or ``reference``, is ``official docs``; a folder named like
``changelog``, ``changes``, ``news``, ``release-notes`` or ``whatsnew`` is a
``changelog``; like ``notes``, ``notes``; like ``blog`` or ``posts``, a ``blog``;
anything else ``unknown``. A document may narrow its folder's type: in official docs,
a page under ``whatsnew/`` or named ``changelog`` is the ``changelog``.

Types weigh evidence in the report (:data:`WEIGHTS`): when sources disagree, the value
backed by the weightiest type is named first, and every claim is labelled with its
source's type. The verifier's flag never depends on the type.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path

from plansmith.domains.research._documents import kind_of
from plansmith.domains.research._sources import find_python_docs
from plansmith.errors import InputError, Location

__all__ = [
    "CONFIG_FILE",
    "SOURCE_TYPES",
    "WEIGHTS",
    "folder_type",
    "document_type",
    "check_source_folder",
    "weight",
]

CONFIG_FILE = ".plansmith-source.toml"
SOURCE_TYPES = ("official docs", "changelog", "notes", "blog", "unknown")
#: how much a type weighs when sources disagree (higher: more authoritative)
WEIGHTS: Mapping[str, int] = {
    "official docs": 4,
    "changelog": 3,
    "notes": 2,
    "blog": 1,
    "unknown": 0,
}
_CHANGELOG = re.compile(r"changelog|changes|\bnews\b|release[-_ ]?notes|whatsnew|what'?s[-_ ]new")
_OFFICIAL = re.compile(r"docs\b|documentation|manual|reference|\bhtml$")
_NOTES = re.compile(r"notes?\b")
_BLOG = re.compile(r"blog|posts?\b")


def weight(source_type: str) -> int:
    return WEIGHTS.get(source_type, 0)


def _by_name(name: str) -> str | None:
    name = name.lower()
    if _OFFICIAL.search(name):
        return "official docs"
    if _CHANGELOG.search(name):
        return "changelog"
    if _BLOG.search(name):
        return "blog"
    if _NOTES.search(name):
        return "notes"
    return None


def folder_type(root: str | Path) -> str:
    """The type of the documents in ``root`` (see the module); ``InputError`` when its
    config names no known type."""
    folder = Path(root)
    config = folder / CONFIG_FILE
    if config.is_file():
        try:
            data = tomllib.loads(config.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise InputError(
                f"the source config cannot be read: {error}",
                location=Location(str(config)),
                hint='write it as TOML: type = "notes"',
            ) from None
        given = data.get("type")
        if given not in SOURCE_TYPES:
            raise InputError(
                f"the source config names the type {given!r}",
                location=Location(str(config)),
                hint=f"type is one of: {', '.join(SOURCE_TYPES)}",
            )
        return str(given)
    docs = find_python_docs()
    if docs is not None and folder.resolve() == docs:
        return "official docs"
    return _by_name(folder.resolve().name) or "unknown"


def document_type(folder: str, path: str) -> str:
    """The type of the document at ``path`` in a folder of type ``folder``."""
    if folder in ("official docs", "unknown") and _CHANGELOG.search(path.lower()):
        return "changelog"
    if folder == "unknown":
        return _by_name(Path(path).parent.as_posix()) or "unknown"
    return folder


def check_source_folder(name: str, root: str | Path) -> Path:
    """``root`` resolved, or an ``InputError`` (with a hint) when it is no folder or holds
    no document a corpus server reads (HTML, Markdown, text; hidden folders skipped)."""
    folder = Path(root).expanduser()
    if not folder.is_dir():
        raise InputError(
            f"source {name}: {folder} is not a folder",
            location=Location(argument="source"),
            hint="give a folder of Markdown, HTML or text files (NAME=DIR or DIR)",
        )
    try:
        for current, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
            for file in files:
                readable = not file.startswith(".") and kind_of(file) is not None
                if readable and os.access(Path(current) / file, os.R_OK):
                    return folder.resolve()
    except OSError as error:
        raise InputError(
            f"source {name}: {folder} cannot be read: {error}",
            location=Location(argument="source"),
            hint="check the folder's permissions",
        ) from None
    raise InputError(
        f"source {name}: {folder} holds nothing readable (no HTML, Markdown or text file)",
        location=Location(argument="source"),
        hint="point --source at a folder of .html, .md or .txt files",
    )
