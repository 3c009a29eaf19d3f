"""Research sources as the faces name them: ``DIR`` or ``NAME=DIR``."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from plansmith.domains.research import (
    PYTHON_DOCS_EXCLUDES,
    check_source_folder,
    find_python_docs,
)
from plansmith.errors import InputError

__all__ = ["sources_from_specs", "excludes_for", "default_source_specs"]


def sources_from_specs(specs: Iterable[str], *, base: Path | None = None) -> dict[str, Path]:
    """``NAME=DIR`` or ``DIR`` (named after the folder; python3-doc's is ``python-docs``);
    relative folders are taken from ``base`` (default: the working folder)."""
    docs = find_python_docs()
    out: dict[str, Path] = {}
    for text in specs:
        name, _, folder = text.rpartition("=") if "=" in text else ("", "", text)
        root = Path(folder).expanduser()
        if base is not None and not root.is_absolute():
            root = base / root
        if not root.is_dir():
            raise InputError(
                f"source {text}: no such folder",
                hint="give a folder of Markdown, HTML or text files (NAME=DIR or DIR)",
            )
        root = check_source_folder(text, root)  # holds something readable
        if not name:
            name = "python-docs" if docs is not None and root == docs else root.name
        name = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "source"
        if name in out:
            raise InputError(
                f"two sources are named {name!r}",
                hint="name them: NAME=DIR",
            )
        out[name] = root
    return out


def excludes_for(sources: Mapping[str, Path]) -> dict[str, tuple[str, ...]]:
    """Leave out python3-doc's generated index pages when it is one of the sources."""
    docs = find_python_docs()
    return {name: PYTHON_DOCS_EXCLUDES for name, root in sources.items() if root == docs}


def default_source_specs() -> list[str]:
    """The sources research answers over when none is given: Debian's Python
    documentation where installed (``python3-doc``), else none."""
    docs = find_python_docs()
    return [f"python-docs={docs}"] if docs is not None else []
