"""What a tool writes reaches the terminal shortened and with its escape codes escaped:
in ``run``'s live view, ``show``, and the lines that say how a run ended; ``--json``
keeps it exact."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest
from rich.console import Console

from _shared_servers import INDEX, INDEX_BINDING, action, binding, docs_domain, servers_json
from plansmith.cli._live import LiveView

ESC = "\x1b"
#: escape codes that clear the screen and forge a green "run succeeded", then 100 KB of
#: digits: rich's highlighter took minutes over such a run of digits
MESSAGE = f"{ESC}[2J{ESC}[32mrun succeeded{ESC}[0m " + "7" * 100_000
SHOWN = "\\x1b[2J\\x1b[32mrun succeeded\\x1b[0m 777"  # as the terminal gets it
PROMPTLY = 60.0  # seconds: the old code took minutes; this one, well under a second


def _invoke(*args: str) -> tuple[int, str, str]:
    from typer.testing import CliRunner

    import plansmith.cli._run  # noqa: F401  (registers the commands on the app)
    from plansmith.cli._app import app

    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _failing_inputs(tmp: Path) -> list[str]:
    """A ``docs`` run whose one first step calls the counter server's ``fail`` tool,
    which fails with ``MESSAGE``."""
    summarise = action("summarise", "exists(d), not summarised(d)", "summarised(d)", "read")
    yaml_message = json.dumps(MESSAGE)  # a YAML double-quoted string
    bindings = (
        "bindings:\n"
        + binding(
            "summarise", "fail", f"{{message: {yaml_message}}}", '{done: "$.structured.done"}'
        )
        + INDEX_BINDING
    )
    files = {
        "domain.yaml": docs_domain(summarise, INDEX),
        "problem.yaml": "problem: p\ndomain: docs\nobjects: {d0: document}\n"
        "init: [exists(d0)]\ngoal: [indexed(d0)]\n",
        "bindings.yaml": bindings,
        "servers.json": servers_json(),
    }
    for name, text in files.items():
        (tmp / name).write_text(text)
    return [
        str(tmp / "domain.yaml"),
        str(tmp / "problem.yaml"),
        "--servers",
        str(tmp / "servers.json"),
        "--bindings",
        str(tmp / "bindings.yaml"),
        "--home",
        str(tmp / "home"),
    ]


def _assert_terminal_safe(text: str) -> None:
    assert ESC not in text
    assert max(map(len, text.splitlines())) < 2_000  # shortened: no line of 100 KB


@pytest.mark.timeout(120)
def test_a_tool_s_long_message_with_escape_codes_reaches_the_terminal_escaped_and_short(
    tmp_path: Path,
) -> None:
    args = _failing_inputs(tmp_path)
    began = time.monotonic()
    code, out, err = _invoke("run", *args, "--yes")
    assert time.monotonic() - began < PROMPTLY
    assert code == 5, err
    assert out == ""
    _assert_terminal_safe(err)
    failed = next(line for line in err.splitlines() if line.startswith("failed s1"))
    assert SHOWN in failed
    assert "more characters" in failed
    assert "plansmith show r-" in failed  # where the whole message is
    ended = next(line for line in err.splitlines() if line.startswith("run failed"))
    assert "\\x1b[2J" in ended
    run_id = failed.split("plansmith show ")[1].split()[0]

    code, out, err = _invoke("show", run_id, "--home", str(tmp_path / "home"))
    assert code == 0, err
    _assert_terminal_safe(out)
    assert SHOWN in out
    assert f"run {run_id}: failed (" in out

    code, out, err = _invoke("resume", run_id, "--home", str(tmp_path / "home"))
    assert code == 5
    _assert_terminal_safe(err)
    assert "had already finished: failed (" in err

    code, out, _ = _invoke("show", run_id, "--json", "--home", str(tmp_path / "home"))
    assert code == 0
    assert ESC not in out  # JSON escapes it
    events = [json.loads(line) for line in out.splitlines()]
    failed_event = next(e for e in events if e["type"] == "StepFailed")
    assert failed_event["message"].startswith(MESSAGE[:1000])  # the tool's text, exact


@pytest.mark.timeout(120)
def test_show_of_a_run_recorded_with_a_100_kb_message_and_reason_ends_promptly(
    tmp_path: Path,
) -> None:
    """A log holds what the run recorded: a message of any length (runs recorded before
    messages were bounded), a reason that quotes it."""
    from plansmith.execution import Emitter, RunFinished, SqliteRunLog, StepFailed

    log = SqliteRunLog(tmp_path / "home" / "runs.db")
    log.create_run("r-long", "2026-01-01T00:00:00.000Z", {})
    emitter = Emitter(log, "r-long")
    on = {"action": "summarise", "server": "counter", "tool": "fail", "args": ("d0",)}
    failed = {"step": "s1", "attempt": 1, "error_class": "tool_error", "message": MESSAGE}
    emitter.emit(emitter.new(StepFailed, **failed, **on))
    emitter.emit(emitter.new(RunFinished, state="failed", reason=f"step(s) s1 ({MESSAGE}) failed"))
    log.close()
    began = time.monotonic()
    code, out, err = _invoke("show", "r-long", "--home", str(tmp_path / "home"))
    assert time.monotonic() - began < PROMPTLY
    assert code == 0, err
    _assert_terminal_safe(out)
    assert SHOWN in out
    assert "run r-long: failed (step(s) s1 (\\x1b[2J" in out


@pytest.mark.timeout(120)
def test_the_live_view_prints_a_100_kb_message_promptly_and_escaped() -> None:
    from plansmith.execution import RunFinished, StepFailed, StepRetrying

    out = io.StringIO()
    view = LiveView(Console(file=out, soft_wrap=True, width=100_000))
    on = {"action": "summarise", "server": "counter", "tool": "fail", "args": ("d0",)}
    began = time.monotonic()
    view(StepRetrying(run_id="r-1", step="s1", attempt=1, error_class="x", message=MESSAGE, **on))
    view(StepFailed(run_id="r-1", step="s1", attempt=2, error_class="x", message=MESSAGE, **on))
    view(RunFinished(run_id="r-1", state="failed", reason=MESSAGE))
    assert time.monotonic() - began < PROMPTLY
    _assert_terminal_safe(out.getvalue())
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"retry s1 attempt 1: x: {SHOWN}")
    assert lines[1].startswith(f"failed s1 summarise: x: {SHOWN}")
    assert lines[2].startswith(f"run failed: {SHOWN}")
    assert lines[1].endswith("more characters; plansmith show r-1 --json)")
