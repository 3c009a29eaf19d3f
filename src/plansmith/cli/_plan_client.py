"""The client side of the plan server (``plansmith plan-server``, see ``_plan_server``).

``plansmith plan ...`` calls :func:`hand_over` before it imports anything else: when
a plan server of this user listens, the command's words, current directory,
environment and umask go to it with the process's stdin, stdout and stderr (their
file descriptors, passed over the socket), a child of the server runs the command
there under ``PYTHONHASHSEED=0``, and this process waits for its exit status. It
returns None (run the command here, as without a server) when there is no server,
when the server refuses (another Python, another plansmith installation, files
changed since it started) or when ``PLANSMITH_PLAN_SERVER=0``.

When none listens and the command would otherwise start Python again under the fixed
seed (a GTPyhop folder, this process under another seed), :func:`start_and_hand_over`
starts one instead (``PLANSMITH_PLAN_SERVER`` unset or ``auto``; ``manual``: only a
server started by ``plansmith plan-server start`` is used): the cost is that start,
which listens at once and warms up after handing this plan to its child, and later
plans are handed over to it until it has been idle ``PLANSMITH_PLAN_SERVER_IDLE``
seconds (default 600).

This module imports only built-in modules (``_socket``, ``_locale``): it runs in
every ``plansmith plan`` process, whose start-up it must not slow down.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket
    from collections.abc import Sequence

__all__ = [
    "AUTO_IDLE",
    "DISABLE_VARIABLE",
    "IDLE_VARIABLE",
    "auto_start_wanted",
    "start_and_hand_over",
    "PROTOCOL",
    "REPORT_VARIABLE",
    "SOCKET_NAME",
    "decode",
    "encode",
    "hand_over",
    "identity",
    "request",
    "run_dir",
    "socket_path",
]

PROTOCOL = b"plansmith-plan-server/1"
SOCKET_NAME = "plan-server.sock"
DISABLE_VARIABLE = "PLANSMITH_PLAN_SERVER"  # "0": never; "manual": never start one
IDLE_VARIABLE = "PLANSMITH_PLAN_SERVER_IDLE"  # seconds an auto-started server waits
AUTO_IDLE = "600"
REPORT_VARIABLE = "PLANSMITH_PLAN_SERVER_REPORT"  # a file: append the child's CPU seconds
_LENGTH = 4  # bytes of a length: big-endian, unsigned
_FOUND: list[bool] = []  # a server listened to this process's hand_over


def run_dir() -> str:
    """The per-user folder of the server's socket, lock and log (not created here):
    ``$XDG_RUNTIME_DIR/plansmith``, else ``$XDG_CACHE_HOME/plansmith/run`` (by default
    ``~/.cache/plansmith/run``)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime):
        return os.path.join(runtime, "plansmith")
    cache = os.environ.get("XDG_CACHE_HOME", "")
    if not (cache and os.path.isabs(cache)):
        cache = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "plansmith", "run")


def socket_path() -> str:
    """The server's socket: :func:`run_dir` / ``plan-server.sock``."""
    return os.path.join(run_dir(), SOCKET_NAME)


def private_dir(path: str) -> bool:
    """Whether ``path`` is a folder (not a link) of this user that only they can use."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    is_dir = (info.st_mode & 0o170000) == 0o040000
    return is_dir and info.st_uid == os.getuid() and info.st_mode & 0o077 == 0


def identity(path: Sequence[str], flags: Sequence[int]) -> bytes:
    """What a process's plan must share with the server's to be planned there: the
    Python (version, prefix, flags, options), the plansmith package and the module
    search path. ``flags`` leaves out the hash seed and ``-P``, which differ."""
    import plansmith  # already imported: this module is plansmith.cli's

    words = [
        f"{sys.hexversion:x}",
        sys.prefix,
        sys.implementation.cache_tag or "",
        repr(tuple(flags)),
        repr(sys.warnoptions),
        repr(sorted(sys._xoptions.items())),
        os.path.dirname(os.path.abspath(plansmith.__file__ or "")),
        *path,
    ]
    return "\0".join(words).encode("utf-8", "surrogateescape")


def _flags() -> list[int]:
    skip = {"hash_randomization", "safe_path"}
    return [getattr(sys.flags, name) for name in _FLAG_NAMES if name not in skip]


_FLAG_NAMES = (
    "debug",
    "inspect",
    "interactive",
    "optimize",
    "dont_write_bytecode",
    "no_user_site",
    "no_site",
    "ignore_environment",
    "verbose",
    "bytes_warning",
    "quiet",
    "hash_randomization",
    "isolated",
    "dev_mode",
    "utf8_mode",
    "warn_default_encoding",
    "safe_path",
    "int_max_str_digits",
)


def own_identity() -> bytes:
    """:func:`identity` of this process (its search path without the script's folder,
    which ``python -P`` leaves out)."""
    path = sys.path if sys.flags.safe_path else sys.path[1:]
    return identity(path, _flags())


# --- framing: a message is a list of byte strings -------------------------------


def encode(items: Sequence[bytes]) -> bytes:
    """One message: its length, then each item's length and bytes."""
    body = b"".join(len(item).to_bytes(_LENGTH, "big") + item for item in items)
    return len(body).to_bytes(_LENGTH, "big") + body


def decode(body: bytes) -> list[bytes]:
    """The items of a message's body (without its leading length)."""
    items, at = [], 0
    while at < len(body):
        size = int.from_bytes(body[at : at + _LENGTH], "big")
        at += _LENGTH
        items.append(body[at : at + size])
        at += size
        if at > len(body):
            raise ValueError("truncated message")
    return items


class _Reader:
    """Reads messages from a connected socket."""

    def __init__(self, sock: _socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def _fill(self, size: int) -> bool:
        while len(self.buffer) < size:
            chunk = self.sock.recv(65536)
            if not chunk:
                return False
            self.buffer += chunk
        return True

    def next(self) -> list[bytes] | None:
        """The next message; None at the end of the stream."""
        if not self._fill(_LENGTH):
            return None
        size = int.from_bytes(self.buffer[:_LENGTH], "big")
        if not self._fill(_LENGTH + size):
            return None
        body = self.buffer[_LENGTH : _LENGTH + size]
        self.buffer = self.buffer[_LENGTH + size :]
        return decode(body)


def _connect(path: str) -> _socket.socket | None:
    """A socket connected to the server at ``path`` (run by this user), or None; a
    socket that nobody listens on any more is removed."""
    import _socket

    if not private_dir(os.path.dirname(path)):
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except ConnectionRefusedError:  # the server is gone: its socket stayed
        sock.close()
        _remove_stale(path)
        return None
    except OSError:
        sock.close()
        return None
    try:
        cred = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    except OSError:
        sock.close()
        return None
    if int.from_bytes(cred[4:8], sys.byteorder) != os.getuid():
        sock.close()
        return None
    return sock


def _remove_stale(path: str) -> None:
    try:
        if (os.lstat(path).st_mode & 0o170000) == 0o140000:  # a socket
            os.unlink(path)
    except OSError:
        pass


def _stdio() -> bytes:
    parts = []
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        if stream is None:
            parts.append("")
            continue
        parts.append(
            "|".join(
                (
                    str(getattr(stream, "encoding", "") or ""),
                    str(getattr(stream, "errors", "") or ""),
                    "1" if getattr(stream, "line_buffering", False) else "0",
                    "1" if getattr(stream, "write_through", False) else "0",
                )
            )
        )
    return "\n".join(parts).encode()


def _locale_encoding() -> bytes:
    import _locale

    getencoding = getattr(_locale, "getencoding", None)
    if getencoding is not None:
        return str(getencoding()).encode()
    return str(_locale.nl_langinfo(_locale.CODESET)).encode()


def hand_over(argv: Sequence[str]) -> int | None:
    """Run ``plansmith plan`` (``argv``: the whole command line, ``plan`` second) on
    this user's plan server; its exit code, or None when it must run here."""
    if os.environ.get(DISABLE_VARIABLE, "") == "0" or sys.flags.ignore_environment:
        return None
    if "PLANSMITH_HASH_SEED_CHILD" in os.environ:  # run again under the fixed seed: local
        return None
    sock = _connect(socket_path())
    if sock is None:
        return None
    _FOUND.append(True)  # one listens (it may refuse): none is started for this plan
    try:
        return _hand_over(sock, argv)
    finally:
        sock.close()


def _hand_over(sock: _socket.socket, argv: Sequence[str]) -> int | None:
    import _socket

    mask = os.umask(0o022)
    os.umask(mask)
    try:
        cwd = os.getcwdb()
    except OSError:  # a folder removed under the process: let the command say so
        return None
    env = [key + b"=" + value for key, value in os.environb.items()]
    words = [os.fsencode(word) for word in argv]
    message = encode(
        [
            PROTOCOL,
            b"plan",
            own_identity(),
            cwd,
            str(mask).encode(),
            _stdio(),
            _locale_encoding(),
            str(len(words)).encode(),
            *words,
            *env,
        ]
    )
    fds = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (0, 1, 2))
    try:
        sent = sock.sendmsg([message], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
        if sent < len(message):
            sock.sendall(message[sent:])
        reader = _Reader(sock)
        answer = reader.next()
    except KeyboardInterrupt:
        sys.stderr.write("plan: interrupted\n")
        return 130
    except (OSError, ValueError):  # a closed stdin or stdout, a server gone: plan here
        return None
    if answer is None or answer[0] != b"A":  # refused ("R"), or the server went away
        return None
    return _wait(sock, reader)


def _wait(sock: _socket.socket, reader: _Reader) -> int:
    """The exit code of the child running the command; Ctrl-C is passed on to it."""
    while True:
        try:
            message = reader.next()
        except KeyboardInterrupt:
            try:
                sock.sendall(encode([b"I"]))
            except OSError:  # the child has just ended: its status follows
                continue
            continue
        except (OSError, ValueError):
            message = None
        if message is None:
            sys.stderr.write("plansmith: the plan server went away while it planned\n")
            return 1
        if message[0] == b"E":
            status, cpu = int(message[1]), message[2].decode()
            _report(cpu)
            return _exit_code(status)


def _report(cpu: str) -> None:
    target = os.environ.get(REPORT_VARIABLE, "")
    if not target:
        return
    try:
        with open(target, "a", encoding="utf-8") as out:
            out.write(cpu + "\n")
    except OSError:
        pass


def _exit_code(status: int) -> int:
    """The exit code of a wait status; a child killed by a signal kills this process
    with the same signal (a shell then sees the same status as without the server)."""
    if os.WIFSIGNALED(status):
        import signal  # rare: the cost of its import does not matter here

        number = os.WTERMSIG(status)
        try:
            signal.signal(number, signal.SIG_DFL)
            os.kill(os.getpid(), number)
        except (OSError, ValueError):
            pass
        return 128 + number
    return os.waitstatus_to_exitcode(status)


def request(kind: str) -> list[bytes] | None:
    """Ask this user's plan server for ``status`` or to ``stop``: its answer (for
    ``stop``, once it has exited), or None when none listens."""
    sock = _connect(socket_path())
    if sock is None:
        return None
    try:
        sock.sendall(encode([PROTOCOL, kind.encode()]))
        reader = _Reader(sock)
        answer = reader.next()
        if kind == "stop" and answer is not None:
            while reader.next() is not None:  # the server closes it as it exits
                pass
        return answer
    except OSError:
        return None
    finally:
        sock.close()


# --- starting a server for this plan -------------------------------------------------


def auto_start_wanted() -> bool:
    """Whether ``plansmith plan`` may start a plan server (none listens)."""
    if sys.flags.ignore_environment:
        return False
    return os.environ.get(DISABLE_VARIABLE, "auto") in ("", "auto")


def start_and_hand_over(argv: Sequence[str]) -> int | None:
    """Start this user's plan server (detached, lazy: it warms up after this plan),
    then hand ``argv`` over to it (or to the one another process started meanwhile);
    the exit code, or None when it must run here (also when one was listening already:
    it refused this plan)."""
    if _FOUND:
        return None
    _start_server()
    return hand_over(argv)


def _idle() -> str:
    value = os.environ.get(IDLE_VARIABLE, "")
    try:
        return value if float(value) > 0 else AUTO_IDLE
    except ValueError:
        return AUTO_IDLE


def _log_file(fallback: int) -> int:
    """The server's log, ``plan-server.log`` in :func:`run_dir` (made private if need
    be, as the server makes it), open for appending; ``fallback`` when it cannot be."""
    folder = run_dir()
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if not private_dir(folder):
            return fallback
        return os.open(
            os.path.join(folder, "plan-server.log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600
        )
    except OSError:
        return fallback


def _start_server() -> bool:
    """Start the server as a daemon (its own session, cwd ``/``, stdin at /dev/null)
    and wait for its line on stdout; whether it
    listens. One that finds another running exits at once: then False. Its stderr
    is its log file, as for ``plansmith plan-server start``."""
    env = {k: v for k, v in os.environ.items() if k != "PLANSMITH_HASH_SEED_CHILD"}
    env["PYTHONHASHSEED"] = "0"
    command = [
        sys.executable, "-P", "-m", "plansmith.cli._plan_server",
        "--idle", _idle(), "--detach", "--lazy",
    ]  # fmt: skip
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return False
    if pid == 0:  # pragma: no cover - the child becomes the server
        try:
            os.close(read)
            os.setsid()
            os.chdir("/")
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(write, 1)
            os.dup2(_log_file(null), 2)
            os.execve(sys.executable, command, env)
        finally:
            os._exit(127)
    os.close(write)
    got = b""
    try:
        while b"\n" not in got:
            chunk = os.read(read, 4096)
            if not chunk:
                break
            got += chunk
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    finally:
        os.close(read)
        os.waitpid(pid, 0)  # the server's first process: it leaves once it forked the daemon
    return got.startswith(b"plan server listening")
