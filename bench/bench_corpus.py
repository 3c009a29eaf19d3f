"""plansmith-corpus on the whole real corpus: index build time and query latency.

The corpus is Debian's Python 3.11 HTML documentation (``apt-get install -y
python3-doc``; /usr/share/doc/python3/html), less the generated index pages
(PYTHON_DOCS_EXCLUDES). Figures:

* cold build: a fresh index of every document (documents/s, passages, input MB/s);
* re-index with nothing changed (the incremental check: stat only);
* search latency in process (``_store.search`` on the SQLite index), p50/p99;
* search and fetch latency through the MCP server over stdio (one process,
  sequential calls, mcp 2.x client), p50/p99: what a plan step pays.

Queries are the documented module names (one per library page) plus the same
names with "example" (two-term queries); each is run once, in a shuffled order
(fixed seed).

Usage: .venv/bin/python bench/bench_corpus.py [--root DIR] [--queries 400]
        [--stdio-calls 300] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from plansmith.domains.research import PYTHON_DOCS_EXCLUDES, find_python_docs
from plansmith.domains.research import _store as store
from plansmith.domains.research._index import connect, index_folder


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _queries(root: Path, n: int) -> list[str]:
    names = sorted(p.stem for p in (root / "library").glob("*.html") if p.stem != "index")
    pool = names + [f"{name} example" for name in names]
    random.Random(7).shuffle(pool)
    return pool[:n]


async def _stdio(root: Path, db: Path, queries: list[str], calls: int) -> dict[str, Any]:
    args = ["-m", "plansmith.domains.research.corpus_server", "--source", "python-docs"]
    args += ["--root", str(root), "--db", str(db), "--no-index"]
    params = StdioServerParameters(command=sys.executable, args=args)
    search_ms: list[float] = []
    fetch_ms: list[float] = []
    async with Client(params, read_timeout_seconds=60) as client:
        await client.list_tools()
        ids: list[str] = []
        for q in queries[:20]:  # warm-up
            result = await client.call_tool("search", {"query": q, "limit": 8})
            ids += [h["id"] for h in (result.structured_content or {}).get("hits", [])]
        for i in range(calls):
            t = time.perf_counter()
            await client.call_tool("search", {"query": queries[i % len(queries)], "limit": 8})
            search_ms.append((time.perf_counter() - t) * 1000)
        for i in range(calls):
            t = time.perf_counter()
            await client.call_tool("fetch", {"id": ids[i % len(ids)]})
            fetch_ms.append((time.perf_counter() - t) * 1000)
    return {
        "stdio_search_p50_ms": _pct(search_ms, 0.5),
        "stdio_search_p99_ms": _pct(search_ms, 0.99),
        "stdio_fetch_p50_ms": _pct(fetch_ms, 0.5),
        "stdio_fetch_p99_ms": _pct(fetch_ms, 0.99),
        "stdio_calls": calls,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", help="the corpus folder (default: the installed python3-doc)")
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--stdio-calls", type=int, default=300)
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args()
    root = Path(args.root) if args.root else find_python_docs()
    if root is None:
        raise SystemExit("python3-doc is not installed: apt-get install -y python3-doc")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "python-docs.sqlite"
        conn = connect(db)
        cold = index_folder(conn, root, source="python-docs", exclude=PYTHON_DOCS_EXCLUDES)
        warm = index_folder(conn, root, source="python-docs", exclude=PYTHON_DOCS_EXCLUDES)
        size = sum((root / r[0]).stat().st_size for r in conn.execute("SELECT path FROM documents"))
        queries = _queries(root, args.queries)
        latencies: list[float] = []
        empty = 0
        for q in queries:
            t = time.perf_counter()
            result = store.search(conn, "python-docs", q, limit=8)
            latencies.append((time.perf_counter() - t) * 1000)
            empty += not result.hits
        figures: dict[str, Any] = {
            "documents": cold.documents,
            "passages": cold.passages,
            "input_mb": round(size / 1e6, 1),
            "index_mb": round(db.stat().st_size / 1e6, 1),
            "build_s": cold.seconds,
            "documents_per_s": round(cold.documents / cold.seconds, 1),
            "input_mb_per_s": round(size / 1e6 / cold.seconds, 2),
            "reindex_unchanged_s": warm.seconds,
            "queries": len(queries),
            "queries_without_hits": empty,
            "search_p50_ms": _pct(latencies, 0.5),
            "search_p99_ms": _pct(latencies, 0.99),
            "search_mean_ms": statistics.fmean(latencies),
        }
        conn.close()
        figures |= anyio.run(_stdio, root, db, queries, args.stdio_calls)
    for key, value in figures.items():
        print(f"{key:24} {value:.3f}" if isinstance(value, float) else f"{key:24} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
