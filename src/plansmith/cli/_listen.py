"""A listening socket for the HTTP faces (``serve``, ``mcp --transport http``): bound
before the server starts, so that the URL they print is one that answers, and
``--port 0`` picks a free port."""

from __future__ import annotations

import socket

from plansmith.errors import InputError

__all__ = ["listen", "url_of"]


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` (0: a free port) and listening, so that the
    URL printed is one that answers."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as error:
        raise InputError(
            f"--host {host}: {error.strerror or error}", hint="give an address of this machine"
        ) from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as error:
        sock.close()
        raise InputError(
            f"cannot listen on {host}:{port}: {error.strerror or error}",
            hint="choose another --port (0 picks a free one)",
        ) from None
    return sock


def url_of(sock: socket.socket, path: str = "/") -> str:
    """The URL of ``path`` on the address ``sock`` listens on."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"
