"""``plansmith-lab``: an MCP server for an Opentrons Flex on the Opentrons protocol simulator.

It runs in its own virtual environment (``requirements-lab.txt``: ``opentrons==9.1.2``,
``mcp==1.9.4`` and ``pydantic<2.12``; ``make lab-venv`` builds ``.venv-lab``, and an
installed plansmith builds one in the user cache directory), so this file
imports only the standard library at module level; the server's modules live in
``labserver/`` beside it and are imported when it starts. Run::

    plansmith-lab [--role ROLE] [--robot DIR]     # finds the lab venv, then runs this file
    .venv-lab/bin/python src/plansmith/domains/lab/server.py [--role ROLE] [--robot DIR]

``--role`` (``movement``, ``liquid``, ``modules`` or ``all``, the default) picks
the tools the server exposes: the paper's three logical servers, or all of
them. Without ``--robot`` the server simulates its own robot. Role servers
started with the same ``--robot DIR`` drive one shared robot: the first starts a
robot process that the others connect to, and each hands its stdio over to it,
which then serves that role's MCP session itself (see ``labserver/labhub.py``).
Opentrons writes its configuration into a run directory, never into $HOME.
The transport is stdio.
"""

# ruff: noqa: PLC0415  (the server's modules are imported once sys.path and
# OT_API_CONFIG_DIR are set: module level stays standard library only)

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

__all__ = ["main"]

ROLES = ("movement", "liquid", "modules", "all")
LABSERVER = Path(__file__).resolve().parent / "labserver"
PROFILE_ENV = "PLANSMITH_LAB_PROFILE"  # a directory: each process writes a cProfile there
FORWARD_ENV = "PLANSMITH_LAB_FORWARD"  # 1: calls go through the role server (the old path)


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="plansmith-lab", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("--role", choices=ROLES, default="all", help="the tools to expose")
    parser.add_argument("--robot", metavar="DIR", help="share the robot of DIR with other roles")
    parser.add_argument("--api-level", help="Opentrons API level (default: the newest)")
    parser.add_argument("--hub", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--ready-fd", type=int, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _keep_stdout_for_mcp() -> None:
    """Only MCP messages go to stdout: anything else that prints goes to stderr."""
    mcp_out = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = os.fdopen(mcp_out, "w", encoding="utf-8")


def _run_robot_process(robot_dir: Path, api_level: str | None, ready_fd: int | None) -> None:
    os.environ["OT_API_CONFIG_DIR"] = str(robot_dir / "opentrons")
    import socket

    import anyio
    import labhub
    import labmcp
    from labrobot import Robot

    robot = Robot(api_level)
    local = labmcp.Local(robot)

    def session(role: str, fd_in: int, fd_out: int, control: socket.socket) -> None:
        try:
            server = labmcp.build(role, local)
        except ValueError:  # no such role: nothing to serve (the facade checked it already)
            os.close(fd_in)
            os.close(fd_out)
            return
        with _profiled(f"session-{role}"):
            anyio.run(labmcp.serve_handed_over, server, fd_in, fd_out, control)

    labhub.serve(robot_dir, robot.answer, ready_fd, session)


def _run_facade(role: str, robot_dir: Path | None, api_level: str | None) -> None:
    if robot_dir is None:
        import anyio
        import labmcp

        run_dir = tempfile.mkdtemp(prefix="plansmith-lab-")
        os.environ["OT_API_CONFIG_DIR"] = run_dir
        try:
            from labrobot import Robot

            local = labmcp.Local(Robot(api_level))
            anyio.run(labmcp.serve, labmcp.build(role, local))
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
        return
    import labhub

    command = [sys.executable, str(Path(__file__).resolve()), "--hub", str(robot_dir)]
    if api_level:
        command += ["--api-level", api_level]
    sock = labhub.connect(robot_dir, command)
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    if os.environ.get(FORWARD_ENV) != "1" and labhub.is_stream(stdin) and labhub.is_stream(stdout):
        labhub.hand_over(sock, role, stdin, stdout)  # the robot serves the client itself
        return
    import anyio
    import labmcp

    hub = labhub.Hub(sock)
    anyio.run(labmcp.serve, labmcp.build(role, hub), hub.close)


@contextlib.contextmanager
def _profiled(name: str) -> Iterator[None]:
    """With ``PLANSMITH_LAB_PROFILE=DIR``: profile this block (this thread) into
    ``DIR/NAME-PID.prof``."""
    directory = os.environ.get(PROFILE_ENV)
    if not directory:
        yield
        return
    import cProfile

    profile = cProfile.Profile()
    profile.enable()
    try:
        yield
    finally:
        profile.disable()
        Path(directory).mkdir(parents=True, exist_ok=True)
        profile.dump_stats(str(Path(directory) / f"{name}-{os.getpid()}.prof"))


def _start_profile(name: str) -> None:
    """With ``PLANSMITH_LAB_PROFILE=DIR``: profile this process into ``DIR/NAME-PID.prof``."""
    directory = os.environ.get(PROFILE_ENV)
    if not directory:
        return
    import cProfile

    import labhub

    profile = cProfile.Profile()
    path = Path(directory) / f"{name}-{os.getpid()}.prof"

    def dump() -> None:
        profile.disable()
        path.parent.mkdir(parents=True, exist_ok=True)
        profile.dump_stats(str(path))

    labhub.BEFORE_EXIT.append(dump)
    profile.enable()


def main(argv: list[str] | None = None) -> None:
    """Start a role server (stdio), or, with ``--hub``, the shared robot process."""
    args = _arguments(argv)
    sys.path.insert(0, str(LABSERVER))
    _start_profile("robot" if args.hub else args.role)
    # mcp 1.9.4's settings model warns about its own annotation under pydantic 2.11
    warnings.filterwarnings("ignore", message="Field 'lifespan' has an incomplete definition")
    if args.hub:
        _run_robot_process(Path(args.hub).resolve(), args.api_level, args.ready_fd)
        return
    _keep_stdout_for_mcp()
    robot_dir = Path(args.robot).resolve() if args.robot else None
    _run_facade(args.role, robot_dir, args.api_level)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(ValueError, OSError):  # the stdio transport may have closed it
            stream.flush()
    import labhub

    labhub.exit_now(0)  # the simulator's threads would hold the exit up for about a second


if __name__ == "__main__":
    main()
