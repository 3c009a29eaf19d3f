"""``plansmith plan-server start|stop|status``: an opt-in fork server for ``plansmith plan``.

A ``plansmith plan`` process spends most of its CPU time on starting Python and
importing the planner (and, for a GTPyhop folder under another hash seed, on
starting again under ``PYTHONHASHSEED=0``). The plan server pays that once: it is
a daemon started under ``PYTHONHASHSEED=0`` that has imported what ``plansmith
plan`` of a YAML, JSON or PDDL file or of a GTPyhop folder needs, and listens on a
Unix socket in a per-user folder of mode 0700 (``_plan_client.run_dir``). For each
request it forks a child that runs the ``plan`` command as the command line would
(``_plan_command.run_plan``): with the client's words, current directory,
environment (``PYTHONHASHSEED`` stays 0), umask and locale, and the client's own
stdin, stdout and stderr (passed over the socket), so its output, exit code and
files are the command's own. A domain's code is only imported in that child, so
an edited domain file is always read afresh.

The server refuses a request (the client then plans in its own process, as without
a server) from another user (``SO_PEERCRED``), from another Python or plansmith
installation or module search path, or when a file of a module it imported changed
since it started (it then also exits). It exits after ``--idle`` seconds without
requests, on ``plansmith plan-server stop`` and on SIGTERM. Nothing starts it but
``plansmith plan-server start``.

Run as ``python -m plansmith.cli._plan_server`` it is the server itself (which
imports no Typer); imported, it defines the ``plan-server`` command.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import gc
import importlib
import io
import os
import resource
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from plansmith.cli import _plan_client as client
from plansmith.cli._hash_seed import CHILD_MARK, may_name_a_folder

__all__ = ["DEFAULT_IDLE", "PLAN_SERVER_HELP", "run_command", "serve"]

DEFAULT_IDLE = 900.0
PLAN_SERVER_HELP = (
    "Start, stop or show the plan server: a daemon (opt-in) that runs each `plansmith "
    "plan` in a process forked from one that has already imported the planner, under "
    "PYTHONHASHSEED=0. While it runs, `plansmith plan` hands its work over to it "
    "(PLANSMITH_PLAN_SERVER=0: never). It exits after --idle seconds without requests."
)
_MAX_REQUEST = 16 * 1024 * 1024
_LOCK_NAME = "plan-server.lock"
_FIRST_PLAN_WAIT = 60.0  # seconds a server a plan started waits for that plan
_LOG_NAME = "plan-server.log"


def _log(text: str) -> None:
    """A line in the server's log (its stderr): events and reasons, never the
    environment or the command line of a request."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    sys.stderr.write(f"{stamp} plan-server[{os.getpid()}]: {text}\n")
    sys.stderr.flush()


def ensure_run_dir() -> str:
    """Create the per-user run folder (mode 0700) if need be; its path. Raises
    ``OSError`` when it is not a private folder of this user."""
    path = client.run_dir()
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.lstat(path)
    if info.st_uid == os.getuid() and (info.st_mode & 0o077):
        os.chmod(path, 0o700)
    if not client.private_dir(path):
        raise OSError(f"{path} is not a folder of this user with mode 0700")
    return path


# --- what the server checks a request against --------------------------------------


def _stdlib_dir() -> str:
    return os.path.dirname(os.__file__)


def _watched_files() -> list[str]:
    """The files whose change makes the server stale: every imported module outside
    Python's standard library (plansmith, its dependencies), plus the search path's
    folders (a package installed or removed)."""
    stdlib = _stdlib_dir() + os.sep
    files = []
    for module in list(sys.modules.values()):
        name = getattr(module, "__file__", None)
        if not isinstance(name, str) or not os.path.isabs(name):
            continue
        if name.startswith(stdlib) and "site-packages" not in name:
            continue
        files.append(name)
    files.extend(p for p in sys.path if p and os.path.isabs(p))
    return sorted(set(files))


def _stamps(files: Sequence[str]) -> list[tuple[int, int]]:
    out = []
    for name in files:
        try:
            info = os.stat(name)
        except OSError:
            out.append((-1, -1))
            continue
        out.append((info.st_mtime_ns, info.st_size))
    return out


# --- warming up: import what `plansmith plan` imports, in the server ---------------

_WARM_DOMAIN = """\
import gtpyhop

the_domain = gtpyhop.Domain("plan_server_warm_up")


def a_go(state, where):
    if state.at != where:
        state.at = where
        return state
    return False


def m_go(state, where):
    return [("a_go", where)]


gtpyhop.declare_actions(a_go)
gtpyhop.declare_task_methods("go", m_go)
"""
_WARM_PROBLEMS = """\
import gtpyhop


def get_problems():
    state = gtpyhop.State("start")
    state.at = "here"
    return {"there": (state, [("go", "there")])}
"""
_WARM_PDDL_DOMAIN = """(define (domain warm) (:requirements :strips)
  (:predicates (here) (there))
  (:action go :parameters () :precondition (here) :effect (and (there) (not (here)))))
"""
_WARM_PDDL_TASK = "(define (problem warm) (:domain warm) (:init (here)) (:goal (there)))\n"


def _warm_up_commands(tmp: Path) -> list[list[str]]:
    import plansmith

    example = Path(plansmith.__file__ or "").parent / "examples" / "doc-pipeline"
    folder = tmp / "gtpyhop_warm_up"
    folder.mkdir()
    (folder / "domain.py").write_text(_WARM_DOMAIN, encoding="utf-8")
    (folder / "problems.py").write_text(_WARM_PROBLEMS, encoding="utf-8")
    (tmp / "domain.pddl").write_text(_WARM_PDDL_DOMAIN, encoding="utf-8")
    (tmp / "task.pddl").write_text(_WARM_PDDL_TASK, encoding="utf-8")
    commands = [
        [str(folder), "--problem", "there", "--format", "json"],
        [str(folder), "--problem", "there"],
        [str(tmp / "domain.pddl"), str(tmp / "task.pddl"), "--format", "dot"],
        [str(tmp / "nothing.yaml"), str(tmp / "nothing.yaml")],  # the error path
    ]
    if (example / "domain.yaml").is_file():
        commands += [
            [str(example / "domain.yaml"), str(example / "problem.yaml")],
            [str(example / "domain.yaml"), str(example / "problem-htn.yaml"), "--format", "json"],
            [str(example / "domain.json"), str(example / "problem.json"), "--format", "mermaid"],
        ]
    return commands


def _warm_up() -> int:
    """Import, in this process, the modules ``plansmith plan`` imports: a forked child
    plans small inputs of every kind (a GTPyhop folder, YAML, JSON, PDDL) and lists
    the modules it then has; the server imports them, but never a domain's own."""
    from plansmith.cli import _plan_command

    with tempfile.TemporaryDirectory(prefix="plansmith-warm-") as name:
        tmp = Path(name)
        commands = _warm_up_commands(tmp)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child: its coverage is not collected
            os.close(read)
            code = 0
            try:
                devnull = os.open(os.devnull, os.O_RDWR)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
                for words in commands:
                    with contextlib.suppress(BaseException):
                        _plan_command.run_plan(words)
                names = [
                    key
                    for key, module in list(sys.modules.items())
                    if getattr(module, "__name__", None) == key
                    and not _is_domain_module(key, module, name)
                ]
                with os.fdopen(write, "w", encoding="utf-8") as out:
                    out.write("\n".join(names))
            except BaseException:
                code = 1
            os._exit(code)
        os.close(write)
        with os.fdopen(read, encoding="utf-8") as got:
            names = [n for n in got.read().split("\n") if n]
        os.waitpid(pid, 0)
    imported = 0
    for key in names:
        if key in sys.modules:
            continue
        try:
            importlib.import_module(key)
            imported += 1
        except Exception as error:  # a module that cannot be imported by its name alone
            _log(f"warm-up: not imported {key}: {type(error).__name__}")
    return imported


def _is_domain_module(key: str, module: object, tmp: str) -> bool:
    if key in {"__main__", "gtpyhop"} or key.startswith(("gtpyhop.", "_plansmith_")):
        return True
    where = getattr(module, "__file__", None)
    return isinstance(where, str) and where.startswith(tmp)


# --- the server ---------------------------------------------------------------------


class _RefusedError(Exception):
    """A request the server does not run (the client plans in its own process)."""


class _Server:
    def __init__(self, path: str, idle: float, identity: bytes) -> None:
        self.path = path
        self.idle = idle
        self.identity = identity
        self.files = _watched_files()
        self.stamps = _stamps(self.files)
        self.started = time.time()
        self.last = time.monotonic()
        self.children: dict[int, socket.socket] = {}
        self.stoppers: list[socket.socket] = []
        self.served = 0
        self.refused = 0
        self.listening = True
        self.selector = selectors.DefaultSelector()
        self.warm = True  # False: it warms up after the first plan it hands to a child
        self.wake_read, self.wake_write = socket.socketpair()
        self.wake_read.setblocking(False)
        self.wake_write.setblocking(False)
        tmp = f"{path}.{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(tmp)
        self.listener.listen(64)
        os.replace(tmp, path)  # a client never finds a socket nobody listens on yet
        self.inode = os.stat(path).st_ino
        self.listener.setblocking(False)
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(self.wake_read, selectors.EVENT_READ, "wake")
        self.stop_now = False

    # the loop

    def run(self) -> None:
        signal.set_wakeup_fd(self.wake_write.fileno(), warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, self._on_term)
        signal.signal(signal.SIGINT, self._on_term)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        try:
            while True:
                self._reap()
                if self.stop_now and self.listening:
                    self._stop_listening()
                if not self.listening and not self.children:
                    break
                timeout = None
                if self.listening and not self.children:
                    # a server a plan started waits for that plan however short its idle
                    # time (the client connects once it has read the listening line)
                    idle = self.idle if self.warm else max(self.idle, _FIRST_PLAN_WAIT)
                    timeout = self.last + idle - time.monotonic()
                    if timeout <= 0:
                        _log(f"idle for {idle:g} s: exiting")
                        self._stop_listening()
                        continue
                for key, _ in self.selector.select(timeout):
                    if key.data == "accept":
                        self._accept()
                    elif key.data == "wake":
                        with contextlib.suppress(OSError):
                            self.wake_read.recv(4096)
                if not self.warm and self.served:
                    self._warm_up_now()
        finally:
            self._close()

    def _warm_up_now(self) -> None:
        """Import what ``plansmith plan`` imports, once the first request's child plans
        (it imported what it needed itself, as a process started for it would): a
        server started for a plan (``plansmith plan``, auto) does not make that plan
        wait for its warm-up."""
        self.warm = True
        imported = _warm_up()
        gc.collect()
        gc.freeze()
        self.files = _watched_files()
        self.stamps = _stamps(self.files)
        _log(f"warmed up after the first plan: {imported} modules imported")

    def _on_term(self, signum: int, frame: object) -> None:
        self.stop_now = True

    def _stop_listening(self) -> None:
        if not self.listening:
            return
        self.listening = False
        self.selector.unregister(self.listener)
        self.listener.close()
        self._unlink()

    def _unlink(self) -> None:
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)

    def _close(self) -> None:
        self._stop_listening()
        _log(f"stopped after {self.served} plan(s), {self.refused} refused")
        signal.set_wakeup_fd(-1)
        self.selector.close()
        self.wake_read.close()
        self.wake_write.close()
        _release_lock()
        for conn in self.stoppers:  # last: a `stop` returns once the server is gone
            conn.close()

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            conn = self.children.pop(pid, None)
            if conn is None:
                continue
            self.last = time.monotonic()
            cpu = usage.ru_utime + usage.ru_stime
            with contextlib.suppress(OSError):
                conn.sendall(client.encode([b"E", str(status).encode(), f"{cpu:.6f}".encode()]))
            conn.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            try:
                self._handle(conn)
            except _RefusedError as why:
                self.refused += 1
                _log(f"refused a request: {why}")
                with contextlib.suppress(OSError):
                    conn.sendall(client.encode([b"R", str(why).encode()]))
                conn.close()
            except Exception as error:  # a broken request: never the server's end
                _log(f"bad request: {type(error).__name__}: {error}")
                conn.close()

    def _handle(self, conn: socket.socket) -> None:
        conn.setblocking(True)
        conn.settimeout(10)
        cred = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        if int.from_bytes(cred[4:8], sys.byteorder) != os.getuid():
            raise _RefusedError("another user")
        items, fds = _receive(conn)
        try:
            if not items or items[0] != client.PROTOCOL:
                raise _RefusedError("another protocol")
            kind = items[1] if len(items) > 1 else b""
            if kind == b"status":
                conn.sendall(client.encode([b"S", self._status().encode()]))
                conn.close()
            elif kind == b"stop":
                _log("stop requested")
                conn.sendall(client.encode([b"K"]))
                self.stoppers.append(conn)
                self.stop_now = True
            elif kind == b"plan":
                self._plan(conn, items, fds)
            else:
                raise _RefusedError("an unknown request")
        finally:
            for fd in fds:
                os.close(fd)

    def _status(self) -> str:
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        lines = {
            "pid": os.getpid(),
            "socket": self.path,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.started)),
            "idle_timeout_s": f"{self.idle:g}",
            "plans": self.served,
            "refused": self.refused,
            "running": len(self.children),
            "cpu_s": f"{me.ru_utime + me.ru_stime:.6f}",
            "children_cpu_s": f"{kids.ru_utime + kids.ru_stime:.6f}",
            "python": sys.executable,
            "plansmith": os.path.dirname(os.path.dirname(os.path.abspath(client.__file__ or ""))),
        }
        return "".join(f"{key}: {value}\n" for key, value in lines.items())

    def _plan(self, conn: socket.socket, items: list[bytes], fds: list[int]) -> None:
        if len(items) < 8:
            raise _RefusedError("a malformed request")
        if items[2] != self.identity:
            raise _RefusedError("another Python, plansmith installation or module search path")
        if len(fds) != 3:
            raise _RefusedError("no stdin, stdout and stderr")
        if _stamps(self.files) != self.stamps:  # this server is stale: it exits
            self.stop_now = True
            raise _RefusedError("plansmith or a module it imports changed since the server started")
        if not self.listening:
            raise _RefusedError("stopping")
        self.last = time.monotonic()  # only plans keep the server from its idle exit
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child: its coverage is not collected
            code = 1
            try:
                self.selector.close()
                inherited = [self.listener, self.wake_read, self.wake_write, *self.stoppers]
                code = _child(conn, items, fds, [*inherited, *self.children.values()])
            finally:
                os._exit(code)
        self.served += 1
        self.children[pid] = conn


def _receive(conn: socket.socket) -> tuple[list[bytes], list[int]]:
    """A request's items and the file descriptors that came with it (closed when the
    request cannot be read)."""
    data, fds, _, _ = socket.recv_fds(conn, 65536, 3)
    try:
        if len(data) < 4:
            raise _RefusedError("a truncated request")
        size = int.from_bytes(data[:4], "big")
        if size > _MAX_REQUEST:
            raise _RefusedError("a request too large")
        buffer = bytearray(data)
        while len(buffer) < size + 4:
            chunk = conn.recv(min(65536, size + 4 - len(buffer)))
            if not chunk:
                raise _RefusedError("a truncated request")
            buffer += chunk
        return client.decode(bytes(buffer[4 : size + 4])), fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


# --- the child: one `plansmith plan` -------------------------------------------------


def _child(
    conn: socket.socket, items: list[bytes], fds: list[int], inherited: list[socket.socket]
) -> int:  # pragma: no cover - runs in a forked child
    """Run ``plansmith plan`` as the client would have; the exit code."""
    signal.set_wakeup_fd(-1)
    for sock in inherited:
        with contextlib.suppress(OSError):
            sock.close()
    for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _release_lock()
    conn.settimeout(None)
    cwd, mask, stdio, encoding = items[3], int(items[4]), items[5].decode(), items[6]
    count = int(items[7])
    argv = [os.fsdecode(word) for word in items[8 : 8 + count]]
    try:
        os.chdir(cwd)
    except OSError as error:
        conn.sendall(client.encode([b"R", f"cannot enter the folder: {error}".encode()]))
        return 0
    env = {}
    for entry in items[8 + count :]:
        key, _, value = entry.partition(b"=")
        env[key] = value
    if env.get(b"PYTHONHASHSEED") != b"0" and may_name_a_folder(argv[2:]):
        env[CHILD_MARK.encode()] = b"1"  # as in the process run again under the fixed seed
    env[b"PYTHONHASHSEED"] = b"0"  # the server's own seed: the process plans under it
    os.environb.clear()
    os.environb.update(env)
    import locale

    with contextlib.suppress(locale.Error):
        locale.setlocale(locale.LC_CTYPE, "")
    if client._locale_encoding() != encoding:
        conn.sendall(client.encode([b"R", b"another locale encoding"]))
        return 0
    os.umask(mask)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        if fd > 2:
            os.close(fd)
    _new_stdio(stdio)
    sys.argv = argv
    conn.sendall(client.encode([b"A"]))
    _watch(conn)
    return _run(argv)


def _new_stdio(spec: str) -> None:  # pragma: no cover - runs in a forked child
    """``sys.stdin``, ``stdout`` and ``stderr`` on the client's descriptors, with its
    encodings, error handlers and buffering."""
    streams: list[io.TextIOWrapper | None] = []
    for fd, line in enumerate(spec.split("\n")):
        if not line:
            streams.append(None)
            continue
        encoding, errors, line_buffering, write_through = line.split("|")
        raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        buffered = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        streams.append(
            io.TextIOWrapper(
                buffered,
                encoding=encoding or None,
                errors=errors or None,
                line_buffering=line_buffering == "1",
                write_through=write_through == "1",
            )
        )
    sys.stdin, sys.stdout, sys.stderr = streams
    for name, stream in zip(("__stdin__", "__stdout__", "__stderr__"), streams, strict=True):
        setattr(sys, name, stream)  # what a program's own process has there


def _watch(conn: socket.socket) -> None:  # pragma: no cover - runs in a forked child
    """Pass the client's Ctrl-C on as SIGINT; end when the client is gone."""
    main = threading.get_ident()

    def watch() -> None:
        buffer = b""
        while True:
            try:
                chunk = conn.recv(4096)
            except OSError:
                chunk = b""
            if not chunk:  # the client went away: so does its command
                os._exit(1)
            buffer += chunk
            while len(buffer) >= 4:
                size = int.from_bytes(buffer[:4], "big")
                if len(buffer) < 4 + size:
                    break
                message = client.decode(buffer[4 : 4 + size])
                buffer = buffer[4 + size :]
                if message and message[0] == b"I":
                    signal.pthread_kill(main, signal.SIGINT)

    threading.Thread(target=watch, name="plan-server-client", daemon=True).start()


def _run(argv: list[str]) -> int:  # pragma: no cover - runs in a forked child
    """``plansmith plan`` as ``plansmith.cli.main`` runs it; the exit code."""
    from plansmith.cli._plan_command import run_plan

    try:
        code: object = run_plan(argv[2:])
    except SystemExit as stop:  # argparse: --help, bad usage
        code = stop.code
    except KeyboardInterrupt:
        traceback.print_exc()
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    if code is None:
        code = 0
    elif not isinstance(code, int):
        sys.stderr.write(f"{code}\n")
        code = 1
    import atexit

    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            code = 120
        except (OSError, ValueError):
            pass
    return code & 0xFF


# --- starting, stopping, the lock ---------------------------------------------------

_LOCK_FD: list[int] = []


def _take_lock(run_dir: str) -> bool:
    fd = os.open(os.path.join(run_dir, _LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    _LOCK_FD.append(fd)
    return True


def _release_lock() -> None:
    while _LOCK_FD:
        os.close(_LOCK_FD.pop())


def serve(idle: float, *, detach: bool = False, lazy: bool = False) -> int:
    """Run the plan server in this process until it is idle for ``idle`` seconds or
    stopped; the exit code. It prints one line when it listens (``detach``: and then
    leaves stdout, which the starting process reads up to there). ``lazy``: it listens
    at once and warms up after handing its first plan to a child (started by a ``plansmith
    plan`` that waits for it)."""
    identity = client.own_identity()  # before any import changes the search path
    if sys.flags.hash_randomization:
        sys.stderr.write("plan-server: must run under PYTHONHASHSEED=0\n")
        return 2
    if detach and os.fork() != 0:  # the daemon is a grandchild of the starting process,
        os._exit(0)  # which waits for its child and has no daemon to reap later
    try:
        run_dir = ensure_run_dir()
    except OSError as error:
        sys.stderr.write(f"plan-server: {error}\n")
        return 2
    path = os.path.join(run_dir, client.SOCKET_NAME)
    if len(os.fsencode(path)) >= 108:
        sys.stderr.write(f"plan-server: the socket path is too long: {path}\n")
        return 2
    if not _take_lock(run_dir):
        sys.stderr.write("plan-server: already running\n")
        return 1
    try:
        imported = 0 if lazy else _warm_up()
        gc.collect()
        gc.freeze()  # the children do not copy the server's objects to collect them
        server = _Server(path, idle, identity)
        server.warm = not lazy
    except BaseException:
        _release_lock()
        raise
    _log(f"listening on {path}, {imported} modules imported, idle timeout {idle:g} s")
    sys.stdout.write(f"plan server listening on {path} (pid {os.getpid()})\n")
    sys.stdout.flush()
    if detach:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    server.run()
    return 0


def _server_command(idle: float, *, detach: bool) -> list[str]:
    command = [sys.executable, "-P", "-m", "plansmith.cli._plan_server", "--idle", f"{idle:g}"]
    return [*command, "--detach"] if detach else command


def _server_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != CHILD_MARK}
    env["PYTHONHASHSEED"] = "0"
    return env


def start(idle: float, *, foreground: bool = False) -> int:
    """``plansmith plan-server start``: start the server as a daemon (``foreground``:
    become it); the exit code."""
    found = client.request("status")
    if found is not None and found[0] == b"S":
        sys.stdout.write(f"plan server already running\n{found[1].decode()}")
        return 0
    if foreground:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, _server_command(idle, detach=False), _server_env())
    try:
        run_dir = ensure_run_dir()
    except OSError as error:
        sys.stderr.write(f"error: {error}\n")
        return 2
    log_path = os.path.join(run_dir, _LOG_NAME)
    log_fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(log_fd, "ab") as log:
        process = subprocess.Popen(
            _server_command(idle, detach=True),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            env=_server_env(),
            cwd="/",
            start_new_session=True,
        )
    assert process.stdout is not None
    line = process.stdout.readline().decode("utf-8", "replace")  # or "" once it failed
    process.stdout.close()
    code = process.wait()
    if not line:
        sys.stderr.write(
            f"error: the plan server did not start (exit code {code}); see {log_path}\n"
        )
        return 1
    sys.stdout.write(line)
    return 0


def stop() -> int:
    """``plansmith plan-server stop``: stop the server and wait until it has exited."""
    answer = client.request("stop")
    if answer is None:
        sys.stdout.write("no plan server running\n")
        return 0
    sys.stdout.write("plan server stopped\n")
    return 0


def status() -> int:
    """``plansmith plan-server status``: exit code 0 and its figures when it runs, else 1."""
    answer = client.request("status")
    if answer is None or answer[0] != b"S":
        sys.stdout.write("no plan server running\n")
        return 1
    sys.stdout.write(answer[1].decode())
    return 0


def status_figures() -> dict[str, str] | None:
    """The running server's status as a mapping (for the benchmark), or None."""
    answer = client.request("status")
    if answer is None or answer[0] != b"S":
        return None
    pairs = (line.split(": ", 1) for line in answer[1].decode().splitlines() if ": " in line)
    return dict(pairs)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="plansmith plan-server", description=PLAN_SERVER_HELP)
    parser.add_argument("action", choices=("start", "stop", "status"))
    parser.add_argument(
        "--idle",
        type=float,
        default=DEFAULT_IDLE,
        help=f"start: exit after this many seconds without requests (default {DEFAULT_IDLE:g})",
    )
    parser.add_argument(
        "--foreground", action="store_true", help="start: run in this process, not as a daemon"
    )
    return parser


def run_command(argv: Sequence[str]) -> int:
    """``plansmith plan-server ARGV``; the exit code."""
    args = _parser().parse_args(list(argv))
    if args.idle <= 0:
        sys.stderr.write("error: --idle must be > 0\n")
        return 2
    if args.action == "start":
        return start(args.idle, foreground=args.foreground)
    if args.action == "stop":
        return stop()
    return status()


def _main() -> int:
    parser = argparse.ArgumentParser(prog="python -m plansmith.cli._plan_server")
    parser.add_argument("--idle", type=float, default=DEFAULT_IDLE)
    parser.add_argument("--detach", action="store_true")
    parser.add_argument("--lazy", action="store_true")
    args = parser.parse_args()
    return serve(args.idle, detach=args.detach, lazy=args.lazy)


if __name__ == "__main__":
    raise SystemExit(_main())
else:  # imported: the command; the server itself (python -m) does without Typer
    import typer

    from plansmith.cli._app import app

    @app.command(
        "plan-server",
        help=PLAN_SERVER_HELP,
        add_help_option=False,
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )
    def plan_server_command(ctx: typer.Context) -> None:
        """``plansmith plan-server`` through Typer: the words go to :func:`run_command`."""
        raise typer.Exit(run_command(ctx.args))
