"""uniprot-server (Augmented Nature): UniProtKB REST answers.

``search_proteins`` and ``search_by_gene`` answer ``{"results": [entry, ...]}`` (entries in
the UniProtKB JSON shape); ``get_protein_info`` with ``format: "json"`` answers the entry.
Without ``format`` the public server answers the text ``[object Object]`` (it fetches JSON
and stringifies it with ``String``); so does this one, so pass ``format: "json"``.
An accession of the wrong form is HTTP 400, an unknown one 404 (isError texts). Sequence
residues are not shipped: FASTA answers carry ``X`` for every residue.
"""

from __future__ import annotations

import re
from typing import Any

from plansmith.domains.drugtarget._base import (
    INVALID_PARAMS,
    ApiHttpError,
    Handler,
    Reply,
    Style,
    ThrownMcpError,
    data,
    field,
    is_num,
    is_obj,
    is_str,
    js_json,
    js_text,
    nonempty_str,
    optional,
    reply,
    truthy,
    words,
)

STYLE: Style = "throw"

_ACCESSION = re.compile(
    r"^([OPQ][0-9][A-Z0-9]{3}[0-9]|[A-NR-Z][0-9]([A-Z][A-Z0-9]{2}[0-9]){1,2})(-[0-9]+)?\Z"
)

__all__ = [
    "STYLE",
    "HANDLERS",
    "search_proteins",
    "get_protein_info",
    "search_by_gene",
    "get_protein_sequence",
]
_FORMATS = ("json", "tsv", "fasta", "xml")


def _entries() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = data("uniprot")["entries"]
    return entries


def _gene(entry: dict[str, Any]) -> str:
    return str(entry["genes"][0]["geneName"]["value"])


def _name(entry: dict[str, Any]) -> str:
    return str(entry["proteinDescription"]["recommendedName"]["fullName"]["value"])


def _texts(entry: dict[str, Any]) -> list[str]:
    function = " ".join(t["value"] for c in entry["comments"] for t in c["texts"])
    organism = entry["organism"]
    return [
        entry["primaryAccession"],
        entry["uniProtkbId"],
        _gene(entry),
        _name(entry),
        organism["scientificName"],
        organism["commonName"],
        function,
    ]


def _in_organism(entry: dict[str, Any], organism: Any) -> bool:
    if not truthy(organism):
        return True
    wanted = str(organism).lower()
    names = (entry["organism"]["scientificName"].lower(), entry["organism"]["commonName"].lower())
    return any(wanted == n or wanted in n for n in names) or wanted == str(
        entry["organism"]["taxonId"]
    )


def _size(args: Any) -> int:
    size = field(args, "size")
    return int(size) if truthy(size) else 25


def _lookup(accession: str) -> dict[str, Any]:
    if not _ACCESSION.match(accession):
        raise ApiHttpError(400)
    base = accession.split("-", maxsplit=1)[0]
    entry = next((e for e in _entries() if e["primaryAccession"] == base), None)
    if entry is None:
        raise ApiHttpError(404)
    return entry


def _fasta(entry: dict[str, Any]) -> str:
    head = (
        f">sp|{entry['primaryAccession']}|{entry['uniProtkbId']} {_name(entry)} "
        f"OS={entry['organism']['scientificName']} OX={entry['organism']['taxonId']} "
        f"GN={_gene(entry)}"
    )
    residues = "X" * int(entry["sequence"]["length"])
    lines = [residues[i : i + 60] for i in range(0, len(residues), 60)]
    return "\n".join([head, *lines]) + "\n"


def _tsv(entries: list[dict[str, Any]]) -> str:
    rows = ["Entry\tEntry Name\tReviewed\tProtein names\tGene Names\tOrganism\tLength"]
    for e in entries:
        org = f"{e['organism']['scientificName']} ({e['organism']['commonName']})"
        rows.append(
            f"{e['primaryAccession']}\t{e['uniProtkbId']}\treviewed\t{_name(e)}\t{_gene(e)}\t{org}\t"
            f"{e['sequence']['length']}"
        )
    return "\n".join(rows) + "\n"


def _xml(entries: list[dict[str, Any]]) -> str:
    body = "".join(
        f'<entry dataset="Swiss-Prot"><accession>{e["primaryAccession"]}</accession>'
        f"<name>{e['uniProtkbId']}</name></entry>"
        for e in entries
    )
    return f'<?xml version="1.0" encoding="UTF-8"?><uniprot xmlns="http://uniprot.org/uniprot">{body}</uniprot>'


def _as(format_: str, entries: list[dict[str, Any]], single: bool) -> Any:
    """The API's response data in ``format_``: JSON (an object) or a text."""
    if format_ == "json":
        return entries[0] if single else {"results": entries}
    if format_ == "tsv":
        return _tsv(entries)
    if format_ == "fasta":
        return "".join(_fasta(e) for e in entries)
    return _xml(entries)


def _query_terms(query: str) -> list[str]:
    terms = []
    for term in words(query.replace('"', " ").replace("(", " ").replace(")", " ")):
        term = term.split(":", 1)[1] if ":" in term else term
        if term:
            terms.append(term)
    return terms


def search_proteins(args: Any) -> Reply:
    ok = (
        is_obj(args)
        and is_str(field(args, "query"))
        and optional(args, "organism", is_str)
        and optional(args, "size", lambda s: is_num(s) and 0 < s <= 500)
        and optional(args, "format", lambda f: f in _FORMATS)
    )
    if not ok:
        raise ThrownMcpError(INVALID_PARAMS, "Invalid search arguments")
    terms = _query_terms(args["query"])
    if not terms:
        return Reply("Error searching proteins: Request failed with status code 400", is_error=True)
    found = [
        e
        for e in _entries()
        if _in_organism(e, field(args, "organism"))
        and all(any(t in words(x) or t == x.lower() for x in _texts(e)) for t in terms)
    ][: _size(args)]
    format_ = field(args, "format") or "json"
    result = _as(format_, found, single=False)
    return Reply(js_json(result) if isinstance(result, dict) else str(result))


def get_protein_info(args: Any) -> Reply:
    ok = (
        is_obj(args)
        and nonempty_str(field(args, "accession"))
        and optional(args, "format", lambda f: f in _FORMATS)
    )
    if not ok:
        raise ThrownMcpError(INVALID_PARAMS, "Invalid protein info arguments")
    try:
        entry = _lookup(args["accession"])
    except ApiHttpError as error:
        return Reply(f"Error fetching protein info: {error}", is_error=True)
    format_ = field(args, "format")
    result = _as(format_ or "json", [entry], single=True)
    return Reply(js_json(result) if format_ == "json" else js_text(result))


def search_by_gene(args: Any) -> Reply:
    ok = (
        is_obj(args)
        and is_str(field(args, "gene"))
        and optional(args, "organism", is_str)
        and optional(args, "size", lambda s: is_num(s) and 0 < s <= 500)
    )
    if not ok:
        raise ThrownMcpError(INVALID_PARAMS, "Invalid gene search arguments")
    gene = args["gene"].strip().lower()
    if not gene:
        return Reply("Error searching by gene: Request failed with status code 400", is_error=True)
    found = [
        e
        for e in _entries()
        if _gene(e).lower() == gene and _in_organism(e, field(args, "organism"))
    ]
    return reply({"results": found[: _size(args)]})


def get_protein_sequence(args: Any) -> Reply:
    ok = (
        is_obj(args)
        and nonempty_str(field(args, "accession"))
        and optional(args, "format", lambda f: f in ("fasta", "json"))
    )
    if not ok:
        raise ThrownMcpError(INVALID_PARAMS, "Invalid sequence arguments")
    try:
        entry = _lookup(args["accession"])
    except ApiHttpError as error:
        return Reply(f"Error fetching sequence: {error}", is_error=True)
    format_ = field(args, "format") or "fasta"
    return Reply(js_json(entry) if format_ == "json" else _fasta(entry))


HANDLERS: dict[str, Handler] = {
    "search_proteins": search_proteins,
    "get_protein_info": get_protein_info,
    "search_by_gene": search_by_gene,
    "get_protein_sequence": get_protein_sequence,
}
