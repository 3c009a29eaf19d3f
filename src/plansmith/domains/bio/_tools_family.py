"""Tool bodies for a gene family: BLAST database and search, Biopython search,
multiple alignment, tree building, tree rendering, and the backend inventory."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from Bio.Seq import Seq
from Bio.SeqRecord import SeqRecord

from plansmith.domains.bio._external import BINARIES, binary_version, run_binary
from plansmith.domains.bio._msa import MsaBackend, align_external, centre_star
from plansmith.domains.bio._paths import Sandbox, file_ref
from plansmith.domains.bio._provenance import backend_version, write_provenance
from plansmith.domains.bio._results import (
    BackendsResult,
    BlastDbResult,
    FileRef,
    HitRow,
    MsaResult,
    RenderResult,
    SearchResult,
    TreeResult,
)
from plansmith.domains.bio._search import Hit, biopython_search, blast_search, make_blast_db
from plansmith.domains.bio._seqio import read_records, rid, write_fasta
from plansmith.domains.bio._svg import tree_svg
from plansmith.domains.bio._tools_seq import write_json
from plansmith.domains.bio._tree import TreeBackend, fasttree, leaf_names, nj_tree, read_newick
from plansmith.errors import ExecutionError, InputError, Location

__all__ = [
    "make_blast_db_tool",
    "blast_search_tool",
    "biopython_search_tool",
    "msa_tool",
    "tree_tool",
    "render_tool",
    "backends_tool",
]

BLAST = "blast+"


def _ref(path: Path) -> FileRef:
    return FileRef.model_validate(file_ref(path))


def make_blast_db_tool(box: Sandbox, sequences: str, out: str) -> BlastDbResult:
    """``makeblastdb`` of a FASTA into the database prefix ``out`` (in the run directory)."""
    src = box.readable(sequences)
    prefix = box.writable(out)
    count = len(read_records(src))
    make_blast_db(src, prefix)
    files = sorted(p for p in prefix.parent.glob(prefix.name + ".*") if p.is_file())
    write_provenance(files[0], tool="make_blast_db", backend=BLAST, inputs=[src])
    return BlastDbResult(
        backend=BLAST,
        backend_version=backend_version(BLAST),
        database=str(prefix),
        sequences=count,
        files=[_ref(p) for p in files if not p.name.endswith(".prov.json")],
    )


def _finish_search(
    box: Sandbox,
    *,
    tool: str,
    backend: str,
    queries: list[SeqRecord],
    subjects: dict[str, SeqRecord],
    hits: list[Hit],
    out: str,
    homologues: str | None,
    inputs: list[Path],
    params: dict[str, object],
) -> SearchResult:
    dst = box.writable(out)
    write_json(dst, {"hits": [asdict(h) for h in hits]})
    write_provenance(dst, tool=tool, backend=backend, inputs=inputs, parameters=params)
    homologue_ref = None
    if homologues:
        hom = box.writable(homologues)
        chosen = list(queries)
        seen = {rid(r) for r in chosen}
        for h in hits:
            if h.subject not in seen and h.subject in subjects:
                chosen.append(subjects[h.subject])
                seen.add(h.subject)
        write_fasta(chosen, hom)
        write_provenance(hom, tool=tool, backend=backend, inputs=inputs, parameters=params)
        homologue_ref = _ref(hom)
    rows = [HitRow(**asdict(h)) for h in hits]
    return SearchResult(
        backend=backend,
        backend_version=backend_version(backend),
        queries=len(queries),
        hit_count=len(rows),
        hits=rows,
        top_hit=rows[0] if rows else None,
        file=_ref(dst),
        homologues=homologue_ref,
    )


def biopython_search_tool(
    box: Sandbox,
    *,
    query: str,
    database: str,
    out: str,
    homologues: str | None,
    top: int,
    min_identity: float,
) -> SearchResult:
    """Every query against every database record with PairwiseAligner (local, both strands)."""
    qpath, dpath = box.readable(query), box.readable(database)
    queries, subjects = read_records(qpath), read_records(dpath)
    hits = biopython_search(queries, subjects, top=top, min_identity=min_identity)
    params = {"top": top, "min_identity": min_identity, "scores": "+2/-3, gap 5+2k"}
    return _finish_search(
        box,
        tool="biopython_search",
        backend="biopython",
        queries=queries,
        subjects={rid(r): r for r in subjects},
        hits=hits,
        out=out,
        homologues=homologues,
        inputs=[qpath, dpath],
        params=params,
    )


def blast_search_tool(
    box: Sandbox,
    *,
    query: str,
    database: str,
    out: str,
    homologues: str | None,
    top: int,
    min_identity: float,
) -> SearchResult:
    """``blastn -task blastn`` of the queries against a database made by make_blast_db."""
    qpath = box.readable(query)
    prefix = box.in_run(database)
    index = [
        p for p in (prefix.with_name(prefix.name + ext) for ext in (".nin", ".nal")) if p.is_file()
    ]
    if not index:
        raise InputError(
            f"no BLAST database at {database}",
            location=Location(database),
            hint="run make_blast_db first and pass its 'database' prefix",
        )
    queries = read_records(qpath)
    hits = blast_search(qpath, prefix, top=top, min_identity=min_identity)
    subjects: dict[str, SeqRecord] = {}
    if homologues and hits:
        fetched = box.writable(homologues)  # fetched subjects land here first, then are rewritten
        ids = fetched.with_name(fetched.name + ".ids")
        ids.write_text("\n".join(sorted({h.subject for h in hits})) + "\n", encoding="utf-8")
        run_binary("blastdbcmd", ["-db", str(prefix), "-entry_batch", str(ids)], stdout_to=fetched)
        ids.unlink()
        subjects = {rid(r): r for r in read_records(fetched)}
    params = {"top": top, "min_identity": min_identity, "task": "blastn", "max_hsps": 1}
    return _finish_search(
        box,
        tool="blast_search",
        backend=BLAST,
        queries=queries,
        subjects=subjects,
        hits=hits,
        out=out,
        homologues=homologues,
        inputs=[qpath, index[0]],
        params=params,
    )


def msa_tool(box: Sandbox, sequences: str, out: str, backend: MsaBackend) -> MsaResult:
    """Align all records of ``sequences`` with MAFFT, Clustal Omega or Biopython."""
    src = box.readable(sequences)
    dst = box.writable(out)
    records = read_records(src)
    if len(records) < 2:
        raise InputError(f"{src.name} has {len(records)} sequence; an alignment needs 2 or more")
    if backend == "biopython":
        rows = centre_star(records)
        write_fasta([SeqRecord(Seq(s), id=i, description="") for i, s in rows], dst)
    else:
        align_external(backend, src, dst)
    aligned = read_records(dst, "fasta")
    write_provenance(dst, tool="multiple_alignment", backend=backend, inputs=[src])
    return MsaResult(
        backend=backend,
        backend_version=backend_version(backend),
        sequences=len(aligned),
        columns=max(len(r) for r in aligned),
        file=_ref(dst),
    )


def tree_tool(box: Sandbox, alignment: str, out: str, backend: TreeBackend) -> TreeResult:
    """A tree of the alignment: neighbour joining (Biopython) or FastTree; Newick to ``out``."""
    src = box.readable(alignment)
    dst = box.writable(out)
    if backend == "biopython":
        dst.write_text(nj_tree(src), encoding="utf-8")
    else:
        fasttree(src, dst)
    text = dst.read_text(encoding="utf-8")
    leaves = leaf_names(read_newick(text))
    params = {"method": "neighbour joining, identity distance" if backend == "biopython" else "GTR"}
    write_provenance(dst, tool="build_tree", backend=backend, inputs=[src], parameters=params)
    return TreeResult(
        backend=backend,
        backend_version=backend_version(backend),
        leaves=leaves[:200],
        newick=text.strip() if len(text) < 4096 else None,
        file=_ref(dst),
    )


def render_tool(box: Sandbox, tree: str, out: str, title: str) -> RenderResult:
    """Draw a Newick tree as SVG (midpoint-rooted phylogram)."""
    src = box.readable(tree)
    dst = box.writable(out)
    parsed = read_newick(src.read_text(encoding="utf-8"))
    dst.write_text(tree_svg(parsed, title=title), encoding="utf-8")
    write_provenance(dst, tool="render_tree", backend="biopython", inputs=[src])
    return RenderResult(
        backend="biopython",
        backend_version=backend_version("biopython"),
        leaves=len(parsed.get_terminals()),
        file=_ref(dst),
    )


def backends_tool(box: Sandbox) -> BackendsResult:
    """Which backends this server can use now, with their versions."""
    available: dict[str, str | None] = {"biopython": backend_version("biopython")}
    for name in BINARIES:
        try:
            available[name] = binary_version(name)
        except ExecutionError:  # not installed: that is the answer
            available[name] = None
    return BackendsResult(
        available=available,
        run_roots=[str(r) for r in box.run_roots],
        inputs=[n for n, _ in box.inputs],
    )
