"""The HTML shell every page shares (head, icon, navigation, security headers): used by
the pages and by the error page a browser gets for a bad page request."""

from __future__ import annotations

from html import escape

from fastapi.responses import HTMLResponse

__all__ = ["html_page"]

_NAV = (
    '<header><a class="brand" href="/">plansmith</a>'
    '<nav><a href="/">domains</a><a href="/runs">runs</a><a href="/stats">stats</a></nav>'
    '<span id="status-line" role="status" aria-live="polite"></span></header>'
)

_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'",
    "X-Content-Type-Options": "nosniff",
}


def html_page(
    title: str,
    body: str,
    *,
    scripts: tuple[str, ...] = (),
    data: dict[str, str] | None = None,
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> HTMLResponse:
    """A page titled ``title`` with ``body`` (HTML, already escaped) in ``<main>``, then
    ``static/<script>.js`` for each script; ``data`` goes to ``<body data-*>``."""
    attrs = "".join(f' data-{k.replace("_", "-")}="{escape(v)}"' for k, v in (data or {}).items())
    tags = "".join(f'<script src="/static/{s}.js"></script>' for s in scripts)
    html = (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · plansmith</title>"
        '<link rel="icon" type="image/svg+xml" href="/static/favicon.svg">'
        '<link rel="stylesheet" href="/static/app.css"></head>'
        f"<body{attrs}>{_NAV}<main>{body}</main>{tags}</body></html>"
    )
    return HTMLResponse(html, status_code=status, headers={**_HEADERS, **(headers or {})})
