"""What ``plansmith serve`` is started with: the engine's home, the default server and
binding files, the domains directory and the optional API token."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["WebSettings", "LOOPBACK_HOSTS"]

#: Host names a loopback server answers to (others are refused: DNS rebinding).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


@dataclass(frozen=True, slots=True)
class WebSettings:
    """Settings of one web app; ``token`` (when set) must be sent as a bearer token."""

    home: Path = Path(".plansmith")
    domains: Path | None = None
    servers: Path | None = None
    bindings: Path | None = None
    token: str | None = None
    host: str = "127.0.0.1"
    max_parallel: int = 8
    #: Tiers that need a person before a run goes on; the web asks for every tier by
    #: default, so that every run stops at its plan page first.
    approve_tiers: str = "all"
    #: the run log: None (``home/runs.db``), a SQLite path or a ``postgresql://`` URL
    log: str | None = None
    #: ``local`` or ``dask`` (with ``scheduler``, the Dask scheduler's address)
    executor: str = "local"
    scheduler: str | None = None
    lease_ttl: float = 30.0
    #: the largest file ``POST /api/uploads`` stores (bytes)
    max_upload: int = 200 * 2**20
    #: days an upload is kept after its last use (stored, or named by a request); 0 keeps
    #: every upload
    upload_keep_days: float = 7.0
    #: the folders research questions are answered over (``NAME=DIR`` or ``DIR``, as
    #: ``plansmith research --source``); None: Debian's Python docs where installed;
    #: (): no research
    research_sources: tuple[str, ...] | None = None
