"""The sources the research domain ships with, and the ``mcpServers`` entry of each.

The real corpus is Debian's Python documentation (package ``python3-doc``; HTML
under ``/usr/share/doc/python3/html``). The planted documents in ``planted/``
contradict it on purpose, to test the verifier; they are not documentation.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "DOMAIN_DIR",
    "DOMAIN_FILE",
    "PLANTED_DIR",
    "PYTHON_DOCS_ROOTS",
    "PYTHON_DOCS_EXCLUDES",
    "find_python_docs",
    "server_config",
]

DOMAIN_DIR = Path(__file__).resolve().parent
DOMAIN_FILE = DOMAIN_DIR / "domain.yaml"
PLANTED_DIR = DOMAIN_DIR / "planted"
#: where python3-doc puts the HTML (the first is a link to the versioned folder)
PYTHON_DOCS_ROOTS = (
    Path("/usr/share/doc/python3/html"),
    Path("/usr/share/doc/python3.11/html"),
    Path("/usr/share/doc/python3-doc/html"),
)
#: generated index pages: long lists of names that match every query
PYTHON_DOCS_EXCLUDES = ("genindex*.html", "py-modindex.html", "search.html")


def find_python_docs() -> Path | None:
    """The folder of the installed Python HTML documentation, or None."""
    for root in PYTHON_DOCS_ROOTS:
        if (root / "library" / "index.html").is_file():
            return root.resolve()
    return None


def server_config(
    sources: Mapping[str, str | Path],
    state_dir: str | Path,
    *,
    python: str | None = None,
    excludes: Mapping[str, tuple[str, ...]] | None = None,
) -> dict[str, object]:
    """The ``mcpServers`` object that starts one ``plansmith-corpus`` per source (name ->
    folder), each with its index and call log in ``state_dir``."""
    state = Path(state_dir).resolve()
    servers: dict[str, object] = {}
    for name, root in sources.items():
        args = ["-m", "plansmith.domains.research.corpus_server", "--source", name]
        args += ["--root", str(Path(root).resolve()), "--db", str(state / f"{name}.sqlite")]
        args += ["--log", str(state / f"{name}.calls.jsonl")]
        for glob in (excludes or {}).get(name, ()):
            args += ["--exclude", glob]
        servers[name] = {"command": python or sys.executable, "args": args}
    return {"mcpServers": servers}
