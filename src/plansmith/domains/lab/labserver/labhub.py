"""One simulated robot for several role servers: the robot process and how to reach it.

A *robot directory* names one robot. The first role server (facade) started
with ``--robot DIR`` starts the robot process, which loads the simulator once
and listens on a Unix socket (``DIR/robot.sock``); later facades with the same
DIR connect to it. The protocol is one JSON object per line:

    {"op": "hello"}                                  -> {"ok": true, "text": "<robot info>"}
    {"op": "call", "tool": T, "args": {...}, "key": K} -> {"ok": bool, "text": result or message}
    {"op": "serve", "role": R}  + two file descriptors -> (no reply; see below)

``serve`` hands the facade's stdin and stdout (pipes to the MCP client) over to
the robot process with the message (``SCM_RIGHTS``). The robot process then
serves the role's MCP session on them itself, in a thread of its own, so a tool
call goes from the client straight to the robot and back, with no facade in
between. The facade keeps the connection open and waits; the robot closes it
when the session ends (the client closed stdin), and ends the session when the
facade goes away first. ``call`` is the facade-in-between path, for a facade
whose stdio are not pipes or sockets.

Connecting, and starting the robot, happen under an exclusive ``flock`` on
``DIR/robot.lock``. When its last facade disconnects, the robot process takes
the same lock, removes its socket and exits, and only then closes that last
connection; a facade that waits for that close on shutdown (``Hub.close``) thus
leaves no robot behind, and the next facade with the same DIR gets a fresh one.
A robot process that no facade reaches within ``ORPHAN_SECONDS`` exits too.
Standard library only.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import select
import socket
import stat
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "HubError",
    "Hub",
    "socket_path",
    "connect",
    "serve",
    "exit_now",
    "is_stream",
    "hand_over",
    "BEFORE_EXIT",
    "ORPHAN_SECONDS",
]

ORPHAN_SECONDS = 60.0
START_SECONDS = 120.0
_MAX_SOCKET_PATH = 100

Answer = Callable[[str, dict[str, Any], "str | None"], tuple[bool, str]]
# serves one role's MCP session on (stdin fd, stdout fd) until it ends or the
# connection (the facade) closes; owns and closes the two descriptors
Session = Callable[[str, int, int, socket.socket], None]


BEFORE_EXIT: list[Callable[[], None]] = []  # run by exit_now (a profile dump, for instance)


def exit_now(code: int) -> None:
    """``os._exit(code)`` after the ``BEFORE_EXIT`` hooks (no waiting for the simulator's
    threads)."""
    for hook in BEFORE_EXIT:
        with contextlib.suppress(Exception):
            hook()
    os._exit(code)


class HubError(Exception):
    """The robot process could not be started or reached."""


def socket_path(robot_dir: Path) -> Path:
    """``DIR/robot.sock``, or a short path in the temp dir when that is too long for a socket."""
    path = robot_dir / "robot.sock"
    if len(str(path)) <= _MAX_SOCKET_PATH:
        return path
    digest = hashlib.sha256(str(robot_dir).encode()).hexdigest()[:20]
    return Path(tempfile.gettempdir()) / f"plansmith-lab-{digest}.sock"


@contextlib.contextmanager
def _locked(robot_dir: Path) -> Iterator[None]:
    with open(robot_dir / "robot.lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# --- the facade side -------------------------------------------------------------------


def _hello(path: Path) -> socket.socket | None:
    """A connection that the robot answered, or None if there is no live robot at ``path``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    try:
        sock.connect(str(path))
        sock.sendall(b'{"op":"hello"}\n')
        with sock.makefile("rb") as reader:
            line = reader.readline()
    except OSError:
        sock.close()
        return None
    if not line:
        sock.close()
        return None
    sock.settimeout(None)
    return sock


def _start(robot_dir: Path, command: list[str]) -> None:
    """Start the robot process and wait until it says it is ready."""
    read_end, write_end = os.pipe()
    with open(robot_dir / "robot.log", "ab") as log:
        process = subprocess.Popen(
            [*command, "--ready-fd", str(write_end)],
            pass_fds=(write_end,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,  # outlives the facade that started it, and its signals
        )
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], START_SECONDS)
        said = os.read(read_end, 64) if ready else b""
    finally:
        os.close(read_end)
    if said.strip() != b"ready":
        if process.poll() is None:
            process.kill()
        raise HubError(
            f"the robot process did not start (exit code {process.poll()}); "
            f"see {robot_dir / 'robot.log'}"
        )


def connect(robot_dir: Path, command: list[str]) -> socket.socket:
    """A connection to the robot of ``robot_dir``; starts it with ``command`` if none runs."""
    robot_dir.mkdir(parents=True, exist_ok=True)
    path = socket_path(robot_dir)
    with _locked(robot_dir):
        sock = _hello(path)
        if sock is None:
            _start(robot_dir, command)
            sock = _hello(path)
        if sock is None:
            raise HubError(f"the robot process does not answer at {path}")
        return sock


def is_stream(fd: int) -> bool:
    """Whether ``fd`` is a pipe or a socket (what ``hand_over`` and event loops can use)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def hand_over(sock: socket.socket, role: str, stdin_fd: int, stdout_fd: int) -> None:
    """Give the robot our MCP stdio for ``role``; return when the robot closes ``sock``.

    The caller's copies of the two descriptors are closed once they are sent, so
    the client sees the end of the stream when the robot closes its copies.
    """
    request = json.dumps({"op": "serve", "role": role}).encode() + b"\n"
    socket.send_fds(sock, [request], [stdin_fd, stdout_fd])
    for fd in (stdin_fd, stdout_fd):
        with contextlib.suppress(OSError):
            os.close(fd)
    with contextlib.suppress(OSError):
        while sock.recv(65536):
            pass
    sock.close()


class Hub:
    """The facade's side of one connection: forwards tool calls, one at a time."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._lock: asyncio.Lock | None = None

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._streams is None:
            self._streams = await asyncio.open_unix_connection(sock=self._sock, limit=2**26)
        return self._streams

    async def answer(self, tool: str, args: dict[str, Any], key: str | None) -> tuple[bool, str]:
        if self._lock is None:
            self._lock = asyncio.Lock()
        request = {"op": "call", "tool": tool, "args": args, "key": key}
        async with self._lock:
            reader, writer = await self._open()
            writer.write(json.dumps(request, separators=(",", ":")).encode() + b"\n")
            await writer.drain()
            line = await reader.readline()
        if not line:
            return False, "the robot process has gone away; restart the lab servers"
        reply = json.loads(line)
        return bool(reply["ok"]), str(reply["text"])

    async def close(self, timeout: float = 10.0) -> None:
        """Say goodbye and wait until the robot has counted it (and exited, if it was the last)."""
        with contextlib.suppress(Exception):  # a robot that is gone already needs no goodbye
            reader, writer = await self._open()
            writer.write_eof()
            async with asyncio.timeout(timeout):
                while await reader.read(65536):
                    pass
            writer.close()
            await writer.wait_closed()


# --- the robot side --------------------------------------------------------------------


class _Robot:
    """The robot process's bookkeeping: live connections, and when to exit."""

    def __init__(
        self, robot_dir: Path, answer: Answer, listener: socket.socket, session: Session | None
    ) -> None:
        self.robot_dir = robot_dir
        self.answer = answer
        self.session = session
        self.listener = listener
        self.clients = 0
        self.served = False
        self.guard = threading.Lock()

    def serve_one(self, conn: socket.socket) -> None:
        with self.guard:
            self.clients += 1
            self.served = True
        try:
            for line, fds in _messages(conn):
                request = _request(line)
                if request.get("op") == "serve" and len(fds) == 2 and self.session is not None:
                    self.session(str(request.get("role")), fds[0], fds[1], conn)
                    break
                for fd in fds:  # descriptors that came with anything else are not ours
                    os.close(fd)
                conn.sendall(self._reply(request) + b"\n")
        except OSError:
            pass
        finally:
            with self.guard:
                self.clients -= 1
            if self._maybe_exit():
                conn.close()
                exit_now(0)
            conn.close()

    def _reply(self, request: dict[str, Any]) -> bytes:
        try:
            if "bad" in request:
                raise ValueError(request["bad"])
            if request.get("op") == "hello":
                ok, text = True, json.dumps({"pid": os.getpid(), "dir": str(self.robot_dir)})
            else:
                ok, text = self.answer(
                    request["tool"], request.get("args") or {}, request.get("key")
                )
        except (ValueError, KeyError, TypeError) as exc:
            ok, text = False, f"bad request to the robot process: {exc}"
        return json.dumps({"ok": ok, "text": text}, separators=(",", ":")).encode()

    def _maybe_exit(self) -> bool:
        """With the lock held: if no facade is left, remove the socket and say to exit."""
        with _locked(self.robot_dir), self.guard:
            if self.clients:
                return False
            with contextlib.suppress(OSError):
                socket_path(self.robot_dir).unlink()
            return True

    def orphan_check(self) -> None:
        with self.guard:
            served = self.served
        if not served and self._maybe_exit():
            exit_now(0)


def _request(line: bytes) -> dict[str, Any]:
    try:
        request = json.loads(line)
    except ValueError as exc:
        return {"bad": str(exc)}
    return request if isinstance(request, dict) else {"bad": "not a JSON object"}


def _messages(conn: socket.socket) -> Iterator[tuple[bytes, list[int]]]:
    """The lines that arrive on ``conn``, each with the descriptors that came with it."""
    buffer, fds = b"", list[int]()
    while True:
        data, more, _, _ = socket.recv_fds(conn, 1 << 16, 4)
        if not data:
            for fd in fds + more:
                os.close(fd)
            return
        buffer += data
        fds += more
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield line, fds
            fds = []


def serve(
    robot_dir: Path, answer: Answer, ready_fd: int | None, session: Session | None = None
) -> None:
    """Run the robot process: listen, say ready on ``ready_fd``, serve until the last goodbye.

    ``session``: how to serve a role's MCP session on descriptors handed over
    (none: only ``hello`` and ``call``).
    """
    path = socket_path(robot_dir)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a stale socket of a robot that died
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(16)
    robot = _Robot(robot_dir, answer, listener, session)
    timer = threading.Timer(ORPHAN_SECONDS, robot.orphan_check)
    timer.daemon = True
    timer.start()
    if ready_fd is not None:
        os.write(ready_fd, b"ready\n")
        os.close(ready_fd)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=robot.serve_one, args=(conn,), daemon=True).start()
