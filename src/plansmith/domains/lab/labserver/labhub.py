"""One simulated robot for several role servers: the robot process and how to reach it.

A *robot directory* names one robot. The first role server (facade) started
with ``--robot DIR`` starts the robot process, which loads the simulator once
and listens on a Unix socket (``DIR/robot.sock``); later facades with the same
DIR connect to it. The protocol is one JSON object per line:

    {"op": "hello"}                                  -> {"ok": true, "text": "<robot info>"}
    {"op": "call", "tool": T, "args": {...}, "key": K} -> {"ok": bool, "text": result or message}

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
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["HubError", "Hub", "socket_path", "connect", "serve", "ORPHAN_SECONDS"]

ORPHAN_SECONDS = 60.0
START_SECONDS = 120.0
_MAX_SOCKET_PATH = 100

Answer = Callable[[str, dict[str, Any], "str | None"], tuple[bool, str]]


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

    def __init__(self, robot_dir: Path, answer: Answer, listener: socket.socket) -> None:
        self.robot_dir = robot_dir
        self.answer = answer
        self.listener = listener
        self.clients = 0
        self.served = False
        self.guard = threading.Lock()

    def serve_one(self, conn: socket.socket) -> None:
        with self.guard:
            self.clients += 1
            self.served = True
        try:
            reader = conn.makefile("rb")
            for line in reader:
                conn.sendall(self._reply(line) + b"\n")
        except OSError:
            pass
        finally:
            with self.guard:
                self.clients -= 1
            if self._maybe_exit():
                conn.close()
                os._exit(0)
            conn.close()

    def _reply(self, line: bytes) -> bytes:
        try:
            request = json.loads(line)
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
            os._exit(0)


def serve(robot_dir: Path, answer: Answer, ready_fd: int | None) -> None:
    """Run the robot process: listen, say ready on ``ready_fd``, serve until the last goodbye."""
    path = socket_path(robot_dir)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a stale socket of a robot that died
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(16)
    robot = _Robot(robot_dir, answer, listener)
    timer = threading.Timer(ORPHAN_SECONDS, robot.orphan_check)
    timer.daemon = True
    timer.start()
    if ready_fd is not None:
        os.write(ready_fd, b"ready\n")
        os.close(ready_fd)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=robot.serve_one, args=(conn,), daemon=True).start()
