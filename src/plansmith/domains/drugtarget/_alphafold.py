"""alphafold-server (Augmented Nature): AlphaFold DB ``/prediction/{accession}`` answers.

``get_structure`` with ``format: "json"`` answers the prediction record (``entryId``
``AF-<accession>-F1``, ``pdbUrl``, ``globalMetricValue``: the mean pLDDT, ...). Without a
format the public server downloads the model's PDB file and answers its text; coordinates
are not shipped, so this one answers a PDB text with only a HEADER, REMARK and END. An
unknown accession is HTTP 404: an isError text ``Error fetching AlphaFold structure: ...``.
``check_availability`` answers ``{"uniprotId", "available", ...}`` (``available: false``
with ``error`` for an unknown accession, not an isError).
"""

from __future__ import annotations

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
    is_obj,
    nonempty_str,
    optional,
    reply,
)

__all__ = [
    "STYLE",
    "HANDLERS",
    "get_structure",
    "download_structure",
    "check_availability",
    "get_prediction_metadata",
]

STYLE: Style = "throw"


def _prediction(accession: str) -> dict[str, Any]:
    predictions: list[dict[str, Any]] = data("alphafold")["predictions"]
    found = next((p for p in predictions if p["uniprotAccession"] == accession), None)
    if found is None:
        raise ApiHttpError(404)
    return found


def _uniprot_args(args: Any) -> bool:
    return (
        is_obj(args)
        and nonempty_str(field(args, "uniprotId"))
        and optional(args, "format", lambda f: f in ("pdb", "cif", "bcif", "json"))
    )


def _model_file(p: dict[str, Any], format_: str) -> str:
    """The model file's text, as far as the data set has it (no coordinates)."""
    note = "plansmith demonstration data set: coordinates are not shipped"
    if format_ == "cif":
        return f"data_{p['entryId']}\n# {note}\n# source {p['cifUrl']}\n"
    if format_ == "bcif":
        return f"{p['entryId']}: {note} (binary CIF: {p['bcifUrl']})\n"
    header = f"HEADER    {'PREDICTED MODEL':<40}{'':9}{p['entryId']:<4}"
    return f"{header}\nREMARK   1 {note}\nREMARK   1 SOURCE {p['pdbUrl']}\nEND\n"


def get_structure(args: Any) -> Reply:
    if not _uniprot_args(args):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid UniProt arguments")
    try:
        p = _prediction(args["uniprotId"])
    except ApiHttpError as error:
        return Reply(f"Error fetching AlphaFold structure: {error}", is_error=True)
    format_ = field(args, "format")
    if format_ == "json":
        return reply(p)
    return Reply(_model_file(p, format_ or "pdb"))


def download_structure(args: Any) -> Reply:
    if not _uniprot_args(args):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid download structure arguments")
    try:
        p = _prediction(args["uniprotId"])
    except ApiHttpError as error:
        return Reply(f"Error downloading structure: {error}", is_error=True)
    format_ = field(args, "format") or "pdb"
    text = _model_file(p, format_ if format_ != "json" else "pdb")
    return Reply(f"Structure file for {args['uniprotId']} ({format_.upper()} format):\n\n{text}")


def check_availability(args: Any) -> Reply:
    if not _uniprot_args(args):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid availability check arguments")
    accession = args["uniprotId"]
    try:
        p = _prediction(accession)
    except ApiHttpError as error:
        return reply({"uniprotId": accession, "available": False, "error": str(error)})
    body = {
        "uniprotId": accession,
        "available": True,
        "structureCount": 1,
        "latestVersion": p["latestVersion"],
        "modelCreatedDate": p["modelCreatedDate"],
    }
    return reply(body)


def get_prediction_metadata(args: Any) -> Reply:
    if not _uniprot_args(args):
        raise ThrownMcpError(INVALID_PARAMS, "Invalid prediction metadata arguments")
    try:
        p = _prediction(args["uniprotId"])
    except ApiHttpError as error:
        return Reply(f"Error fetching prediction metadata: {error}", is_error=True)
    length = p["uniprotEnd"] - p["uniprotStart"] + 1  # the sequence itself is not shipped
    body = {
        "entryId": p["entryId"],
        "uniprotAccession": p["uniprotAccession"],
        "modelCreatedDate": p["modelCreatedDate"],
        "latestVersion": p["latestVersion"],
        "allVersions": p["allVersions"],
        "organism": p["organismScientificName"],
        "sequenceLength": length,
        "coverage": {"start": p["uniprotStart"], "end": p["uniprotEnd"], "percentage": 100},
        "urls": {
            "pdb": p["pdbUrl"],
            "cif": p["cifUrl"],
            "bcif": p["bcifUrl"],
            "paeImage": p["paeImageUrl"],
            "paeDoc": p["paeDocUrl"],
        },
    }
    return reply(body)


HANDLERS: dict[str, Handler] = {
    "get_structure": get_structure,
    "download_structure": download_structure,
    "check_availability": check_availability,
    "get_prediction_metadata": get_prediction_metadata,
}
