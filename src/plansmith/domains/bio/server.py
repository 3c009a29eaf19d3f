"""``plansmith-bio``: an MCP server for sequence analysis (Biopython, BLAST+, MAFFT,
Clustal Omega, FastTree).

Files pass by reference: every tool reads files (a named input or a file in a
run directory) and writes its output into a run directory, and returns the
output's path, ``file://`` URI and SHA-256, never the sequences themselves.
Paths outside the run roots and the named inputs are refused with a reason.
Every result names the backend that made it, and every output file gets a
provenance sidecar (``<file>.prov.json``). A request whose ``_meta`` carries
``io.plansmith/idempotency-key`` acts once: the same key gets the first result.

Run: ``python -m plansmith.domains.bio.server --run-root DIR --input gene=query.gb``
(or set ``PLANSMITH_BIO_RUN_ROOT`` and ``PLANSMITH_BIO_INPUTS``); stdio transport.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from plansmith.domains.bio import _results as r
from plansmith.domains.bio import _tools_family as fam
from plansmith.domains.bio import _tools_seq as seq
from plansmith.domains.bio._idempotency import IDEMPOTENCY_META_KEY, Once
from plansmith.domains.bio._paths import Sandbox, sandbox_from_env
from plansmith.domains.bio._report import report_tool
from plansmith.domains.bio._runnotes import run_notes
from plansmith.errors import PlansmithError

__all__ = ["SERVER_NAME", "create_server", "main"]

SERVER_NAME = "plansmith-bio"
M = TypeVar("M", bound=BaseModel)

In = Annotated[str, Field(description="a named input, or a file in the run directory")]
Out = Annotated[str, Field(description="the output path, inside the run directory")]
Top = Annotated[int, Field(ge=1, le=1000, description="hits kept per query")]
MinId = Annotated[float, Field(ge=0, le=100, description="drop hits below this identity %")]
Homologues = Annotated[
    str | None, Field(description="if given: write the queries and the hit subjects here (FASTA)")
]


def create_server(box: Sandbox, *, state_dir: Path | None = None) -> MCPServer:
    """The server over ``box``; idempotency results persist in ``state_dir`` if given."""
    server = MCPServer(
        SERVER_NAME,
        version="0.1.0",
        log_level="WARNING",
        instructions="Sequence analysis; files pass by path inside the run directory.",
    )
    once = Once(state_dir)

    async def call(ctx: Context, tool: str, body: Callable[[], M], model: type[M]) -> M:
        meta = ctx.request_context.meta or {}
        key = meta.get(IDEMPOTENCY_META_KEY)
        try:
            result, _ = await once.run(
                tool, str(key) if key else None, lambda: body().model_dump(mode="json")
            )
        except PlansmithError as error:
            raise ToolError(str(error)) from None
        except (ValueError, OSError) as error:
            raise ToolError(f"{type(error).__name__}: {error}") from None
        return model.model_validate(result)

    @server.tool()
    async def backends(*, ctx: Context) -> r.BackendsResult:
        """Which backends are installed (with versions), the run roots and the named inputs."""
        return await call(ctx, "backends", lambda: fam.backends_tool(box), r.BackendsResult)

    @server.tool()
    async def load_sequences(
        *, source: In, out: Out, ctx: Context, format: Literal["auto", "fasta", "genbank"] = "auto"
    ) -> r.LoadResult:
        """Read FASTA or GenBank and write the records as FASTA; lists GenBank CDS features."""
        return await call(
            ctx,
            "load_sequences",
            lambda: seq.load_sequences(box, source, out, format),
            r.LoadResult,
        )

    @server.tool()
    async def sequence_stats(*, sequences: In, out: Out, ctx: Context) -> r.StatsResult:
        """Length and GC content of every record (JSON table in ``out``)."""
        return await call(
            ctx, "sequence_stats", lambda: seq.stats_tool(box, sequences, out), r.StatsResult
        )

    @server.tool()
    async def find_orfs(
        *,
        sequences: In,
        out: Out,
        ctx: Context,
        min_length: Annotated[
            int, Field(ge=3, description="minimum ORF length in nt, stop included")
        ] = 75,
        table: Annotated[int, Field(ge=1, le=33, description="NCBI genetic code")] = 1,
    ) -> r.OrfResult:
        """ORFs (ATG to stop) in all six frames; every ORF with its protein in ``out``."""
        return await call(
            ctx,
            "find_orfs",
            lambda: seq.orfs_tool(box, sequences, out, min_length, table),
            r.OrfResult,
        )

    @server.tool()
    async def translate(
        *, sequences: In, out: Out, ctx: Context, table: int = 1, to_stop: bool = False
    ) -> r.SequencesResult:
        """Translate every record from its first base (protein FASTA)."""
        return await call(
            ctx,
            "translate",
            lambda: seq.translate_tool(box, sequences, out, table, to_stop),
            r.SequencesResult,
        )

    @server.tool()
    async def reverse_complement(*, sequences: In, out: Out, ctx: Context) -> r.SequencesResult:
        """Reverse-complement every record."""
        return await call(
            ctx,
            "reverse_complement",
            lambda: seq.reverse_complement_tool(box, sequences, out),
            r.SequencesResult,
        )

    @server.tool()
    async def keep_first_sequences(
        *,
        sequences: In,
        out: Out,
        ctx: Context,
        n: Annotated[int, Field(ge=1, description="how many records to keep, from the first")],
    ) -> r.SequencesResult:
        """Keep the first ``n`` records (of a search's homologues: the query, then the
        best hits); ``out`` may be ``sequences`` itself."""
        return await call(
            ctx,
            "keep_first_sequences",
            lambda: seq.keep_first_tool(box, sequences, out, n),
            r.SequencesResult,
        )

    @server.tool()
    async def pairwise_align(
        *, a: In, b: In, out: Out, ctx: Context, mode: Literal["local", "global"] = "local"
    ) -> r.PairwiseResult:
        """Align the first record of ``b`` (best strand) to the first record of ``a``."""
        return await call(
            ctx, "pairwise_align", lambda: seq.pairwise_tool(box, a, b, out, mode), r.PairwiseResult
        )

    @server.tool()
    async def make_blast_db(*, sequences: In, out: Out, ctx: Context) -> r.BlastDbResult:
        """makeblastdb (BLAST+) of a nucleotide FASTA; ``out`` is the database prefix."""
        return await call(
            ctx,
            "make_blast_db",
            lambda: fam.make_blast_db_tool(box, sequences, out),
            r.BlastDbResult,
        )

    @server.tool()
    async def blast_search(
        *,
        query: In,
        database: Annotated[str, Field(description="the prefix make_blast_db returned")],
        out: Out,
        ctx: Context,
        homologues: Homologues = None,
        top: Top = 10,
        min_identity: MinId = 0.0,
    ) -> r.SearchResult:
        """blastn (BLAST+) of the queries against a BLAST database; hits as JSON in ``out``."""
        return await call(
            ctx,
            "blast_search",
            lambda: fam.blast_search_tool(
                box,
                query=query,
                database=database,
                out=out,
                homologues=homologues,
                top=top,
                min_identity=min_identity,
            ),
            r.SearchResult,
        )

    @server.tool()
    async def biopython_search(
        *,
        query: In,
        database: Annotated[str, Field(description="a FASTA file of the database sequences")],
        out: Out,
        ctx: Context,
        homologues: Homologues = None,
        top: Top = 10,
        min_identity: MinId = 0.0,
    ) -> r.SearchResult:
        """Database search with Biopython's PairwiseAligner (local, both strands, blastn scores)."""
        return await call(
            ctx,
            "biopython_search",
            lambda: fam.biopython_search_tool(
                box,
                query=query,
                database=database,
                out=out,
                homologues=homologues,
                top=top,
                min_identity=min_identity,
            ),
            r.SearchResult,
        )

    @server.tool()
    async def multiple_alignment(
        *,
        sequences: In,
        out: Out,
        ctx: Context,
        backend: Literal["mafft", "clustalo", "biopython"] = "mafft",
    ) -> r.MsaResult:
        """Multiple alignment with MAFFT, Clustal Omega, or Biopython (centre star)."""
        return await call(
            ctx,
            "multiple_alignment",
            lambda: fam.msa_tool(box, sequences, out, backend),
            r.MsaResult,
        )

    @server.tool()
    async def build_tree(
        *,
        alignment: In,
        out: Out,
        ctx: Context,
        backend: Literal["fasttree", "biopython"] = "fasttree",
    ) -> r.TreeResult:
        """A tree of an alignment: FastTree, or neighbour joining with Bio.Phylo (Newick)."""
        return await call(
            ctx, "build_tree", lambda: fam.tree_tool(box, alignment, out, backend), r.TreeResult
        )

    @server.tool()
    async def render_tree(*, tree: In, out: Out, ctx: Context, title: str = "") -> r.RenderResult:
        """Draw a Newick tree as an SVG picture."""
        return await call(
            ctx, "render_tree", lambda: fam.render_tool(box, tree, out, title), r.RenderResult
        )

    @server.tool()
    async def write_report(
        *,
        out: Out,
        ctx: Context,
        title: str = "Gene family report",
        query: In | None = None,
        stats: In | None = None,
        orfs: In | None = None,
        hits: In | None = None,
        alignment: In | None = None,
        tree: In | None = None,
        picture: Out | None = None,
        notes: list[str] | None = None,
        run_log: In | None = None,
        run_id: str | None = None,
    ) -> r.ReportResult:
        """A Markdown report (GC and ORF tables, top hits, tree in Newick and SVG, provenance).

        With ``run_log`` (the engine's ``runs.db``) and ``run_id``, the run notes also
        state the run's failures, retries and replans so far, read from the log."""
        return await call(
            ctx,
            "write_report",
            lambda: report_tool(
                box,
                out=out,
                title=title,
                query=query,
                stats=stats,
                orfs=orfs,
                hits=hits,
                alignment=alignment,
                tree=tree,
                picture=picture,
                notes=[*(notes or []), *_logged_notes(box, run_log, run_id)],
            ),
            r.ReportResult,
        )

    return server


def _logged_notes(box: Sandbox, run_log: str | None, run_id: str | None) -> list[str]:
    if not run_log or not run_id:
        return []
    return run_notes(box.in_run(run_log), run_id)  # the log must lie in a run root


def main(argv: list[str] | None = None) -> None:
    """Run the server on stdio."""
    parser = argparse.ArgumentParser(prog=SERVER_NAME, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--run-root", action="append", default=[], help="a directory runs write into"
    )
    parser.add_argument("--input", action="append", default=[], help="NAME=PATH of an input file")
    parser.add_argument(
        "--state-dir", help="where idempotent results persist (default: RUN_ROOT/.bio-idempotency)"
    )
    args = parser.parse_args(argv)
    try:
        box = sandbox_from_env(os.environ, args.run_root, args.input)
    except PlansmithError as error:
        sys.stderr.write(f"{SERVER_NAME}: {error}\n")
        raise SystemExit(2) from None
    state = Path(args.state_dir) if args.state_dir else box.run_roots[0] / ".bio-idempotency"
    create_server(box, state_dir=state).run()


if __name__ == "__main__":
    main()
