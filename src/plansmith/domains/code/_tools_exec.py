"""Execute tier: run the project's configured test or build command, and nothing else.

The argv comes from the configuration read at start-up. A caller may only add
test selectors (``tests/test_x.py::TestY::test_z[param]``), each matched against
:data:`SELECTOR`, checked to lie inside the worktree, and appended as one argv
element each; no shell ever sees them. The command runs in the session's
worktree, in its own process group, with a minimal environment (none of the
server's variables, so none of its secrets); on timeout or cancellation the
whole group is killed. The output is redacted and kept as a log that
``get_build_logs`` pages.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
from anyio.abc import Process

from plansmith.domains.code._beneath import stat_beneath
from plansmith.domains.code._config import Commands
from plansmith.domains.code._errors import RefusedError, UnavailableError
from plansmith.domains.code._redact import redact
from plansmith.domains.code._results import MAX_PAGE, RunResult
from plansmith.domains.code._sessions import Session

__all__ = ["SELECTOR", "MAX_SELECTORS", "check_selectors", "run_configured", "parse_pytest"]

SELECTOR = (
    r"^[A-Za-z0-9_][A-Za-z0-9_./\-]{0,255}"  # a file or folder, not an option
    r"(?:::[A-Za-z_][A-Za-z0-9_]{0,127}){0,4}"  # ::Class::test
    r"(?:\[[A-Za-z0-9_.,=+\-]{0,128}\])?$"  # [param-id]
)
MAX_SELECTORS = 50
MAX_OUTPUT = 4 * 1024 * 1024
TAIL = 30

_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|warnings?|deselected)")
_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)")


def check_selectors(session: Session, selectors: list[str]) -> list[str]:
    """The selectors, each refused unless it is a plain test id inside the worktree."""
    if len(selectors) > MAX_SELECTORS:
        raise RefusedError(
            "too_many_selectors", f"at most {MAX_SELECTORS} selectors", fix="run a folder instead"
        )
    for selector in selectors:
        if not isinstance(selector, str) or not re.match(SELECTOR, selector):
            raise RefusedError(
                "invalid_selector",
                f"{selector!r} is not a test id (path[::Class]::test[param])",
                fix="send test ids such as tests/test_x.py::test_y (no options, no shell text)",
            )
        file_part = selector.split("::", 1)[0].split("[", 1)[0]
        if ".." in file_part.split("/"):
            raise RefusedError(
                "invalid_selector",
                f"{selector!r} climbs out with '..'",
                fix="use a path inside the repo",
            )
        target = session.sandbox.resolve(file_part)
        if target.root != session.worktree or stat_beneath(target) is None:
            raise RefusedError(
                "invalid_selector",
                f"{file_part} is not a test file or folder of the repository",
                fix="list_directory shows the test files",
                path=file_part,
            )
    return list(selectors)


def parse_pytest(output: str) -> tuple[dict[str, int], list[str]]:
    """pytest's summary counts and failing ids, if the output has them."""
    counts: dict[str, int] = {}
    for line in output.splitlines()[-60:]:
        if line.startswith("=") or re.match(r"^\d+ \w+.* in [\d.]+s", line):
            for number, word in _COUNT.findall(line):
                counts[{"error": "errors", "warning": "warnings"}.get(word, word)] = int(number)
    failures = [m.group(1) for m in map(_FAILED.match, output.splitlines()) if m]
    return counts, list(dict.fromkeys(failures))


def _environment(session: Session, commands: Commands) -> dict[str, str]:
    home = session.logs / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.defpath]),
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        **dict(commands.env),
    }


async def _collect(process: Process, chunks: list[bytes]) -> None:
    size = 0
    if process.stdout is None:
        return
    async for chunk in process.stdout:
        if size < MAX_OUTPUT:
            chunks.append(chunk[: MAX_OUTPUT - size])
        size += len(chunk)


def _kill(process: Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _save(session: Session, kind: str, text: str) -> str:
    log_id = f"{kind}-{len(session.log_ids) + 1}"
    (session.logs / f"{log_id}.log").write_text(text, encoding="utf-8")
    session.log_ids.append(log_id)
    return log_id


async def run_configured(
    session: Session, commands: Commands, kind: str, selectors: list[str]
) -> RunResult:
    """Run the configured ``kind`` command (``test`` or ``build``) in the session's worktree."""
    configured = commands.test if kind == "test" else commands.build
    if configured is None:
        raise RefusedError(
            "not_configured",
            f"the project declares no {kind} command",
            fix=f"add [commands] {kind} = [...] to plansmith-code.toml (server side)",
        )
    env = _environment(session, commands)
    program = (
        shutil.which(configured[0], path=env["PATH"]) if "/" not in configured[0] else configured[0]
    )
    if program is None:
        raise UnavailableError(
            "command_not_found",
            f"{configured[0]} is not on the server's PATH",
            fix="install it or give its absolute path in the config",
            retryable=False,
        )
    argv = [program, *configured[1:], *selectors]
    started = time.monotonic()
    chunks: list[bytes] = []
    process = await anyio.open_process(
        argv,
        cwd=session.worktree,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        await _collect(process, chunks)
        code = await process.wait()
    finally:
        killed = process.returncode is None
        if killed:
            _kill(process)
        with anyio.CancelScope(shield=True):
            await process.aclose()
        if killed:
            partial = b"".join(chunks).decode("utf-8", errors="replace")
            _save(session, kind, redact(partial) + "\n[killed: timeout or cancellation]")
    text = redact(b"".join(chunks).decode("utf-8", errors="replace"))
    log_id = _save(session, kind, text)
    counts, failures = parse_pytest(text)
    lines = text.splitlines()
    return RunResult(
        kind=kind,
        argv=[configured[0], *configured[1:], *selectors],
        exit_code=code,
        passed=code == 0,
        duration_s=round(time.monotonic() - started, 3),
        counts=counts,
        failures=failures[:MAX_PAGE],
        log_id=log_id,
        tail=lines[-TAIL:],
    )
