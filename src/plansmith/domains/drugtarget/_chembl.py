"""chembl-server (Augmented Nature): ChEMBL web services answers.

``search_by_uniprot`` answers ChEMBL's target search, ``{"page_meta": {...}, "targets":
[{"target_chembl_id", "pref_name", "target_components": [{"accession"}], ...}]}`` (targets,
not compounds); the compounds of a target come from ``get_target_compounds``
(``{"target_chembl_id", "compound_ids": [...], "activities": [...]}``) or
``search_activities``; ``get_compound_info`` answers the molecule record. The server
catches every error into an isError text ``Error executing tool NAME: MCP error ...``
(an unknown id is HTTP 404). A search that finds nothing answers an empty list.
"""

from __future__ import annotations

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
    "search_compounds",
    "get_compound_info",
    "search_targets",
    "get_target_info",
    "get_target_compounds",
    "search_by_uniprot",
    "search_activities",
    "get_mechanism_of_action",
    "search_drugs",
]

STYLE: Style = "wrap"


def _table(name: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = data("chembl")[name]
    return rows


def _limit(args: Any) -> int:
    limit = field(args, "limit")
    return int(limit) if truthy(limit) and is_num(limit) else 25


def _page(key: str, rows: list[dict[str, Any]], limit: int, offset: int = 0) -> dict[str, Any]:
    meta = {
        "limit": limit,
        "next": None,
        "offset": offset,
        "previous": None,
        "total_count": len(rows),
    }
    return {key: rows[offset : offset + limit], "page_meta": meta}


def _matches(query: str, texts: list[str]) -> bool:
    wanted = words(query)
    have = {w for t in texts for w in words(t)}
    return bool(wanted) and all(w in have for w in wanted)


def _target_texts(t: dict[str, Any]) -> list[str]:
    texts = [t["target_chembl_id"], t["pref_name"], t["organism"]]
    for c in t["target_components"]:
        texts += [c["accession"], c["component_description"]]
        texts += [s["component_synonym"] for s in c["target_component_synonyms"]]
    return texts


def _one(table: str, key: str, chembl_id: str, what: str) -> dict[str, Any]:
    found = next((r for r in _table(table) if r[key] == chembl_id), None)
    if found is None:
        raise ThrownMcpError(INTERNAL_ERROR, f"Failed to get {what}: {ApiHttpError(404)}")
    return found


def _id_args(args: Any) -> bool:
    return is_obj(args) and nonempty_str(field(args, "chembl_id"))


def search_compounds(args: Any) -> Reply:
    ok = (
        is_obj(args)
        and nonempty_str(field(args, "query"))
        and optional(args, "limit", lambda n: is_num(n) and 0 < n <= 1000)
        and optional(args, "offset", lambda n: is_num(n) and n >= 0)
    )
    if not ok:
        raise ThrownMcpError(INVALID_PARAMS, "Invalid compound search arguments")
    found = [
        m
        for m in _table("molecules")
        if _matches(args["query"], [m["molecule_chembl_id"], m["pref_name"]])
    ]
    offset = field(args, "offset")
    return reply(_page("molecules", found, _limit(args), int(offset) if truthy(offset) else 0))


def get_compound_info(args: Any) -> Reply:
    if not _id_args(args):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid ChEMBL ID arguments")
    return reply(_one("molecules", "molecule_chembl_id", args["chembl_id"], "compound info"))


def search_targets(args: Any) -> Reply:
    if args is None:
        raise JsError("Cannot read properties of undefined (reading 'query')")
    query = field(args, "query")
    found = [t for t in _table("targets") if is_str(query) and _matches(query, _target_texts(t))]
    return reply(_page("targets", found, _limit(args)))


def get_target_info(args: Any) -> Reply:
    if not _id_args(args):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid arguments")
    return reply(_one("targets", "target_chembl_id", args["chembl_id"], "target info"))


def _activities(args: Any) -> list[dict[str, Any]]:
    rows = _table("activities")
    for key, column in (
        ("target_chembl_id", "target_chembl_id"),
        ("molecule_chembl_id", "molecule_chembl_id"),
        ("activity_type", "standard_type"),
    ):
        value = field(args, key)
        if truthy(value):
            rows = [r for r in rows if r[column] == value]
    return rows


def get_target_compounds(args: Any) -> Reply:
    if not truthy(args) or not is_str(field(args, "target_chembl_id")):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid target compounds arguments")
    activities = _activities({k: v for k, v in args.items() if k != "molecule_chembl_id"})[
        : _limit(args)
    ]
    compound_ids = list(dict.fromkeys(a["molecule_chembl_id"] for a in activities))
    body = {
        "target_chembl_id": args["target_chembl_id"],
        "total_activities": len(activities),
        "unique_compounds": len(compound_ids),
        "compound_ids": compound_ids[:100],
        "activities": activities[:50],
    }
    return reply(body)


def search_by_uniprot(args: Any) -> Reply:
    if not truthy(args) or not is_str(field(args, "uniprot_id")):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid UniProt arguments")
    found = [t for t in _table("targets") if _matches(args["uniprot_id"], _target_texts(t))]
    return reply(_page("targets", found, _limit(args)))


def search_activities(args: Any) -> Reply:
    if args is None:
        raise JsError("Cannot read properties of undefined (reading 'limit')")
    return reply(_page("activities", _activities(args), _limit(args)))


def get_mechanism_of_action(args: Any) -> Reply:
    if not _id_args(args):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid mechanism of action arguments")
    found = [m for m in _table("mechanisms") if m["molecule_chembl_id"] == args["chembl_id"]]
    return reply(_page("mechanisms", found, 50))


def search_drugs(args: Any) -> Reply:
    if not truthy(args) or not is_str(field(args, "query")):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid drug search arguments")
    molecules = [
        m
        for m in _table("molecules")
        if _matches(args["query"], [m["molecule_chembl_id"], m["pref_name"]])
    ][: _limit(args)]
    drugs = [m for m in molecules if truthy(m.get("max_phase")) and float(m["max_phase"]) >= 1]
    return reply({"query": args["query"], "total_results": len(drugs), "drugs": drugs})


HANDLERS: dict[str, Handler] = {
    "search_compounds": search_compounds,
    "get_compound_info": get_compound_info,
    "search_targets": search_targets,
    "get_target_info": get_target_info,
    "get_target_compounds": get_target_compounds,
    "search_by_uniprot": search_by_uniprot,
    "search_activities": search_activities,
    "get_mechanism_of_action": get_mechanism_of_action,
    "search_drugs": search_drugs,
}
