"""Tool bodies for single sequence files: load, statistics, ORFs, translate, reverse
complement, pairwise alignment. Each reads and writes only through the sandbox,
writes a provenance sidecar next to its output, and returns its structured result."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal

from Bio.Seq import Seq
from Bio.SeqRecord import SeqRecord

from plansmith.domains.bio._analysis import find_orfs, sequence_stats
from plansmith.domains.bio._paths import Sandbox, file_ref
from plansmith.domains.bio._provenance import backend_version, write_provenance
from plansmith.domains.bio._results import (
    INLINE,
    CdsInfo,
    FileRef,
    HitRow,
    LoadResult,
    OrfResult,
    OrfRow,
    PairwiseResult,
    RecordInfo,
    SequencesResult,
    StatsResult,
    StatsRow,
)
from plansmith.domains.bio._search import align_pair
from plansmith.domains.bio._seqio import (
    SeqFormat,
    cds_features,
    read_records,
    rid,
    sniff_format,
    write_fasta,
)

__all__ = [
    "load_sequences",
    "stats_tool",
    "orfs_tool",
    "translate_tool",
    "reverse_complement_tool",
    "pairwise_tool",
    "write_json",
]

BIO = "biopython"


def write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _ref(path: Path) -> FileRef:
    return FileRef.model_validate(file_ref(path))


def load_sequences(box: Sandbox, source: str, out: str, fmt: SeqFormat = "auto") -> LoadResult:
    """Read FASTA or GenBank (a named input or a run file); write it as FASTA to ``out``."""
    src = box.readable(source)
    dst = box.writable(out)
    kind = sniff_format(src) if fmt == "auto" else fmt
    records = read_records(src, kind)
    write_fasta(records, dst)
    write_provenance(
        dst, tool="load_sequences", backend=BIO, inputs=[src], parameters={"format": kind}
    )
    cds = [
        CdsInfo(
            record=c.record,
            start=c.start,
            end=c.end,
            strand=c.strand,
            gene=c.gene,
            product=c.product,
            protein_length=len(c.protein),
            translation_matches=c.translation_matches,
        )
        for c in cds_features(records)
    ]
    return LoadResult(
        backend=BIO,
        backend_version=backend_version(BIO),
        format=kind,
        count=len(records),
        records=[
            RecordInfo(id=rid(r), length=len(r), description=r.description)
            for r in records[:INLINE]
        ],
        truncated=len(records) > INLINE,
        cds=cds[:INLINE],
        file=_ref(dst),
    )


def stats_tool(box: Sandbox, sequences: str, out: str) -> StatsResult:
    """Length and GC content of every record; the table as JSON in ``out``."""
    src = box.readable(sequences)
    dst = box.writable(out)
    records = read_records(src)
    rows = [StatsRow(**asdict(sequence_stats(r))) for r in records]
    total = sum(r.length for r in rows)
    gc_bases = sum(r.gc_fraction * (r.length - r.ambiguous) for r in rows)
    informative = sum(r.length - r.ambiguous for r in rows)
    overall = round(100.0 * gc_bases / informative, 4) if informative else 0.0
    write_json(
        dst,
        {"records": [r.model_dump() for r in rows], "total_length": total, "gc_percent": overall},
    )
    write_provenance(dst, tool="sequence_stats", backend=BIO, inputs=[src])
    return StatsResult(
        backend=BIO,
        backend_version=backend_version(BIO),
        count=len(rows),
        total_length=total,
        gc_percent=overall,
        records=rows[:INLINE],
        truncated=len(rows) > INLINE,
        file=_ref(dst),
    )


def orfs_tool(box: Sandbox, sequences: str, out: str, min_length: int, table: int) -> OrfResult:
    """ORFs of every record in six frames; all of them (with proteins) as JSON in ``out``."""
    src = box.readable(sequences)
    dst = box.writable(out)
    orfs = [o for r in read_records(src) for o in find_orfs(r, min_length=min_length, table=table)]
    orfs.sort(key=lambda o: (-o.length_nt, o.record, o.start, o.strand))
    write_json(dst, {"min_length": min_length, "table": table, "orfs": [asdict(o) for o in orfs]})
    params = {"min_length": min_length, "table": table}
    write_provenance(dst, tool="find_orfs", backend=BIO, inputs=[src], parameters=params)
    rows = [
        OrfRow(
            record=o.record,
            strand=o.strand,
            frame=o.frame,
            start=o.start,
            end=o.end,
            length_nt=o.length_nt,
            protein_length=len(o.protein),
        )
        for o in orfs[:10]
    ]
    return OrfResult(
        backend=BIO,
        backend_version=backend_version(BIO),
        min_length=min_length,
        table=table,
        count=len(orfs),
        longest=rows,
        file=_ref(dst),
    )


def _transform(box: Sandbox, sequences: str, out: str, operation: str, fn: Any) -> SequencesResult:
    src = box.readable(sequences)
    dst = box.writable(out)
    records = read_records(src)
    changed = [
        SeqRecord(fn(r.seq), id=rid(r), description=f"{rid(r)} {operation}") for r in records
    ]
    write_fasta(changed, dst)
    write_provenance(dst, tool=operation, backend=BIO, inputs=[src])
    return SequencesResult(
        backend=BIO,
        backend_version=backend_version(BIO),
        operation=operation,
        count=len(changed),
        file=_ref(dst),
    )


def translate_tool(
    box: Sandbox, sequences: str, out: str, table: int, to_stop: bool
) -> SequencesResult:
    """Translate every record (frame 1) to protein FASTA."""

    def tr(seq: Seq) -> Seq:
        usable = len(seq) // 3 * 3
        protein: Seq = seq[:usable].translate(table=table, to_stop=to_stop)
        return protein

    return _transform(box, sequences, out, "translate", tr)


def reverse_complement_tool(box: Sandbox, sequences: str, out: str) -> SequencesResult:
    """Reverse-complement every record."""
    return _transform(box, sequences, out, "reverse_complement", lambda s: s.reverse_complement())


def keep_first_tool(box: Sandbox, sequences: str, out: str, n: int) -> SequencesResult:
    """The first ``n`` records (a search's homologues file: the query, then the hits
    best first), written to ``out`` (which may be ``sequences`` itself: the same ``n``
    again gives the same file)."""
    if n < 1:
        raise ValueError(f"n must be 1 or more, not {n}")
    src = box.readable(sequences)
    dst = box.writable(out)
    records = read_records(src)[:n]
    write_fasta(records, dst)
    write_provenance(dst, tool="keep_first", backend=BIO, inputs=[], parameters={"n": n})
    return SequencesResult(
        backend=BIO,
        backend_version=backend_version(BIO),
        operation="keep_first",
        count=len(records),
        file=_ref(dst),
    )


def pairwise_tool(
    box: Sandbox, a: str, b: str, out: str, mode: Literal["local", "global"]
) -> PairwiseResult:
    """Align the first record of ``b`` (either strand) to the first record of ``a``."""
    pa, pb = box.readable(a), box.readable(b)
    dst = box.writable(out)
    hit, alignment = align_pair(read_records(pa)[0], read_records(pb)[0], mode=mode)
    dst.write_text(
        f"# score {alignment.score:g}, identity {hit.identity}%\n{alignment}", encoding="utf-8"
    )
    write_provenance(
        dst, tool="pairwise_align", backend=BIO, inputs=[pa, pb], parameters={"mode": mode}
    )
    return PairwiseResult(
        backend=BIO,
        backend_version=backend_version(BIO),
        mode=mode,
        hit=HitRow(**asdict(hit)),
        file=_ref(dst),
    )
