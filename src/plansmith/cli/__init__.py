"""The ``plansmith`` command line. Each command lives in its own module."""

from __future__ import annotations

from plansmith.cli._app import app

__all__ = ["app", "main"]


def _register() -> None:
    # Importing a command module registers its commands on ``app``.
    from plansmith.cli import _demo, _plan  # noqa: F401


def main() -> None:
    """Entry point of the ``plansmith`` console script."""
    _register()
    app()
