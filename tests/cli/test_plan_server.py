"""``plansmith plan-server``: ``plansmith plan`` handed over to a fork server gives the
command's own output, exit code and plan hash, and falls back to planning locally.

Every test runs its server in a private temporary ``XDG_RUNTIME_DIR`` (and ``HOME``),
waits on events (a line the server prints once it listens, a process's exit, a line
of the client's stderr), never on time, and stops its server.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from unittest.mock import ANY

import pytest

from plansmith.cli._hash_seed import CHILD_MARK
from plansmith.cli._plan_client import DISABLE_VARIABLE, REPORT_VARIABLE, SOCKET_NAME

gtpyhop = pytest.importorskip("gtpyhop")
EXAMPLES = Path(gtpyhop.__file__).parent / "examples"
COLT = EXAMPLES / "colt_express" / "s1_minimal_turn"
CYBER = EXAMPLES / "cybersecurity_attack_planning"
PLANSMITH = str(Path(sys.executable).parent / "plansmith")
DOC = Path(__file__).resolve().parents[2] / "src" / "plansmith" / "examples" / "doc-pipeline"
TIMEOUT = 120

LOOP_DOMAIN = """\
import sys
import gtpyhop

the_domain = gtpyhop.Domain("loop")


def a_go(state, where):
    state.at = where
    return state


def m_go(state, where):
    print("isatty", sys.__stdout__.isatty(), sys.stderr.isatty(), flush=True)
    while LOOP:
        pass
    return [("a_go", where)]


gtpyhop.declare_actions(a_go)
gtpyhop.declare_task_methods("go", m_go)
"""
PROBLEMS = """\
import gtpyhop


def get_problems():
    state = gtpyhop.State("start")
    state.at = "here"
    return {"there": (state, [("go", "there")])}
"""
UNSOLVABLE = """\
problem: never
domain: doc-pipeline
objects: {notes: document}
init: [exists(notes)]
goal: [busy()]
"""


@dataclass
class Server:
    env: dict[str, str]
    run_dir: Path
    report: Path
    process: subprocess.Popen[str] | None = None
    log: str = ""

    def plan(
        self,
        *words: str,
        seed: str | None = None,
        local: bool = False,
        cwd: Path | None = None,
        umask: int = -1,
    ) -> subprocess.CompletedProcess[bytes]:
        """``plansmith plan WORDS`` through the server (``local``: without it)."""
        env = dict(self.env)
        if seed is not None:
            env["PYTHONHASHSEED"] = seed
        if local:
            env[DISABLE_VARIABLE] = "0"
        return subprocess.run(
            [PLANSMITH, "plan", *words],
            capture_output=True,
            env=env,
            cwd=cwd,
            umask=umask,
            timeout=TIMEOUT,
            check=False,
        )

    def served(self) -> int:
        """How many plans the server ran (the clients' reports)."""
        if not self.report.exists():
            return 0
        return len(self.report.read_text(encoding="utf-8").splitlines())

    def command(self, *words: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PLANSMITH, "plan-server", *words],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=TIMEOUT,
            check=False,
        )

    def start(self, idle: float = 600) -> None:
        """Start the server in the foreground (a child of the test: it can be waited on)
        and wait until it listens."""
        self.process = subprocess.Popen(
            [PLANSMITH, "plan-server", "start", "--foreground", "--idle", f"{idle:g}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=self.env,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert "plan server listening on" in line, self.process.stderr.read()  # type: ignore[union-attr]

    def wait(self) -> int:
        """Wait until the foreground server exits; its exit code (its log: ``self.log``)."""
        assert self.process is not None
        code = self.process.wait(timeout=TIMEOUT)
        if self.process.stderr is not None and not self.process.stderr.closed:
            self.log = self.process.stderr.read()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return code


@pytest.fixture
def server_env() -> Iterator[Server]:
    """A private run folder (short: a Unix socket's path has at most 107 bytes) and
    the environment that names it; any server started there is stopped at the end."""
    root = Path(tempfile.mkdtemp(prefix="ps-", dir="/tmp"))
    runtime = root / "run"
    runtime.mkdir(mode=0o700)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONHASHSEED", CHILD_MARK, DISABLE_VARIABLE, REPORT_VARIABLE)
    }
    env.update(
        XDG_RUNTIME_DIR=str(runtime),
        HOME=str(root),
        GTPYHOP_QUIET="true",
        **{REPORT_VARIABLE: str(root / "report.txt")},
    )
    server = Server(env=env, run_dir=runtime / "plansmith", report=root / "report.txt")
    try:
        yield server
    finally:
        server.command("stop")  # returns once the server has exited
        if server.process is not None:
            if server.process.poll() is None:
                server.process.kill()
            server.wait()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def server(server_env: Server) -> Server:
    server_env.start()
    return server_env


def _folder(tmp_path: Path, name: str, domain: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "domain.py").write_text(domain, encoding="utf-8")
    (folder / "problems.py").write_text(PROBLEMS, encoding="utf-8")
    return folder


def test_the_socket_is_in_a_private_folder(server: Server) -> None:
    assert server.run_dir.stat().st_mode & 0o777 == 0o700
    assert (server.run_dir / SOCKET_NAME).is_socket()


CASES = {
    "gtpyhop-text": [str(COLT), "--problem", "scenario_1_rob_loot_at_position"],
    "gtpyhop-json": [str(COLT), "--problem", "scenario_3_descend_and_rob", "--format", "json"],
    "gtpyhop-cyber": [str(CYBER), "--problem", "scenario_6_admin_acl_change", "--format", "dot"],
    "gtpyhop-no-such-problem": [str(COLT), "--problem", "nope"],
    "yaml-classical": [str(DOC / "domain.yaml"), str(DOC / "problem.yaml")],
    "yaml-htn": [str(DOC / "domain.yaml"), str(DOC / "problem-htn.yaml"), "--format", "json"],
    "yaml-missing-file": [str(DOC / "domain.yaml"), str(DOC / "no-such-problem.yaml")],
    "bad-usage": ["--search", "nope"],
}
EXIT = {"gtpyhop-no-such-problem": 2, "yaml-missing-file": 2, "bad-usage": 2}


@pytest.mark.parametrize("case", list(CASES))
def test_a_plan_through_the_server_is_the_local_commands(server: Server, case: str) -> None:
    local = server.plan(*CASES[case], local=True)
    assert server.served() == 0
    remote = server.plan(*CASES[case])
    assert server.served() == 1
    assert remote.returncode == local.returncode == EXIT.get(case, 0), local.stderr
    assert remote.stdout == local.stdout
    assert remote.stderr == local.stderr
    if local.returncode == 2:
        assert local.stderr  # the error, with its text


def test_unsolvable_exits_3_with_the_same_text(server: Server, tmp_path: Path) -> None:
    problem = tmp_path / "never.yaml"
    problem.write_text(UNSOLVABLE, encoding="utf-8")
    local = server.plan(str(DOC / "domain.yaml"), str(problem), local=True)
    remote = server.plan(str(DOC / "domain.yaml"), str(problem))
    assert server.served() == 1
    assert remote.returncode == local.returncode == 3
    assert remote.stderr == local.stderr
    assert b"no plan exists" in remote.stderr


def test_one_plan_hash_whatever_the_clients_hash_seed(server: Server) -> None:
    words = [str(CYBER), "--problem", "scenario_6_admin_acl_change", "--format", "json"]
    hashes = set()
    for seed in (None, "1", "2"):
        done = server.plan(*words, seed=seed)
        assert done.returncode == 0, done.stderr
        document = json.loads(done.stdout)
        assert document["planner"]["hash_seed"] == 0
        hashes.add(document["hash"])
    assert server.served() == 3
    local = json.loads(server.plan(*words, local=True).stdout)
    assert hashes == {local["hash"]}


def test_an_edited_domain_is_planned_afresh(server: Server, tmp_path: Path) -> None:
    folder = _folder(tmp_path, "edited", LOOP_DOMAIN.replace("LOOP", "False"))
    first = server.plan(str(folder), "--problem", "there", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert b"a_go(there)" in first.stdout
    edited = LOOP_DOMAIN.replace("LOOP", "False").replace('("a_go", where)', '("a_go", "x")')
    (folder / "domain.py").write_text(edited, encoding="utf-8")
    second = server.plan("edited", "--problem", "there", cwd=tmp_path)  # a relative path
    assert second.returncode == 0, second.stderr
    assert b"a_go(x)" in second.stdout
    assert server.served() == 2
    assert (
        second.stdout
        == server.plan("edited", "--problem", "there", cwd=tmp_path, local=True).stdout
    )


def test_output_file_and_its_mode_follow_the_clients_folder_and_umask(
    server: Server, tmp_path: Path
) -> None:
    words = [str(DOC / "domain.yaml"), str(DOC / "problem.yaml"), "-o", "plan.txt"]
    done = server.plan(*words, cwd=tmp_path, umask=0o077)
    assert done.returncode == 0, done.stderr
    assert server.served() == 1
    written = tmp_path / "plan.txt"
    assert written.read_bytes() == server.plan(*words[:2], local=True).stdout
    assert written.stat().st_mode & 0o777 == 0o600


def _tty_run(server: Server, folder: Path, *, local: bool) -> tuple[int, bytes]:
    """Plan with a terminal as stdout; the exit code and the stderr."""
    primary, secondary = pty.openpty()
    env = dict(server.env)
    if local:
        env[DISABLE_VARIABLE] = "0"
    try:
        done = subprocess.run(
            [PLANSMITH, "plan", str(folder), "--problem", "there"],
            stdout=secondary,
            stderr=subprocess.PIPE,
            env=env,
            timeout=TIMEOUT,
            check=False,
        )
    finally:
        os.close(secondary)
        os.close(primary)
    return done.returncode, done.stderr


def test_the_child_writes_to_the_clients_terminal(server: Server, tmp_path: Path) -> None:
    folder = _folder(tmp_path, "tty", LOOP_DOMAIN.replace("LOOP", "False"))
    remote = _tty_run(server, folder, local=False)
    assert server.served() == 1
    assert remote == _tty_run(server, folder, local=True)
    assert b"isatty True False" in remote[1]


def _sigint_as_a_foreground_job_has_it() -> None:
    # a process started with SIGINT ignored (a background job of a script; this test
    # where the suite runs with it ignored) keeps it ignored: Ctrl-C never reaches it
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_interrupts_the_plan_in_the_server(server: Server, tmp_path: Path) -> None:
    folder = _folder(tmp_path, "loop", LOOP_DOMAIN.replace("LOOP", "True"))
    client = subprocess.Popen(
        [PLANSMITH, "plan", str(folder), "--problem", "there"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server.env,
        preexec_fn=_sigint_as_a_foreground_job_has_it,  # noqa: PLW1509
    )
    assert client.stderr is not None
    assert client.stderr.readline().startswith(b"isatty")  # the child is in the loop
    client.send_signal(signal.SIGINT)
    out, err = client.communicate(timeout=TIMEOUT)
    assert client.returncode == 130
    assert err == b"plan: interrupted\n"
    assert out == b""
    assert server.served() == 1


def test_a_killed_client_takes_its_plan_down(server: Server, tmp_path: Path) -> None:
    folder = _folder(tmp_path, "loop", LOOP_DOMAIN.replace("LOOP", "True"))
    client = subprocess.Popen(
        [PLANSMITH, "plan", str(folder), "--problem", "there"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=server.env,
    )
    assert client.stderr is not None
    assert client.stderr.readline().startswith(b"isatty")
    client.kill()
    client.wait(timeout=TIMEOUT)
    client.stderr.close()
    # `stop` lets running plans finish: it returns, and the server exits, only if the
    # looping child ended with its client
    assert server.command("stop").returncode == 0
    assert server.wait() == 0


def test_status_and_stop(server: Server) -> None:
    assert server.process is not None
    status = server.command("status")
    assert status.returncode == 0
    assert f"pid: {server.process.pid}\n" in status.stdout
    assert server.command("start").stdout.startswith("plan server already running")
    stop = server.command("stop")
    assert (stop.returncode, stop.stdout) == (0, "plan server stopped\n")
    assert server.wait() == 0
    assert not (server.run_dir / SOCKET_NAME).exists()
    status = server.command("status")
    assert (status.returncode, status.stdout) == (1, "no plan server running\n")
    assert server.command("stop").stdout == "no plan server running\n"


def test_start_runs_a_daemon_that_stop_ends(server_env: Server) -> None:
    start = server_env.command("start", "--idle", "600")
    assert start.returncode == 0, start.stderr
    assert start.stdout.startswith("plan server listening on")
    assert server_env.command("status").returncode == 0
    done = server_env.plan(str(COLT), "--problem", "scenario_1_rob_loot_at_position")
    assert done.returncode == 0
    assert server_env.served() == 1
    assert server_env.command("stop").stdout == "plan server stopped\n"  # once it has exited
    assert server_env.command("status").returncode == 1


def test_it_exits_when_idle(server_env: Server) -> None:
    server_env.start(idle=0.5)
    assert server_env.wait() == 0  # nothing asked it to stop
    assert not (server_env.run_dir / SOCKET_NAME).exists()
    assert "idle for 0.5 s: exiting" in server_env.log


def test_a_stale_socket_is_removed_and_the_plan_runs_locally(server_env: Server) -> None:
    server_env.run_dir.mkdir(mode=0o700)
    path = server_env.run_dir / SOCKET_NAME
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
        gone.bind(str(path))  # bound, never listening, closed: the socket file stays
    assert path.is_socket()
    words = [str(DOC / "domain.yaml"), str(DOC / "problem.yaml")]
    done = server_env.plan(*words)
    assert done.returncode == 0
    assert done.stdout == server_env.plan(*words, local=True).stdout
    assert server_env.served() == 0
    assert not path.exists()


def test_no_hand_over_when_disabled_or_for_another_python_setup(server: Server) -> None:
    words = [str(COLT), "--problem", "scenario_1_rob_loot_at_position"]
    expected = server.plan(*words, local=True)
    assert expected.returncode == 0
    assert server.served() == 0
    # -X dev: another interpreter set-up than the server's, which refuses it
    env = {k: v for k, v in server.env.items() if k != CHILD_MARK}
    other = subprocess.run(
        [sys.executable, "-X", "dev", "-m", "plansmith", "plan", *words],
        capture_output=True,
        env=env,
        timeout=TIMEOUT,
        check=False,
    )
    assert other.returncode == 0
    assert other.stdout == expected.stdout
    assert server.served() == 0
    assert server.command("status").stdout.count("refused: 1\n") == 1


# --- in the test's own process: the pieces both ends share ------------------------


def test_messages_round_trip_and_a_truncated_one_is_refused() -> None:
    from plansmith.cli._plan_client import decode, encode

    items = [b"", b"plan", "é".encode(), bytes(range(256))]
    message = encode(items)
    assert int.from_bytes(message[:4], "big") == len(message) - 4
    assert decode(message[4:]) == items
    with pytest.raises(ValueError, match="truncated"):
        decode(message[4:-1])


def test_the_run_folder_follows_xdg_and_must_be_private(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from plansmith.cli._plan_client import private_dir, run_dir
    from plansmith.cli._plan_server import ensure_run_dir

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert run_dir() == str(tmp_path / "plansmith")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "missing"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert run_dir() == str(tmp_path / "cache" / "plansmith" / "run")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert run_dir() == str(tmp_path / "home" / ".cache" / "plansmith" / "run")
    made = Path(ensure_run_dir())
    assert made.stat().st_mode & 0o777 == 0o700
    assert private_dir(str(made))
    made.chmod(0o755)  # loosened: made private again by the server, refused by clients
    assert not private_dir(str(made))
    assert Path(ensure_run_dir()).stat().st_mode & 0o777 == 0o700
    assert not private_dir(str(tmp_path / "nothing"))


def test_status_and_a_hand_over_from_this_process(
    server: Server, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from plansmith.cli._plan_client import hand_over, request
    from plansmith.cli._plan_server import run_command, status_figures

    monkeypatch.setenv("XDG_RUNTIME_DIR", server.env["XDG_RUNTIME_DIR"])
    monkeypatch.delenv(DISABLE_VARIABLE, raising=False)
    monkeypatch.delenv(CHILD_MARK, raising=False)
    answer = request("status")
    assert answer is not None
    assert answer[0] == b"S"
    figures = status_figures()
    assert figures is not None
    assert server.process is not None
    assert figures["pid"] == str(server.process.pid)
    assert run_command(["status"]) == 0
    assert f"pid: {server.process.pid}" in capfd.readouterr().out
    # pytest's module search path is not the server's: it refuses, the plan runs here
    words = [str(DOC / "domain.yaml"), str(DOC / "problem.yaml")]
    assert hand_over(["plansmith", "plan", *words]) is None
    assert figures["refused"] == "0"
    assert status_figures() == {**figures, "refused": "1", "cpu_s": ANY, "children_cpu_s": ANY}
    monkeypatch.setenv(DISABLE_VARIABLE, "0")
    assert hand_over(["plansmith", "plan", *words]) is None  # not even asked
    assert run_command(["start", "--idle", "0"]) == 2


# --- started by `plansmith plan` itself -------------------------------------------------


def _pid(server: Server) -> int | None:
    """The listening server's pid, or None when none listens."""
    for line in server.command("status").stdout.splitlines():
        if line.startswith("pid: "):
            return int(line.removeprefix("pid: "))
    return None


def test_plan_starts_a_server_when_none_listens_and_hands_later_plans_over(
    server_env: Server,
) -> None:
    words = [str(COLT), "--problem", "scenario_1_rob_loot_at_position"]
    expected = server_env.plan(*words, local=True)
    assert expected.returncode == 0
    assert _pid(server_env) is None  # planned here: nothing started
    first = server_env.plan(*words)
    assert first.returncode == 0, first.stderr
    assert first.stdout == expected.stdout  # the same plan, byte for byte
    assert server_env.served() == 1  # started for it, and it planned it
    pid = _pid(server_env)
    assert pid is not None
    status = server_env.command("status").stdout
    assert "idle_timeout_s: 600\n" in status
    second = server_env.plan(*words)
    assert second.stdout == expected.stdout
    assert server_env.served() == 2
    assert _pid(server_env) == pid  # the same server: started once
    assert "plans: 2\n" in server_env.command("status").stdout


@pytest.mark.parametrize("setting", ["manual", "0"])
def test_manual_or_off_never_start_a_server(server_env: Server, setting: str) -> None:
    server_env.env[DISABLE_VARIABLE] = setting
    done = server_env.plan(str(COLT), "--problem", "scenario_1_rob_loot_at_position")
    assert done.returncode == 0, done.stderr
    assert server_env.served() == 0
    assert _pid(server_env) is None


def test_a_server_a_plan_started_exits_once_idle_for_its_time(server_env: Server) -> None:
    server_env.env["PLANSMITH_PLAN_SERVER_IDLE"] = "0.5"
    done = server_env.plan(str(COLT), "--problem", "scenario_1_rob_loot_at_position")
    assert done.returncode == 0, done.stderr
    assert server_env.served() == 1
    # the server holds its lock while it lives: taking it waits for its exit
    lock = os.open(server_env.run_dir / "plan-server.lock", os.O_RDWR)
    taken = threading.Thread(target=fcntl.flock, args=(lock, fcntl.LOCK_EX), daemon=True)
    try:
        taken.start()
        taken.join(TIMEOUT)  # a guard against a hang, not a pace
        assert not taken.is_alive(), "the server did not exit"
    finally:
        os.close(lock)
    log = (server_env.run_dir / "plan-server.log").read_text()
    assert "idle for 0.5 s: exiting" in log
    assert _pid(server_env) is None
