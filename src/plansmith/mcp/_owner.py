"""Which client session a call belongs to, and plansmith errors as typed tool errors.

A run belongs to the owner that started it. The owner is only ever something a
stranger cannot claim:

- stdio and in-process connections have no headers: one client per server, ``local``;
- an ``Authorization`` header (hashed): the client's secret, or an authenticating
  proxy's;
- the ``Mcp-Session-Id`` of a 2025-11-25 (legacy) HTTP session, minted by the SDK's
  session manager (random) and checked by it on every request. A 2026-07-28 request
  goes through no session manager, so the header is not trusted there;
- an ``X-Plansmith-Session`` header issued by this server's ``open_session`` tool:
  ``ID.MAC``, the MAC an HMAC-SHA256 of the ID under a secret that never leaves the
  server. A value the server did not issue (a chosen name, a forged MAC) is refused.

An HTTP call with none of these is anonymous. Anonymous calls may plan and approve
(plans are by content hash, shared by design) but not start, read, list or cancel a
run, unless the server shares every run (``--share-runs``): two strangers never share
an identity by default.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Mapping

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from plansmith.errors import InputError, PlansmithError

__all__ = ["Owners", "tool_error", "SESSION_HEADER", "ANONYMOUS"]

SESSION_HEADER = "x-plansmith-session"
ANONYMOUS = "anonymous"
_MAC_CHARS = 32  # 128 bits of HMAC-SHA256, hex


def _lowered(headers: Mapping[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


class Owners:
    """Issues session values and tells the owner of a call (see the module docstring).

    ``secret``: the HMAC key (default: 32 random bytes, so issued values last as long
    as this server, like its runs). ``shared()``: whether every run is shared, which
    lets anonymous HTTP calls own and read runs.
    """

    def __init__(
        self, secret: bytes | None = None, *, shared: Callable[[], bool] = lambda: False
    ) -> None:
        self._secret = secret if secret is not None else secrets.token_bytes(32)
        self._shared = shared

    def _mac(self, session_id: str) -> str:
        digest = hmac.new(self._secret, session_id.encode(), hashlib.sha256).hexdigest()
        return digest[:_MAC_CHARS]

    def issue(self) -> str:
        """A new session value: ``ID.MAC`` (a random ID and its HMAC)."""
        session_id = secrets.token_hex(16)
        return f"{session_id}.{self._mac(session_id)}"

    def _session(self, value: str) -> str:
        session_id, dot, mac = value.strip().rpartition(".")
        if not dot or not session_id or not hmac.compare_digest(mac, self._mac(session_id)):
            raise InputError(
                "the X-Plansmith-Session header is not a session this server issued",
                hint="call open_session and send the value it returns, unchanged, "
                "as the X-Plansmith-Session header (values end with the server)",
            )
        return "session:" + session_id

    def label(self, headers: Mapping[str, str] | None, protocol_version: str | None) -> str:
        """Who the call is (``anonymous`` allowed): for approvals and plans."""
        if headers is None:
            return "local"
        lowered = _lowered(headers)
        auth = lowered.get("authorization")
        if auth:
            return "token:" + hashlib.sha256(auth.encode()).hexdigest()[:32]
        legacy = protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
        session = lowered.get("mcp-session-id")
        if session and legacy:  # checked by the SDK's session manager
            return "mcp-session:" + session
        named = lowered.get(SESSION_HEADER)
        if named:
            return self._session(named)
        return ANONYMOUS

    def owner(self, headers: Mapping[str, str] | None, protocol_version: str | None) -> str:
        """The owner of a call that starts, reads, lists or cancels runs.

        Raises ``InputError`` for an anonymous HTTP call unless runs are shared.
        """
        owner = self.label(headers, protocol_version)
        if owner == ANONYMOUS and not self._shared():
            raise InputError(
                "over HTTP a run needs an owner, and this call names none",
                hint="call open_session and send its value as the X-Plansmith-Session "
                "header on every request (or send an Authorization header, or use a "
                "2025-11-25 session); to let every client see every run, start the "
                "server with --share-runs",
            )
        return owner


def tool_error(error: PlansmithError) -> ToolError:
    """``ErrorType: message`` with its location and hint: what the host shows the user."""
    return ToolError(f"{type(error).__name__}: {error}")
