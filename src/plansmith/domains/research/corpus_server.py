"""``plansmith-corpus``: one folder of documents as an MCP source (SQLite FTS5).

One instance serves one source: ``--source NAME --root DIR --db PATH``. At
start it brings the index up to date (incrementally), then serves over stdio:

* ``search(query, limit, per_document)``: BM25-ranked passages as structured
  summaries (title, key sentences, snippet, date, version, source, location:
  path, passage id, section, line range), never whole documents;
* ``fetch(id, offset, max_chars)``: one passage's text, paged, with its location;
* ``metadata(id?, path?)``: a document's title, date, version, path and outline,
  or, with neither, the source's size and its last index run;
* ``reindex()``: bring the index up to date now (added, updated, removed files).

Every answered call is appended to the source's JSONL call log (``--log``;
default: next to the database). A request whose ``_meta`` holds
``io.plansmith/idempotency-key`` gets the first result given for that key.

Run: ``python -m plansmith.domains.research.corpus_server --source python-docs
--root /usr/share/doc/python3/html --db corpus.sqlite``.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from plansmith.domains.research import _store as store
from plansmith.domains.research._calls import IDEMPOTENCY_META_KEY, CallLog, Remembered
from plansmith.domains.research._index import connect, index_folder
from plansmith.domains.research._wire import (
    FetchResult,
    IndexReport,
    MetadataResult,
    SearchResult,
)
from plansmith.errors import PlansmithError

__all__ = ["SERVER_NAME", "CorpusConfig", "create_server", "main"]

SERVER_NAME = "plansmith-corpus"
M = TypeVar("M", bound=BaseModel)


class CorpusConfig(BaseModel):
    """One source: its name, its folder, its index database, its call log, its excludes."""

    source: str
    root: Path
    db: Path
    log: Path
    exclude: tuple[str, ...] = ()


def create_server(config: CorpusConfig) -> MCPServer:
    """The MCP server of one source (the index is not rebuilt here; see :func:`main`)."""
    server = MCPServer(
        SERVER_NAME,
        version="0.1.0",
        log_level="WARNING",
        instructions=(
            f"Source {config.source!r}: search it, fetch passages by id, read metadata. "
            "Results are summaries with locations; cite path and line range."
        ),
    )
    local = threading.local()
    reindexing = threading.Lock()
    log = CallLog(config.log, config.source)

    def conn() -> sqlite3.Connection:
        if getattr(local, "conn", None) is None:
            local.conn = connect(config.db)
        c: sqlite3.Connection = local.conn
        return c

    remembered = Remembered(lambda: connect(config.db))

    async def call(
        ctx: Context, tool: str, arguments: dict[str, Any], body: Callable[[], M], model: type[M]
    ) -> M:
        meta = ctx.request_context.meta or {}
        raw = meta.get(IDEMPOTENCY_META_KEY)
        key = str(raw) if raw else None
        started, in_flight = log.begin()
        replayed, outcome = False, "ok"
        detail: dict[str, Any] = {}
        try:
            result, replayed = await anyio.to_thread.run_sync(
                lambda: remembered.run(tool, key, lambda: body().model_dump(mode="json"))
            )
            if "hits" in result:
                detail = {"hits": len(result["hits"])}
            return model.model_validate(result)
        except PlansmithError as error:
            outcome = "error"
            detail = {"error": error.message}
            raise ToolError(str(error)) from None
        except (sqlite3.Error, OSError) as error:
            outcome = "error"
            detail = {"error": f"{type(error).__name__}: {error}"}
            raise ToolError(f"{type(error).__name__}: {error}") from None
        finally:
            log.end(
                started,
                in_flight,
                tool=tool,
                arguments=arguments,
                key=key,
                replayed=replayed,
                outcome=outcome,
                detail=detail,
            )

    @server.tool()
    async def search(
        query: Annotated[str, Field(description="words to look for (common words are dropped)")],
        ctx: Context,
        also: Annotated[
            str, Field(description="words of which passages holding one rank first")
        ] = "",
        limit: Annotated[int, Field(ge=1, le=50, description="passages to return")] = 8,
        per_document: Annotated[int, Field(ge=1, le=20, description="at most per document")] = 3,
    ) -> SearchResult:
        """Search this source: BM25-ranked passages with key sentences and locations."""
        args = {"query": query, "also": also, "limit": limit, "per_document": per_document}
        return await call(
            ctx,
            "search",
            args,
            lambda: store.search(
                conn(), config.source, query, also=also, limit=limit, per_document=per_document
            ),
            SearchResult,
        )

    @server.tool()
    async def fetch(
        id: Annotated[str, Field(description="a passage id from search ('p...')")],
        ctx: Context,
        offset: Annotated[int, Field(ge=0, description="first character of the page")] = 0,
        max_chars: Annotated[int, Field(ge=100, le=20000, description="page size")] = 4000,
    ) -> FetchResult:
        """One passage's text (paged), with its path, section and line range."""
        args = {"id": id, "offset": offset, "max_chars": max_chars}
        return await call(
            ctx,
            "fetch",
            args,
            lambda: store.fetch(conn(), config.source, id, offset=offset, max_chars=max_chars),
            FetchResult,
        )

    @server.tool()
    async def metadata(
        ctx: Context,
        id: Annotated[str | None, Field(description="a document ('d...') or passage id")] = None,
        path: Annotated[str | None, Field(description="a document path from a hit")] = None,
    ) -> MetadataResult:
        """A document's title, date, version, path and outline; with no argument, the source's."""

        def body() -> MetadataResult:
            if id is None and path is None:
                return MetadataResult(
                    source=config.source, corpus=store.source_meta(conn(), config.source)
                )
            document = store.document_meta(conn(), doc_id=id, path=path)
            return MetadataResult(source=config.source, document=document)

        return await call(ctx, "metadata", {"id": id, "path": path}, body, MetadataResult)

    @server.tool()
    async def reindex(ctx: Context) -> IndexReport:
        """Bring the index up to date with the folder (new, changed and removed files)."""

        def body() -> IndexReport:
            with reindexing:
                return index_folder(
                    conn(), config.root, source=config.source, exclude=config.exclude
                )

        return await call(ctx, "reindex", {}, body, IndexReport)

    return server


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=SERVER_NAME, description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", required=True, help="the source's name (in results and logs)")
    parser.add_argument("--root", required=True, help="the folder of documents")
    parser.add_argument("--db", required=True, help="the index database (created if missing)")
    parser.add_argument("--log", help="the JSONL call log (default: DB with .calls.jsonl)")
    parser.add_argument(
        "--exclude", action="append", default=[], help="a glob of paths to leave out (repeatable)"
    )
    parser.add_argument("--no-index", action="store_true", help="serve the index as it is")
    parser.add_argument(
        "--index-only", action="store_true", help="bring the index up to date, print it, exit"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Index the folder (incrementally), then serve the source on stdio."""
    args = _parser().parse_args(argv)
    db = Path(args.db)
    config = CorpusConfig(
        source=args.source,
        root=Path(args.root),
        db=db,
        log=Path(args.log) if args.log else db.with_suffix(".calls.jsonl"),
        exclude=tuple(args.exclude),
    )
    try:
        if not args.no_index:
            report = index_folder(
                connect(db), config.root, source=config.source, exclude=config.exclude
            )
            if args.index_only:
                sys.stdout.write(report.model_dump_json(indent=2) + "\n")
                return
    except PlansmithError as error:
        sys.stderr.write(f"{SERVER_NAME}: {error}\n")
        raise SystemExit(2) from None
    create_server(config).run()


if __name__ == "__main__":
    main()
