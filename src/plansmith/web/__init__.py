"""The web plan controller: see a plan, approve it by its hash, and watch it run over SSE.

``create_app(engine_or_settings)`` builds the FastAPI app (``plansmith serve`` runs
it with uvicorn). Pages are served by the app itself; their scripts live in
``static/`` and use no CDN.
"""

from plansmith.web._app import STATIC_DIR, create_app
from plansmith.web._catalog import DomainEntry, find_domains
from plansmith.web._controller import Controller
from plansmith.web._feed import Feed
from plansmith.web._report import run_report
from plansmith.web._server import StoppingServer
from plansmith.web._settings import LOOPBACK_HOSTS, WebSettings
from plansmith.web._sse import event_payload, format_sse, sse_stream
from plansmith.web._views import RunDetail, fold_view, step_json

__all__ = [
    "create_app",
    "WebSettings",
    "LOOPBACK_HOSTS",
    "STATIC_DIR",
    "Controller",
    "DomainEntry",
    "find_domains",
    "Feed",
    "RunDetail",
    "fold_view",
    "step_json",
    "run_report",
    "event_payload",
    "format_sse",
    "sse_stream",
    "StoppingServer",
]
