"""``plansmith-lab``: start the lab server (``server.py``) with the lab venv's python.

The server runs in its own virtual environment (see ``_labenv``): this launcher runs in
plansmith's, finds that environment (``--lab-python PATH``, ``$PLANSMITH_LAB_PYTHON``,
``.venv-lab`` in a checkout, else the user cache directory, built there on first use
with its progress on stderr) and replaces itself with the server, which gets the other
arguments (``--role``, ``--robot``, ``--api-level``), with no ``PYTHONPATH``. stdout
stays the server's.
"""

from __future__ import annotations

import os
import sys

from plansmith.domains.lab._labenv import SERVER_SCRIPT, ensure_lab_python
from plansmith.errors import ServerStartError

__all__ = ["main"]


def _split(argv: list[str]) -> tuple[str | None, list[str]]:
    """``--lab-python PATH`` (or ``--lab-python=PATH``) out of ``argv``; the rest."""
    python: str | None = None
    rest: list[str] = []
    items = iter(argv)
    for item in items:
        if item == "--lab-python":
            python = next(items, None)
        elif item.startswith("--lab-python="):
            python = item.split("=", 1)[1]
        else:
            rest.append(item)
    return python, rest


def main(argv: list[str] | None = None) -> None:
    python, rest = _split(sys.argv[1:] if argv is None else argv)
    try:
        lab_python = ensure_lab_python(python, build=True)
    except ServerStartError as error:
        print(f"plansmith-lab: {error}", file=sys.stderr)
        raise SystemExit(error.exit_code) from None
    # the lab venv sees its own packages only: a PYTHONPATH made for plansmith's venv
    # (mcp 2.x among them) would shadow its pins (mcp 1.x, opentrons)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    os.execve(lab_python, [str(lab_python), str(SERVER_SCRIPT), *rest], env)


if __name__ == "__main__":
    main()
