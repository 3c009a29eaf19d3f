"""opentargets-server (Augmented Nature): the Open Targets Platform GraphQL answers.

Every tool of the public server is here. As there, ``search_*`` answer
``{"data": {"search": {"hits": [...], "total": N}}}``; the summary answers
``{"diseaseId", "diseaseName", "totalTargets", "topTargets": [...], "fullResults"}``; an
unknown id gives ``{"data": {"disease": null}}`` (GraphQL finds nothing), not an error.
``minScore`` and ``size`` of the association tools are ignored, as the public server's
GraphQL queries ignore them.
"""

from __future__ import annotations

from typing import Any

from plansmith.domains.drugtarget._base import (
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
    "search_targets",
    "search_diseases",
    "get_target_disease_associations",
    "get_disease_targets_summary",
    "get_target_details",
    "get_disease_details",
]

STYLE: Style = "throw"


def _db() -> Any:
    return data("opentargets")


def _search_args(args: Any) -> bool:
    return (
        is_obj(args)
        and nonempty_str(field(args, "query"))
        and optional(args, "size", lambda s: is_num(s) and 0 < s <= 500)
        and optional(args, "format", lambda f: f in ("json", "tsv"))
    )


def _matches(query: str, texts: list[str]) -> bool:
    wanted = words(query)
    have = {w for t in texts for w in words(t)}
    return bool(wanted) and all(w in have for w in wanted)


def _hits(args: Any, hits: list[dict[str, Any]]) -> Reply:
    size = field(args, "size")
    limited = hits[: int(size) if truthy(size) else 25]
    return reply({"data": {"search": {"hits": limited, "total": len(hits)}}})


def search_targets(args: Any) -> Reply:
    if not _search_args(args):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid target search arguments")
    query = args["query"]
    hits = [
        {
            "id": t["id"],
            "name": t["approvedSymbol"],
            "description": t["approvedName"],
            "entity": "target",
        }
        for t in _db()["targets"]
        if _matches(query, [t["id"], t["approvedSymbol"], t["approvedName"]])
    ]
    return _hits(args, hits)


def search_diseases(args: Any) -> Reply:
    if not _search_args(args):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid disease search arguments")
    query = args["query"]
    hits = [
        {"id": d["id"], "name": d["name"], "description": d["description"], "entity": "disease"}
        for d in _db()["diseases"]
        if _matches(query, [d["id"], d["name"], *d["synonyms"]])
    ]
    return _hits(args, hits)


def _disease(efo_id: str) -> dict[str, Any] | None:
    return next((d for d in _db()["diseases"] if d["id"] == efo_id), None)


def _target(ensembl_id: str) -> dict[str, Any] | None:
    return next((t for t in _db()["targets"] if t["id"] == ensembl_id), None)


def _rows_for_disease(efo_id: str) -> list[dict[str, Any]]:
    rows = []
    for a in sorted(_db()["associations"], key=lambda a: -a["score"]):
        target = _target(a["targetId"]) if a["diseaseId"] == efo_id else None
        if target is not None:
            rows.append(
                {
                    "target": {k: target[k] for k in ("id", "approvedSymbol", "approvedName")},
                    "score": a["score"],
                }
            )
    return rows


def _rows_for_target(ensembl_id: str) -> list[dict[str, Any]]:
    rows = []
    for a in sorted(_db()["associations"], key=lambda a: -a["score"]):
        disease = _disease(a["diseaseId"]) if a["targetId"] == ensembl_id else None
        if disease is not None:
            rows.append(
                {"disease": {"id": disease["id"], "name": disease["name"]}, "score": a["score"]}
            )
    return rows


def _graphql_id(value: Any) -> str:
    """A GraphQL ``String!`` variable: anything else is refused with HTTP 400."""
    if not is_str(value):
        raise ApiHttpError(400)
    return str(value)


def get_target_disease_associations(args: Any) -> Reply:
    ok = (
        is_obj(args)
        and optional(args, "targetId", is_str)
        and optional(args, "diseaseId", is_str)
        and optional(args, "minScore", lambda s: is_num(s) and 0 <= s <= 1)
        and optional(args, "size", lambda s: is_num(s) and 0 < s <= 500)
        and ("targetId" in args or "diseaseId" in args)
    )
    if not ok:
        raise ThrownMcpError(INVALID_PARAMS, "Invalid association arguments")
    target_id, disease_id = args.get("targetId"), args.get("diseaseId")
    try:
        if truthy(target_id) and not truthy(disease_id):
            target = _target(_graphql_id(target_id))
            if target is None:
                return reply({"data": {"target": None}})
            body = {
                "id": target["id"],
                "approvedSymbol": target["approvedSymbol"],
                "associatedDiseases": {"rows": _rows_for_target(target["id"])},
            }
            return reply({"data": {"target": body}})
        if truthy(disease_id) and not truthy(target_id):
            disease = _disease(_graphql_id(disease_id))
            if disease is None:
                return reply({"data": {"disease": None}})
            body = {
                "id": disease["id"],
                "name": disease["name"],
                "associatedTargets": {"rows": _rows_for_disease(disease["id"])},
            }
            return reply({"data": {"disease": body}})
    except ApiHttpError as error:
        return Reply(f"Error getting associations: {error}", is_error=True)
    return reply(
        {
            "message": "Specific target-disease pair association lookup not yet implemented",
            "suggestion": "Use targetId OR diseaseId to get associations for that entity",
        }
    )


def get_disease_targets_summary(args: Any) -> Reply:
    if args is None:
        # ``args.diseaseId`` of undefined: a TypeError, thrown out of the handler
        raise JsError("Cannot read properties of undefined (reading 'diseaseId')")
    if not (nonempty_str(field(args, "id")) or truthy(field(args, "diseaseId"))):
        raise ThrownMcpError(INVALID_PARAMS, "Disease ID is required")
    disease_id = field(args, "diseaseId") if truthy(field(args, "diseaseId")) else field(args, "id")
    try:
        disease = _disease(_graphql_id(disease_id))
    except ApiHttpError as error:
        return Reply(f"Error getting disease targets summary: {error}", is_error=True)
    if disease is None:
        return reply(
            {
                "diseaseId": disease_id,
                "totalTargets": 0,
                "topTargets": [],
                "fullResults": {"data": {"disease": None}},
            }
        )
    rows = _rows_for_disease(disease["id"])
    full = {
        "data": {
            "disease": {
                "id": disease["id"],
                "name": disease["name"],
                "associatedTargets": {"count": len(rows), "rows": rows},
            }
        }
    }
    top = [
        {
            "targetId": r["target"]["id"],
            "targetSymbol": r["target"]["approvedSymbol"],
            "targetName": r["target"]["approvedName"],
            "associationScore": r["score"],
        }
        for r in rows[:10]
    ]
    return reply(
        {
            "diseaseId": disease_id,
            "diseaseName": disease["name"],
            "totalTargets": len(rows),
            "topTargets": top,
            "fullResults": full,
        }
    )


def get_target_details(args: Any) -> Reply:
    if not (is_obj(args) and nonempty_str(field(args, "id"))):
        raise ThrownMcpError(INVALID_PARAMS, "Target ID is required")
    target = _target(args["id"])
    return reply({"data": {"target": dict(target) if target else None}})


def get_disease_details(args: Any) -> Reply:
    if not (is_obj(args) and nonempty_str(field(args, "id"))):
        raise ThrownMcpError(INVALID_PARAMS, "Disease ID is required")
    disease = _disease(args["id"])
    body = {k: disease[k] for k in ("id", "name", "description")} if disease else None
    return reply({"data": {"disease": body}})


HANDLERS: dict[str, Handler] = {
    "search_targets": search_targets,
    "search_diseases": search_diseases,
    "get_target_disease_associations": get_target_disease_associations,
    "get_disease_targets_summary": get_disease_targets_summary,
    "get_target_details": get_target_details,
    "get_disease_details": get_disease_details,
}
