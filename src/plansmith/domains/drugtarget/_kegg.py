"""kegg-server (Augmented Nature's KEGG server): KEGG REST answers.

The data set's entries are written out as KEGG flat files and lists, and parsed with a
port of the public server's ``parseKEGGEntry`` and ``parseKEGGList``, quirks included:
an entry keeps only the first line of each multi-line field (``gene`` holds one gene), and
a list keeps one value per key (``get_pathway_genes`` holds one gene; a gene's links,
which KEGG lists in the order of the pathway ids, keep the last pathway). The server
catches every error into a text ``Error executing tool NAME: MCP error -32603: Failed to
...: Request failed with status code 404`` with isError (an unknown entry is HTTP 404).
"""

from __future__ import annotations

import re
from typing import Any

from plansmith.domains.drugtarget._base import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    ApiHttpError,
    Handler,
    JsError,
    Reply,
    Style,
    ThrownMcpError,
    data,
    field,
    is_num,
    is_obj,
    is_str,
    nonempty_str,
    optional,
    reply,
    truthy,
    words,
)

__all__ = [
    "STYLE",
    "HANDLERS",
    "parse_entry",
    "parse_list",
    "search_pathways",
    "get_pathway_info",
    "get_pathway_genes",
    "search_genes",
    "get_gene_info",
    "convert_identifiers",
    "find_related_entries",
]

STYLE: Style = "wrap"

_ORG = "Homo sapiens (human)"


def _pathways() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = data("kegg")["pathways"]
    return found


def _genes() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = data("kegg")["genes"]
    return found


def _gene_by_symbol() -> dict[str, dict[str, Any]]:
    return {g["symbol"]: g for g in _genes()}


# --- the public server's parsers, ported ---


def parse_entry(text: str) -> dict[str, Any]:
    """``parseKEGGEntry``: the first line of each known field of a flat file."""
    result: dict[str, Any] = {}
    linked = {
        "PATHWAY": "pathway",
        "GENE": "gene",
        "COMPOUND": "compound",
        "REACTION": "reaction",
        "ORTHOLOGY": "orthology",
    }
    for line in text.split("\n"):
        if line.startswith("ENTRY"):
            parts = re.split(r"\s+", line)
            result["entry"] = parts[1] if len(parts) > 1 else None
            result["type"] = parts[2] if len(parts) > 2 else None
        elif line.startswith("NAME"):
            result["name"] = line[12:].strip()
        elif line.startswith("DEFINITION"):
            result["definition"] = line[12:].strip()
        elif line.startswith("FORMULA"):
            result["formula"] = line[12:].strip()
        elif any(line.startswith(f) for f in linked):
            field_name = next(f for f in linked if line.startswith(f))
            key = linked[field_name]
            result.setdefault(key, {})
            match = re.search(rf"{field_name}\s+(\S+)\s+(.+)", line)
            if match:
                result[key][match.group(1)] = match.group(2)
        elif line.startswith("DBLINKS"):
            result.setdefault("dblinks", {})
            match = re.search(r"DBLINKS\s+(\S+):\s+(.+)", line)
            if match:
                result["dblinks"][match.group(1)] = re.split(r"\s+", match.group(2))
        elif line.startswith("///"):
            break
    return result


def parse_list(text: str) -> dict[str, str]:
    """``parseKEGGList``: tab-separated lines as an object (a later line wins a key)."""
    result: dict[str, str] = {}
    for line in text.split("\n"):
        if line.strip() and line.find("\t") > 0:
            key, value = line.split("\t", 1)
            result[key] = value
    return result


# --- the KEGG REST API over the data set ---


def _field(name: str, lines: list[str]) -> list[str]:
    return [f"{name if i == 0 else '':<12}{line}" for i, line in enumerate(lines)]


def _pathway_text(pathway_id: str) -> str:
    """``/get/{pathway_id}`` (``hsa05224``, ``map05224``, ``path:hsa05224``)."""
    bare = pathway_id.removeprefix("path:")
    number = bare[3:] if re.match(r"^(hsa|map|ko)[0-9]{5}\Z", bare) else None
    p = next((p for p in _pathways() if number and p["id"][3:] == number), None)
    if p is None:
        raise ApiHttpError(404)
    genes = _gene_by_symbol()
    lines = [f"{'ENTRY':<12}{bare:<28}Pathway"]
    lines += _field("NAME", [p["name"] if bare.startswith("hsa") else p["name"].split(" - ")[0]])
    lines += _field("DESCRIPTION", [p["description"]])
    lines += _field("CLASS", [p["class"]])
    lines += _field("PATHWAY_MAP", [f"{bare}  {p['name'].split(' - ')[0]}"])
    if bare.startswith("hsa"):
        lines += _field("ORGANISM", [f"{_ORG} [GN:hsa]"])
        entries = [genes[s] for s in p["genes"] if s in genes]
        lines += _field("GENE", [f"{g['id'][4:]}  {g['symbol']}; {g['name']}" for g in entries])
    lines += _field("KO_PATHWAY", [f"ko{number}"])
    return "\n".join([*lines, "///", ""])


def _gene_text(gene_id: str) -> str:
    g = next((g for g in _genes() if g["id"] == gene_id), None)
    if g is None:
        raise ApiHttpError(404)
    linked = [p for p in _pathways() if g["symbol"] in p["genes"]]
    lines = [f"{'ENTRY':<12}{g['id'][4:]:<18}CDS       T01001"]
    lines += _field("SYMBOL", [g["symbol"]])
    lines += _field("NAME", [f"(RefSeq) {g['name']}"])
    lines += _field("ORGANISM", [f"hsa  {_ORG}"])
    lines += _field("PATHWAY", [f"{p['id']}  {p['name'].split(' - ')[0]}" for p in linked])
    lines += _field(
        "DBLINKS",
        [f"NCBI-GeneID: {g['id'][4:]}", f"Ensembl: {g['ensembl']}", f"UniProt: {g['uniprot']}"],
    )
    return "\n".join([*lines, "///", ""])


def _find(database: str, query: str) -> str:
    wanted = words(query)
    lines: list[str] = []
    if database.startswith("pathway"):
        organism = database[len("pathway/") :] if "/" in database else ""
        for p in _pathways():
            title = p["name"].split(" - ")[0]
            have = {w for t in (p["id"], p["name"], p["description"]) for w in words(t)}
            if wanted and all(w in have for w in wanted):
                if organism:
                    lines.append(f"path:{organism}{p['id'][3:]}\t{p['name']}")
                else:
                    lines.append(f"path:map{p['id'][3:]}\t{title}")
    elif database in ("genes", "hsa"):
        for g in _genes():
            have = {w for t in (g["id"], g["symbol"], g["name"], g["uniprot"]) for w in words(t)}
            if wanted and all(w in have for w in wanted):
                lines.append(f"{g['id']}\t{g['symbol']}; {g['name']}")
    return "\n".join(lines) + ("\n" if lines else "")


def _pathways_of(gene: dict[str, Any]) -> list[str]:
    """The pathways of a gene, ``path:hsa…``, in the order of their ids, as KEGG lists
    them (``/link/pathway/hsa:2099``; ``parseKEGGList`` then keeps the last one)."""
    return sorted(f"path:{p['id']}" for p in _pathways() if gene["symbol"] in p["genes"])


def _links(target_db: str, source: str) -> str:
    """``/link/{target_db}/{source}``: source a database or ``+``-joined entries."""
    pairs: list[tuple[str, str]] = []
    by_symbol = _gene_by_symbol()
    items = source.split("+")
    for item in items:
        if item in ("hsa", "genes") and target_db == "pathway":
            for g in _genes():
                pairs += [(g["id"], p) for p in _pathways_of(g)]
        elif item == "pathway" and target_db in ("hsa", "genes"):
            for p in _pathways():
                pairs += [
                    (f"path:{p['id']}", by_symbol[s]["id"]) for s in p["genes"] if s in by_symbol
                ]
        elif item.startswith("hsa:") and target_db == "pathway":
            gene = next((x for x in _genes() if x["id"] == item), None)
            if gene is not None:
                pairs += [(item, p) for p in _pathways_of(gene)]
        elif target_db in ("hsa", "genes"):
            bare = item.removeprefix("path:")
            found = next((x for x in _pathways() if x["id"] == bare), None)
            if found is not None:
                pairs += [
                    (f"path:{found['id']}", by_symbol[s]["id"])
                    for s in found["genes"]
                    if s in by_symbol
                ]
    return "".join(f"{a}\t{b}\n" for a, b in pairs)


def _conversions(target_db: str, source: str) -> str:
    """``/conv/{target_db}/{source}`` between KEGG genes, UniProt and NCBI Gene ids."""
    out: list[tuple[str, str]] = []
    for item in source.split("+"):
        for g in _genes():
            ids = {
                "hsa": g["id"],
                "uniprot": f"up:{g['uniprot']}",
                "ncbi-geneid": f"ncbi-geneid:{g['id'][4:]}",
            }
            aliases = {ids["hsa"], ids["uniprot"], f"uniprot:{g['uniprot']}", ids["ncbi-geneid"]}
            whole_db = item in ("hsa", "uniprot", "ncbi-geneid") and item != target_db
            if (item in aliases or whole_db) and target_db in ids:
                source_id = ids[item] if whole_db else item
                out.append((source_id, ids[target_db]))
    return "".join(f"{a}\t{b}\n" for a, b in out)


# --- the tools ---


def _failed(what: str, error: ApiHttpError) -> ThrownMcpError:
    return ThrownMcpError(INTERNAL_ERROR, f"Failed to {what}: {error}")


def _search_args(args: Any) -> bool:
    return (
        is_obj(args)
        and nonempty_str(field(args, "query"))
        and optional(args, "organism_code", is_str)
        and optional(args, "max_results", lambda n: is_num(n) and 0 < n <= 1000)
        and optional(args, "search_type", is_str)
    )


def _limited(args: Any, found: dict[str, str]) -> dict[str, str]:
    n = field(args, "max_results")
    return dict(list(found.items())[: int(n) if truthy(n) else 50])


def search_pathways(args: Any) -> Reply:
    if not _search_args(args):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid search arguments")
    organism = field(args, "organism_code")
    database = f"pathway/{organism}" if truthy(organism) else "pathway"
    found = parse_list(_find(database, args["query"]))
    limited = _limited(args, found)
    body = {
        "query": args["query"],
        "database": database,
        "total_found": len(found),
        "returned_count": len(limited),
        "pathways": limited,
    }
    return reply(body)


def get_pathway_info(args: Any) -> Reply:
    ok = (
        is_obj(args)
        and nonempty_str(field(args, "pathway_id"))
        and optional(
            args, "format", lambda f: f in ("json", "kgml", "image", "conf", "aaseq", "ntseq")
        )
    )
    if not ok:
        raise ThrownMcpError(INVALID_PARAMS, "Invalid pathway arguments")
    try:
        text = _pathway_text(args["pathway_id"])
    except ApiHttpError as error:
        raise _failed("get pathway info", error) from None
    format_ = field(args, "format") or "json"
    return reply(parse_entry(text)) if format_ == "json" else Reply(text)


def _js_string(value: Any) -> str:
    """A value put into a URL by a template literal."""
    return "undefined" if value is None else value if isinstance(value, str) else str(value)


def get_pathway_genes(args: Any) -> Reply:
    ok = (
        is_obj(args)
        and optional(args, "pathway_id", is_str)
        and optional(args, "organism_code", is_str)
        and optional(args, "include_genes", lambda b: isinstance(b, bool))
        and optional(args, "include_compounds", lambda b: isinstance(b, bool))
    )
    if not ok:
        raise ThrownMcpError(INVALID_PARAMS, "Invalid pathway arguments")
    pathway_id = field(args, "pathway_id")
    if not nonempty_str(pathway_id):
        raise _failed("get pathway genes", ApiHttpError(400))
    links = parse_list(_links("genes", pathway_id))
    return reply({"pathway_id": pathway_id, "gene_count": len(links), "genes": links})


def search_genes(args: Any) -> Reply:
    if not _search_args(args):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid search arguments")
    organism = field(args, "organism_code")
    database = organism if truthy(organism) else "genes"
    found = parse_list(_find(database, args["query"]))
    limited = _limited(args, found)
    body = {
        "query": args["query"],
        "database": database,
        "total_found": len(found),
        "returned_count": len(limited),
        "genes": limited,
    }
    return reply(body)


def get_gene_info(args: Any) -> Reply:
    ok = (
        is_obj(args)
        and optional(args, "gene_id", is_str)
        and optional(args, "organism_code", is_str)
        and optional(args, "include_sequences", lambda b: isinstance(b, bool))
    )
    if not ok:
        raise ThrownMcpError(INVALID_PARAMS, "Invalid gene arguments")
    try:
        text = _gene_text(_js_string(field(args, "gene_id")))
    except ApiHttpError as error:
        raise _failed("get gene info", error) from None
    return reply(parse_entry(text))


def _dbs(args: Any) -> tuple[str, str]:
    if args is None:
        raise JsError("Cannot read properties of undefined (reading 'source_db')")
    source_db, target_db = field(args, "source_db"), field(args, "target_db")
    if not truthy(source_db) or not truthy(target_db):
        raise ThrownMcpError(INVALID_PARAMS, "Source and target databases are required")
    return _js_string(source_db), _js_string(target_db)


def _joined(value: Any) -> str | None:
    """``value.join('+')`` of a non-empty list (None: use the whole database)."""
    if isinstance(value, list) and value:
        return "+".join("" if v is None else _js_string(v) for v in value)
    return None


def convert_identifiers(args: Any) -> Reply:
    source_db, target_db = _dbs(args)
    source = _joined(field(args, "identifiers")) or source_db
    conversions = parse_list(_conversions(target_db, source))
    body = {
        "source_db": field(args, "source_db"),
        "target_db": field(args, "target_db"),
        "conversion_count": len(conversions),
        "conversions": conversions,
    }
    return reply(body)


def find_related_entries(args: Any) -> Reply:
    source_db, target_db = _dbs(args)
    source = _joined(field(args, "source_entries")) or source_db
    links = parse_list(_links(target_db, source))
    body = {
        "source_db": field(args, "source_db"),
        "target_db": field(args, "target_db"),
        "link_count": len(links),
        "links": links,
    }
    return reply(body)


HANDLERS: dict[str, Handler] = {
    "search_pathways": search_pathways,
    "get_pathway_info": get_pathway_info,
    "get_pathway_genes": get_pathway_genes,
    "search_genes": search_genes,
    "get_gene_info": get_gene_info,
    "convert_identifiers": convert_identifiers,
    "find_related_entries": find_related_entries,
}
