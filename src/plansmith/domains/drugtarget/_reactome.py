"""reactome-server (Augmented Nature): Reactome Content Service answers.

Every tool of the public server is here. ``find_pathways_by_gene`` answers
``{"gene", "protein": {"id", "name"}, "pathwayCount", "pathways": [{"id", "name", "url"}]}``
where ``name`` is a list, as Reactome's Event objects carry it; ``search_pathways`` answers
``{"query", "totalResults", "returnedResults", "results": [{"id", "name", ...}]}``. A search
that finds nothing is HTTP 404 in Reactome, so the public server answers an isError text
(``Error ...: Request failed with status code 404``); a pathway name that resolves to no
pathway answers an isError JSON ``{"error", "suggestion"}``. Reactions and
interactions are not in the data set: their lists are empty.
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
    nonempty_str,
    optional,
    reply,
    truthy,
    words,
)

__all__ = [
    "STYLE",
    "HANDLERS",
    "search_pathways",
    "get_pathway_details",
    "find_pathways_by_gene",
    "find_pathways_by_disease",
    "get_pathway_hierarchy",
    "get_pathway_participants",
    "get_pathway_reactions",
    "get_protein_interactions",
]

STYLE: Style = "throw"

_STID = re.compile(r"^R-[A-Z]{3}-[0-9]+\Z")
_SPECIES = "Homo sapiens"


def _pathways() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = data("reactome")["pathways"]
    return found


def _proteins() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = data("reactome")["proteins"]
    return found


def _hit(query: str, texts: list[str]) -> bool:
    wanted = words(query)
    have = {w for t in texts for w in words(t)}
    return bool(wanted) and all(w in have for w in wanted)


def _search(query: str, types: str | None) -> list[dict[str, Any]]:
    """``/search/query``: the result groups' entries (HTTP 404 when nothing matches)."""
    groups: list[dict[str, Any]] = []
    if types in (None, "Pathway"):
        entries = [
            {
                "stId": p["stId"],
                "name": p["name"],
                "exactType": "Pathway",
                "typeName": "Pathway",
                "species": [p["species"]],
                "summation": p["summation"],
            }
            for p in _pathways()
            if _hit(query, [p["stId"], p["name"], p["summation"], *p["genes"]])
        ]
        if entries:
            groups.append({"typeName": "Pathway", "entries": entries})
    if types in (None, "Protein"):
        entries = [
            {
                "stId": p["stId"],
                "name": p["name"],
                "exactType": "ReferenceGeneProduct",
                "typeName": "Protein",
                "species": p["species"],
            }
            for p in _proteins()
            if _hit(query, [p["gene"], p["stId"], p["name"]])
        ]
        if entries:
            groups.append({"typeName": "Protein", "entries": entries})
    if not groups:
        raise ApiHttpError(404)
    return groups


def _entries(groups: list[dict[str, Any]], type_name: str | None = None) -> list[dict[str, Any]]:
    return [e for g in groups if type_name in (None, g["typeName"]) for e in g["entries"]]


def _pathway(st_id: str) -> dict[str, Any]:
    found = next((p for p in _pathways() if p["stId"] == st_id), None)
    if found is None:
        raise ApiHttpError(404)
    return found


def _resolve(identifier: str) -> str | None:
    if _STID.match(identifier):
        return identifier
    try:
        entries = _entries(_search(identifier, "Pathway"))
    except ApiHttpError:
        return None
    return str(entries[0]["stId"]) if entries else None


def _not_found(identifier: str) -> Reply:
    body = {
        "error": f"No pathway found for identifier: {identifier}",
        "suggestion": "Try using a Reactome stable identifier (e.g., R-HSA-1640170) "
        "or search for the pathway first",
    }
    return Reply(js_json(body), is_error=True)


def _query(p: dict[str, Any]) -> dict[str, Any]:
    """``/data/query/{stId}`` of a pathway (the fields the public server reads, and a few)."""
    return {
        "stId": p["stId"],
        "displayName": p["name"],
        "name": [p["name"]],
        "schemaClass": "Pathway",
        "speciesName": p["species"],
        "species": [{"displayName": p["species"], "name": [p["species"]], "taxId": "9606"}],
        "summation": [{"displayName": p["summation"], "text": p["summation"]}],
    }


def _participants(p: dict[str, Any]) -> list[dict[str, Any]]:
    by_gene = {q["gene"]: q for q in _proteins()}
    return [
        {
            "stId": by_gene[g]["stId"],
            "displayName": by_gene[g]["name"],
            "name": by_gene[g]["name"],
            "schemaClass": "EntityWithAccessionedSequence",
            "identifier": by_gene[g]["stId"],
            "species": [{"displayName": _SPECIES}],
        }
        for g in p["genes"]
        if g in by_gene
    ]


def _listing(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "id": item["stId"],
            "name": re.sub(r"<[^>]*>", "", item.get("name") or "") or "Unknown",
            "type": item.get("exactType") or item.get("typeName") or "Unknown",
            "species": item["species"][0]
            if isinstance(item.get("species"), list)
            else item.get("species") or "Unknown",
            "description": (item.get("summation") or "No description available")[:200] + "...",
            "url": f"https://reactome.org/content/detail/{item['stId']}",
        }
        for item in items
    ]


def search_pathways(args: Any) -> Reply:
    ok = (
        is_obj(args)
        and nonempty_str(field(args, "query"))
        and optional(
            args, "type", lambda t: t in ("pathway", "reaction", "protein", "complex", "disease")
        )
        and optional(args, "size", lambda s: is_num(s) and 0 < s <= 100)
    )
    if not ok:
        raise ThrownMcpError(INVALID_PARAMS, "Invalid search arguments")
    type_ = field(args, "type")
    try:
        groups = _search(args["query"], None)
    except ApiHttpError as error:
        return Reply(f"Error searching pathways: {error}", is_error=True)
    entries = _entries(groups)
    total = len(entries)
    if truthy(type_):
        entries = [
            e for e in entries if type_ in e["exactType"].lower() or type_ in e["typeName"].lower()
        ]
    if truthy(field(args, "size")):
        entries = entries[: int(args["size"])]
    body = {
        "query": args["query"],
        "totalResults": total,
        "returnedResults": len(entries),
        "results": _listing(entries),
    }
    return reply(body)


def _id_args(args: Any) -> str:
    if not (is_obj(args) and nonempty_str(field(args, "id"))):
        raise ThrownMcpError(INVALID_PARAMS, "Pathway ID is required")
    return str(args["id"])


def get_pathway_details(args: Any) -> Reply:
    identifier = _id_args(args)
    st_id = _resolve(identifier)
    if st_id is None:
        return _not_found(identifier)
    try:
        p = _pathway(st_id)
    except ApiHttpError as error:
        return Reply(f"Error getting pathway details: {error}", is_error=True)
    body = {
        "id": st_id,
        "originalQuery": identifier,
        "basicInfo": _query(p),
        "components": "Components data not available via API",
        "participants": _participants(p) or "Participants data not available via API",
        "url": f"https://reactome.org/content/detail/{st_id}",
        "diagramUrl": f"https://reactome.org/PathwayBrowser/#/{st_id}",
        "note": "Some detailed information may not be available through the current API endpoints",
    }
    return reply(body)


def find_pathways_by_gene(args: Any) -> Reply:
    ok = is_obj(args) and nonempty_str(field(args, "gene")) and optional(args, "species", is_str)
    if not ok:
        raise ThrownMcpError(INVALID_PARAMS, "Invalid gene arguments")
    gene, species = args["gene"], field(args, "species")
    try:
        proteins = _entries(_search(gene, "Protein"), "Protein")
    except ApiHttpError as error:
        return Reply(f"Error finding pathways by gene: {error}", is_error=True)
    if truthy(species):
        proteins = [e for e in proteins if any(species.lower() in s.lower() for s in e["species"])]
    if not proteins:
        body = {
            "gene": gene,
            "species": species or _SPECIES,
            "message": "No protein entity found for this gene",
            "pathways": [],
        }
        return reply(body)
    protein = proteins[0]
    gene_symbol = next(q["gene"] for q in _proteins() if q["stId"] == protein["stId"])
    pathways = [p for p in _pathways() if gene_symbol in p["genes"]]
    body = {
        "gene": gene,
        "protein": {"id": protein["stId"], "name": protein["name"]},
        "pathwayCount": len(pathways),
        "pathways": [
            {
                "id": p["stId"],
                "name": [p["name"]],
                "url": f"https://reactome.org/content/detail/{p['stId']}",
            }
            for p in pathways
        ],
    }
    return reply(body)


def find_pathways_by_disease(args: Any) -> Reply:
    ok = (
        is_obj(args)
        and nonempty_str(field(args, "disease"))
        and optional(args, "size", lambda s: is_num(s) and 0 < s <= 100)
    )
    if not ok:
        raise ThrownMcpError(INVALID_PARAMS, "Invalid disease arguments")
    try:
        entries = _entries(_search(args["disease"], "Pathway"), "Pathway")
    except ApiHttpError as error:
        return Reply(f"Error finding pathways by disease: {error}", is_error=True)
    if truthy(field(args, "size")):
        entries = entries[: int(args["size"])]
    body = {"disease": args["disease"], "pathwayCount": len(entries), "pathways": _listing(entries)}
    return reply(body)


def _resolved(args: Any, key: str, what: str) -> tuple[str, dict[str, Any]] | Reply:
    identifier = str(args[key])
    st_id = _resolve(identifier)
    if st_id is None:
        return _not_found(identifier)
    try:
        return st_id, _pathway(st_id)
    except ApiHttpError as error:
        return Reply(f"Error getting {what}: {error}", is_error=True)


def get_pathway_hierarchy(args: Any) -> Reply:
    _id_args(args)
    got = _resolved(args, "id", "pathway hierarchy")
    if isinstance(got, Reply):
        return got
    st_id, p = got
    body = {
        "pathwayId": st_id,
        "originalQuery": args["id"],
        "basicInfo": {"name": p["name"], "type": "Pathway", "species": p["species"]},
        "ancestors": "Ancestor information not available via current API",
        "children": "Child pathway information not available via current API",
        "note": "Hierarchy data may be limited due to API endpoint availability",
    }
    return reply(body)


def get_pathway_participants(args: Any) -> Reply:
    _id_args(args)
    got = _resolved(args, "id", "pathway participants")
    if isinstance(got, Reply):
        return got
    st_id, p = got
    participants = _participants(p)
    body = {
        "pathwayId": st_id,
        "originalQuery": args["id"],
        "participantCount": len(participants),
        "participants": [
            {
                "id": x["stId"],
                "name": x["name"],
                "type": x["schemaClass"],
                "species": _SPECIES,
                "identifier": x["identifier"],
                "url": f"https://reactome.org/content/detail/{x['stId']}",
            }
            for x in participants[:50]
        ],
    }
    return reply(body)


def get_pathway_reactions(args: Any) -> Reply:
    _id_args(args)
    got = _resolved(args, "id", "pathway reactions")
    if isinstance(got, Reply):
        return got
    st_id, _ = got
    return reply(
        {"pathwayId": st_id, "originalQuery": args["id"], "reactionCount": 0, "reactions": []}
    )


def get_protein_interactions(args: Any) -> Reply:
    ok = (
        is_obj(args)
        and nonempty_str(field(args, "pathwayId"))
        and optional(
            args,
            "interactionType",
            lambda t: t in ("protein-protein", "regulatory", "catalysis", "all"),
        )
    )
    if not ok:
        raise ThrownMcpError(INVALID_PARAMS, "Invalid interaction arguments")
    got = _resolved(args, "pathwayId", "protein interactions")
    if isinstance(got, Reply):
        return got
    st_id, p = got
    proteins = _participants(p)
    kind = field(args, "interactionType")
    body = {
        "pathwayId": st_id,
        "originalQuery": args["pathwayId"],
        "basicInfo": {"name": p["name"], "type": "Pathway", "species": p["species"]},
        "proteinCount": len(proteins),
        "reactionCount": 0,
        "proteins": [
            {
                "id": x["stId"],
                "name": x["name"],
                "type": x["schemaClass"],
                "identifier": x["identifier"],
            }
            for x in proteins[:20]
        ],
        "potentialInteractions": [],
        "note": "Protein interactions inferred from pathway components and reactions. For detailed "
        "molecular interactions, consider using specialized protein interaction databases.",
        "analysisNote": f"Filtered for {'undefined' if kind is None else kind} interactions"
        if kind != "all"
        else "Showing all available interaction types",
    }
    return reply(body)


HANDLERS: dict[str, Handler] = {
    "search_pathways": search_pathways,
    "get_pathway_details": get_pathway_details,
    "find_pathways_by_gene": find_pathways_by_gene,
    "find_pathways_by_disease": find_pathways_by_disease,
    "get_pathway_hierarchy": get_pathway_hierarchy,
    "get_pathway_participants": get_pathway_participants,
    "get_pathway_reactions": get_pathway_reactions,
    "get_protein_interactions": get_protein_interactions,
}
