"""pdb-server (Augmented Nature): RCSB PDB Search and Data API answers.

Every tool of the public server is here. ``search_by_uniprot`` and ``search_structures``
answer the RCSB search response ``{"query_id", "result_type": "entry", "total_count",
"result_set": [{"identifier": "3ERT", "score"}]}``; when nothing matches RCSB answers
HTTP 204 with no body, and the public server's text is then ``""`` (a JSON empty string),
so is this one's. ``get_structure_info`` answers the ``/core/entry`` record (unknown id:
HTTP 404, an isError text). Coordinate files are not shipped: ``download_structure`` and
the file formats of ``get_structure_info`` answer HTTP 404.
"""

from __future__ import annotations

import math
import re
import uuid
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
    "search_structures",
    "get_structure_info",
    "download_structure",
    "search_by_uniprot",
    "get_structure_quality",
]

STYLE: Style = "throw"

_PDB_ID = re.compile(r"^[0-9][a-zA-Z0-9]{3}\Z")


def _entries() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = data("pdb")["entries"]
    return found


def _public(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if not k.startswith("_")}


def _entry(pdb_id: str) -> dict[str, Any]:
    found = next((e for e in _entries() if e["rcsb_id"].lower() == pdb_id.lower()), None)
    if found is None:
        raise ApiHttpError(404)
    return found


def _search_response(query: Any, found: list[dict[str, Any]], rows: Any) -> Reply:
    if not found:
        return Reply(js_json(""))  # HTTP 204: no content
    limit = int(rows) if truthy(rows) and is_num(rows) else 25
    body = {
        "query_id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"plansmith-drugtarget:{js_json(query)}")),
        "result_type": "entry",
        "total_count": len(found),
        "result_set": [{"identifier": e["rcsb_id"], "score": 1.0} for e in found[:limit]],
    }
    return reply(body)


def _pdb_args(args: Any, formats: tuple[str, ...]) -> bool:
    pdb_id = field(args, "pdb_id")
    return (
        is_obj(args)
        and is_str(pdb_id)
        and len(pdb_id) == 4
        and bool(_PDB_ID.match(pdb_id))
        and optional(args, "format", lambda f: f in formats)
    )


def search_structures(args: Any) -> Reply:
    ok = (
        is_obj(args)
        and nonempty_str(field(args, "query"))
        and optional(args, "limit", lambda n: is_num(n) and 0 < n <= 1000)
        and optional(args, "sort_by", is_str)
        and optional(args, "experimental_method", is_str)
        and optional(args, "resolution_range", is_str)
    )
    if not ok:
        raise ThrownMcpError(INVALID_PARAMS, "Invalid search arguments")
    wanted = words(args["query"])
    found = []
    for e in _entries():
        have = {
            w
            for t in (e["rcsb_id"], e["struct"]["title"], *e["_uniprot_accessions"])
            for w in words(t)
        }
        if not (wanted and all(w in have for w in wanted)):
            continue
        method = field(args, "experimental_method")
        if truthy(method) and e["exptl"][0]["method"] != method:
            continue
        if truthy(field(args, "resolution_range")):
            bounds = str(args["resolution_range"]).split("-")
            low, high = _number(bounds[0]), _number(bounds[1] if len(bounds) > 1 else "")
            resolution = (e["rcsb_entry_info"].get("resolution_combined") or [None])[0]
            if low and high and (resolution is None or not low <= resolution <= high):
                continue
        found.append(e)
    return _search_response(args, found, field(args, "limit"))


def _number(text: str) -> float:
    """``Number(text)`` (NaN as 0.0: both are false in the public server's test)."""
    try:
        value = float(text) if text.strip() else 0.0
    except ValueError:
        return 0.0
    return 0.0 if math.isnan(value) else value


def get_structure_info(args: Any) -> Reply:
    if not _pdb_args(args, ("json", "pdb", "mmcif", "xml")):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid PDB ID arguments")
    try:
        entry = _entry(args["pdb_id"])
        if (field(args, "format") or "json") != "json":
            raise ApiHttpError(404)  # files.rcsb.org: no coordinate files in the data set
    except ApiHttpError as error:
        return Reply(f"Error fetching structure info: {error}", is_error=True)
    return reply(_public(entry))


def download_structure(args: Any) -> Reply:
    ok = _pdb_args(args, ("pdb", "mmcif", "mmtf", "xml")) and optional(args, "assembly_id", is_str)
    if not ok:
        raise ThrownMcpError(INVALID_PARAMS, "Invalid download structure arguments")
    return Reply(f"Error downloading structure: {ApiHttpError(404)}", is_error=True)


def search_by_uniprot(args: Any) -> Reply:
    if not truthy(args) or not is_str(field(args, "uniprot_id")):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid UniProt search arguments")
    accession = args["uniprot_id"]
    found = [e for e in _entries() if accession in e["_uniprot_accessions"]]
    return _search_response(args, found, field(args, "limit"))


def get_structure_quality(args: Any) -> Reply:
    if not _pdb_args(args, ("json", "pdb", "mmcif", "xml")):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid structure quality arguments")
    try:
        _entry(args["pdb_id"])
    except ApiHttpError as error:
        return Reply(f"Error fetching structure quality: {error}", is_error=True)
    # The public server reads entry fields that /core/entry lacks (undefined, so left out)
    # and draws the indicators with Math.random(); these are fixed demonstration values.
    body = {
        "pdb_id": args["pdb_id"].lower(),
        "overall_quality": "GOOD",
        "validation_available": True,
        "quality_indicators": {
            "clash_score": 5.0,
            "ramachandran_favored": 97.5,
            "ramachandran_outliers": 1.0,
            "rotamer_outliers": 1.5,
            "c_beta_deviations": 2.5,
        },
    }
    return reply(body)


HANDLERS: dict[str, Handler] = {
    "search_structures": search_structures,
    "get_structure_info": get_structure_info,
    "download_structure": download_structure,
    "search_by_uniprot": search_by_uniprot,
    "get_structure_quality": get_structure_quality,
}
