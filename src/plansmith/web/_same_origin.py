"""The cross-site request check (against CSRF) of every state-changing request.

A request whose method changes state (``POST``, ``PUT``, ``PATCH``, ``DELETE``) is
refused

- with a 403 (``CrossSiteRequestError``, location ``header.origin``) when its
  ``Origin`` is not the server's own (its ``Host``, which on a loopback address the
  host check has already trusted; see ``_hosts``), ``null`` included, or when the
  browser says it is not same-origin (``Sec-Fetch-Site: cross-site`` or ``same-site``);
- with a 415 (``UnsupportedMediaTypeError``, location ``header.content-type``) when its
  ``Content-Type`` is not ``application/json``, a bodyless request (``cancel``)
  included: a page of another site cannot send that content type without a CORS
  preflight, which this app never grants. The one exception is a file upload
  (``POST /api/uploads``): it is sent as ``multipart/form-data`` and must carry the
  header ``X-Plansmith-Upload`` (403 without it), which a page of another site cannot
  send without that preflight either.

A request with no ``Origin`` and no ``Sec-Fetch-Site`` (curl, SDK clients) passes the
first check. It is an app-wide dependency, so it runs after routing (an unknown path is
still a 404, a method a path does not take a 405) and before the token check, the
request's body and the operation itself: a refused request changes nothing.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from fastapi import Request

from plansmith.web._errors import RequestRefusedError

__all__ = ["same_origin_only", "STATE_CHANGING"]

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})

#: what the browser's ``Sec-Fetch-Site`` may say of a state-changing request
_SAME_ORIGIN = frozenset({"same-origin", "none"})

_DEFAULT_PORTS = {"http": "80", "https": "443"}

UPLOAD_PATH = "/api/uploads"  # the one operation that takes multipart/form-data
UPLOAD_HEADER = "x-plansmith-upload"

_ORIGIN_HINT = (
    "a state-changing request is taken only from this server's own pages (an Origin "
    "whose host and port are the request's Host) or from a client that sends no Origin "
    "(curl, an SDK): open the pages from this server, e.g. http://127.0.0.1:PORT/"
)

_JSON_HINT = (
    "send the body as JSON with the header `Content-Type: application/json` (a request "
    "without a body, such as cancel, sends it too)"
)


def _authority(netloc: str, scheme: str) -> str:
    """``host[:port]`` lowercased, without the scheme's default port."""
    netloc = netloc.strip().lower()
    default = _DEFAULT_PORTS.get(scheme)
    if default and netloc.endswith(":" + default):
        netloc = netloc[: -len(default) - 1]
    return netloc


def _foreign_origin(origin: str, host: str | None) -> bool:
    """Whether ``origin`` is another site than the ``Host`` the request was sent to."""
    if host is None or origin.strip().lower() == "null":
        return True
    try:
        parts = urlsplit(origin.strip())
    except ValueError:
        return True
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.netloc or parts.path not in ("", "/"):
        return True
    return _authority(parts.netloc, scheme) != _authority(host, scheme)


def same_origin_only(request: Request) -> None:
    """Refuse a state-changing request from another site (403) or not JSON (415)."""
    if request.method not in STATE_CHANGING:
        return
    headers = request.headers
    origin = headers.get("origin")
    if origin is not None and _foreign_origin(origin, headers.get("host")):
        raise RequestRefusedError(
            403,
            "CrossSiteRequestError",
            f"origin {origin!r} refused: a {request.method} comes only from this server's "
            "own pages",
            location="header.origin",
            hint=_ORIGIN_HINT,
        )
    fetch_site = headers.get("sec-fetch-site", "").strip().lower()
    if fetch_site and fetch_site not in _SAME_ORIGIN:
        raise RequestRefusedError(
            403,
            "CrossSiteRequestError",
            f"a {fetch_site} {request.method} is refused (Sec-Fetch-Site: {fetch_site}): "
            "it comes only from this server's own pages",
            location="header.sec-fetch-site",
            hint=_ORIGIN_HINT,
        )
    content_type = headers.get("content-type")
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    if request.url.path == UPLOAD_PATH and media_type == "multipart/form-data":
        if not headers.get(UPLOAD_HEADER):
            raise RequestRefusedError(
                403,
                "CrossSiteRequestError",
                "an upload must carry the header X-Plansmith-Upload",
                location="header.x-plansmith-upload",
                hint="send the file with the header `X-Plansmith-Upload: 1` (this "
                "server's pages do)",
            )
        return
    if media_type != "application/json":
        shown = repr(content_type) if content_type is not None else "none"
        raise RequestRefusedError(
            415,
            "UnsupportedMediaTypeError",
            f"a {request.method} must be sent as application/json (Content-Type: {shown})",
            location="header.content-type",
            hint=_JSON_HINT,
        )
