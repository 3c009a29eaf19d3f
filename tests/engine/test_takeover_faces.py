"""``plansmith serve`` and ``plansmith mcp`` on a shared PostgreSQL log take over the run
of an engine that was killed, once its lease expires (the take-over loop of the faces)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from test_takeover import CHILD, calls, slow_inputs, wait_until_held

from _pg_server import fresh_schema
from _shared_servers import free_port
from plansmith.execution import PostgresRunLog, RunStarted, StepSucceeded

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def face_command(face: str, home: Path, url: str) -> list[str]:
    common = ["--home", str(home), "--log", url, "--lease-ttl", "2"]
    if face == "serve":
        return ["serve", "--port", str(free_port()), *common]
    return ["mcp", *common]


@pytest.mark.parametrize("face", ["serve", "mcp"])
async def test_face_on_a_shared_log_takes_over_a_killed_engines_run(
    face: str, tmp_path: Path
) -> None:
    call_log = tmp_path / "calls.jsonl"
    held = tmp_path / "held"  # A's server holds its 2nd call: A cannot finish before the kill
    inputs = slow_inputs(tmp_path, 2, call_log, delay=0.3, hold_after=1, held=held)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    with fresh_schema() as url:
        args = [sys.executable, str(CHILD), url, str(tmp_path / "a"), "r-face", "2", "0.3"]
        args += [str(f) for f in inputs.to_dict().values()]
        child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        assert child.stdout is not None
        for line in child.stdout:  # A runs until one step has succeeded
            if json.loads(line)["type"] == "StepSucceeded":
                break
        await wait_until_held(held)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()
        log = PostgresRunLog(url)
        done_before = {e.step for e in log.events("r-face") if isinstance(e, StepSucceeded)}
        calls_at_kill = len(calls(call_log))
        command = [sys.executable, "-m", "plansmith", *face_command(face, tmp_path / "b", url)]
        # stdin stays open: an MCP server over stdio lives while its client does
        server = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
        )
        try:
            with anyio.fail_after(90):
                while log.events("r-face")[-1].type != "RunFinished":
                    assert server.poll() is None, server.stderr.read() if server.stderr else ""
                    await anyio.sleep(0.1)  # polls another process's log, with a deadline
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            for stream in (server.stdin, server.stderr):
                if stream is not None:
                    stream.close()
        events = log.events("r-face")
        log.close()
    assert events[-1].type == "RunFinished"
    assert getattr(events[-1], "state", None) == "succeeded"
    assert [s.resumed for s in events if isinstance(s, RunStarted)] == [False, True]
    after = calls(call_log)[calls_at_kill:]
    assert after, "the face made no calls"
    assert not {c["key"] for c in after} & {f"r-face/{s}" for s in done_before}
