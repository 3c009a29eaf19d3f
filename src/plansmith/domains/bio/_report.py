"""The Markdown family report: GC and ORF tables, top hits, the tree, and provenance.

Every figure cites a source tag ``[S1]``…; the provenance table maps each tag to
the file it was read from, that file's SHA-256 (checked against the sidecar
written when the file was made), the tool and backend that made it, and the
inputs that tool read (with their hashes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plansmith.domains.bio._paths import Sandbox, file_ref, sha256_file
from plansmith.domains.bio._provenance import backend_version, read_provenance, write_provenance
from plansmith.domains.bio._results import FileRef, ReportResult
from plansmith.domains.bio._seqio import read_records, rid
from plansmith.domains.bio._svg import tree_svg
from plansmith.domains.bio._tree import nearest_leaf, read_newick

__all__ = ["report_tool"]


class _Sources:
    """Source tags in order of first use, with the provenance row of each."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, Path]] = []

    def tag(self, figure: str, path: Path) -> str:
        tag = f"S{len(self.rows) + 1}"
        self.rows.append((tag, figure, path))
        return f"[{tag}]"

    def table(self) -> list[str]:
        out = [
            "| source | figure | file | sha256 | tool | backend | backend version | inputs |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for tag, figure, path in self.rows:
            digest = sha256_file(path)
            prov = read_provenance(path) or {}
            recorded = prov.get("output", {}).get("sha256")
            check = (
                ""
                if recorded is None
                else (" ✓" if recorded == digest else " ✗ changed since made")
            )
            inputs = "; ".join(
                f"`{Path(i['path']).name}` {i['sha256'][:19]}…" for i in prov.get("inputs", [])
            )
            out.append(
                f"| {tag} | {figure} | `{path.name}` | `{digest[:19]}…`{check} | "
                f"{prov.get('tool', '?')} | {prov.get('backend', '?')} | "
                f"{prov.get('backend_version', '?')} | {inputs or '-'} |"
            )
        return out


def _json(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_text(encoding="utf-8"))
    return value if isinstance(value, dict) else {}


def _backend(path: Path) -> str:
    prov = read_provenance(path) or {}
    return f"{prov.get('backend', '?')} ({prov.get('backend_version', '?')})"


def _stats_section(path: Path, src: _Sources) -> list[str]:
    data = _json(path)
    tag = src.tag("length and GC content", path)
    lines = ["## Length and GC content", "", f"Backend: {_backend(path)} {tag}", ""]
    lines += ["| record | length (nt) | GC % |", "|---|---:|---:|"]
    lines += [f"| {r['id']} | {r['length']} | {r['gc_percent']:.2f} |" for r in data["records"]]
    return [
        *lines,
        "",
        f"All records: {data['total_length']} nt, GC {data['gc_percent']:.2f} %.",
        "",
    ]


def _orfs_section(path: Path, src: _Sources) -> list[str]:
    data = _json(path)
    tag = src.tag("open reading frames", path)
    rows = data["orfs"]
    lines = [
        "## Open reading frames",
        "",
        f"{len(rows)} ORFs of at least {data['min_length']} nt (stop included), genetic code "
        f"{data['table']}, six frames; backend {_backend(path)} {tag}. An ORF runs from the first "
        "ATG after an in-frame stop to the next stop; coordinates are 0-based, end exclusive, "
        "on the forward strand.",
        "",
        "| record | strand | frame | start | end | length (nt) | protein (aa) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for o in rows[:20]:
        strand = "+" if o["strand"] == 1 else "-"
        lines.append(
            f"| {o['record']} | {strand} | {o['frame']} | {o['start']} | {o['end']} | "
            f"{o['length_nt']} | {len(o['protein'])} |"
        )
    return [*lines, "", *(["(the 20 longest are shown)", ""] if len(rows) > 20 else [])]


def _hits_section(path: Path, src: _Sources) -> list[str]:
    rows = _json(path)["hits"]
    tag = src.tag("top hits", path)
    lines = ["## Top hits", "", f"Search backend: {_backend(path)} {tag}", ""]
    lines += [
        "| rank | query | subject | identity % | aligned | mismatches | gap opens | "
        "query range | subject range | score | bit score | e-value |",
        "|---:|---|---|---:|---:|---:|---:|---|---|---:|---:|---:|",
    ]
    for rank, h in enumerate(rows, 1):
        lines.append(
            f"| {rank} | {h['query']} | {h['subject']} | {h['identity']:.3f} | "
            f"{h['align_length']} | {h['mismatches']} | {h['gap_opens']} | "
            f"{h['q_start']}-{h['q_end']} | {h['s_start']}-{h['s_end']} | "
            f"{_num(h['score'])} | {_num(h['bitscore'])} | {_num(h['evalue'])} |"
        )
    return [*lines, ""]


def _alignment_section(path: Path, src: _Sources) -> list[str]:
    aligned = read_records(path, "fasta")
    tag = src.tag("multiple alignment", path)
    return [
        "## Multiple alignment",
        "",
        f"{len(aligned)} sequences, {max(len(r) for r in aligned)} columns; backend "
        f"{_backend(path)} {tag}.",
        "",
    ]


def _tree_section(
    path: Path, pic: Path, title: str, query_ids: list[str], src: _Sources
) -> list[str]:
    text = path.read_text(encoding="utf-8").strip()
    parsed = read_newick(text)
    tag = src.tag("tree (Newick)", path)
    pic.write_text(tree_svg(parsed, title=title), encoding="utf-8")
    write_provenance(pic, tool="render_tree", backend="biopython", inputs=[path])
    ptag = src.tag("tree picture", pic)
    lines = ["## Tree", "", f"Backend: {_backend(path)} {tag}", ""]
    leaves = {str(c.name) for c in parsed.get_terminals()}
    for q in query_ids:
        if q in leaves:
            lines += [f"Nearest leaf to {q} along the tree: {nearest_leaf(parsed, q)}.", ""]
    return [*lines, "```newick", text, "```", "", f"![tree]({pic.name}) {ptag}", ""]


def report_tool(
    box: Sandbox,
    *,
    out: str,
    title: str,
    query: str | None,
    stats: str | None,
    orfs: str | None,
    hits: str | None,
    alignment: str | None,
    tree: str | None,
    picture: str | None,
    notes: list[str],
) -> ReportResult:
    """Write the report to ``out``; the tree picture (SVG) next to it unless ``picture``."""
    dst = box.writable(out)
    src = _Sources()
    lines = [f"# {title}", ""]
    query_ids: list[str] = []
    if query:
        qpath = box.readable(query)
        query_ids = [rid(r) for r in read_records(qpath)]
        lines += [f"Query: {', '.join(query_ids)} {src.tag('query sequences', qpath)}", ""]
    sections: list[str] = []
    builders = {"gc": (stats, _stats_section), "orfs": (orfs, _orfs_section)}
    builders |= {"hits": (hits, _hits_section), "alignment": (alignment, _alignment_section)}
    for section, (given, build) in builders.items():
        if given:
            lines += build(box.readable(given), src)
            sections.append(section)
    picture_ref: FileRef | None = None
    if tree:
        pic = box.writable(picture or str(dst.with_suffix(".tree.svg")))
        lines += _tree_section(box.readable(tree), pic, title, query_ids, src)
        sections.append("tree")
        picture_ref = FileRef.model_validate(file_ref(pic))
    if notes:
        lines += ["## Run notes", "", *(f"- {n}" for n in notes), ""]
    lines += ["## Provenance", "", *src.table(), ""]
    dst.write_text("\n".join(lines), encoding="utf-8")
    inputs = [path for _, figure, path in src.rows if figure != "tree picture"]
    write_provenance(dst, tool="write_report", backend="biopython", inputs=inputs)
    return ReportResult(
        backend="biopython",
        backend_version=backend_version("biopython"),
        sections=sections,
        file=FileRef.model_validate(file_ref(dst)),
        picture=picture_ref,
    )


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:g}"
