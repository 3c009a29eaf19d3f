"""The ``plansmith`` command line. Each command lives in its own module.

Only the module of the command being run is imported, so that a command does not
pay for the web, MCP and run faces it does not use.
"""

from __future__ import annotations

import sys

# Not ``typing.TYPE_CHECKING``: importing typing (and collections.abc) would cost
# every ``plansmith plan`` more than handing it over to a plan server does.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from plansmith.cli._app import app

__all__ = ["app", "main", "version_line"]


def __getattr__(name: str) -> object:
    """``app``, imported on first use (PEP 562)."""
    from plansmith._lazy import lazy_exports

    return lazy_exports(__name__, {"plansmith.cli._app": ("app",)})(name)


# command name -> the module that defines it
COMMAND_MODULES = {
    "plan": "_plan",
    "validate": "_plan",
    "explain": "_plan",
    "demo": "_demo",
    "check": "_check",
    "tools": "_tools",
    "init": "_init",
    "domains": "_domains",
    "run": "_run",
    "resume": "_run",
    "replay": "_run",
    "runs": "_show",
    "stats": "_stats",
    "show": "_show",
    "retry": "_retry",
    "approve": "_retry",
    "answer": "_retry",
    "mcp": "_mcp",
    "serve": "_serve",
    "research": "_research",
    "plan-server": "_plan_server",
}


def _register(argv: Sequence[str] | None = None) -> None:
    """Import the command modules (each registers its commands on ``app``).

    With ``argv`` naming a known command, only that command's module is imported.
    """
    import importlib

    name = argv[1] if argv is not None and len(argv) > 1 else ""
    known = name in COMMAND_MODULES
    modules = {COMMAND_MODULES[name]} if known else set(COMMAND_MODULES.values())
    for module in sorted(modules):
        importlib.import_module(f"plansmith.cli.{module}")


def version_line() -> str:
    """What ``plansmith --version`` prints."""
    from plansmith import __version__

    return f"plansmith {__version__}"


def main() -> None:
    """Entry point of the ``plansmith`` console script.

    ``plansmith plan`` runs without Typer (see ``_plan_command``); every other command
    goes through the Typer app with only its own module imported.
    """
    if sys.argv[1:2] == ["plan"]:
        from plansmith.cli._plan_client import hand_over

        # A plan server of this user (`plansmith plan-server start`) runs it in a
        # process that has imported the planner already (see _plan_server).
        code = hand_over(sys.argv)
        if code is not None:
            raise SystemExit(code)
        from plansmith.cli._hash_seed import may_name_a_folder, must_fix_seed, rerun_with_fixed_seed

        # A GTPyhop folder plans under PYTHONHASHSEED=0: if this process has another
        # seed, it is replaced now, before it imports more than it needs to decide.
        if must_fix_seed() and may_name_a_folder(sys.argv[2:]):
            from plansmith.cli._plan_client import auto_start_wanted, start_and_hand_over

            # Rather than start Python again for this plan alone, start a plan server
            # (kept for later plans, see _plan_client) and hand the plan over to it.
            if auto_start_wanted():
                code = start_and_hand_over(sys.argv)
                if code is not None:
                    raise SystemExit(code)
            raise SystemExit(rerun_with_fixed_seed(sys.argv[2:], replace_process=True))
        from plansmith.cli._plan_command import run_plan

        raise SystemExit(run_plan(sys.argv[2:], replace_process=True))
    if sys.argv[1:] == ["--version"]:  # without importing every command
        sys.stdout.write(version_line() + "\n")
        return
    from plansmith.cli._app import app

    _register(sys.argv)
    app()
