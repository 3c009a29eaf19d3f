"""The eight servers as real processes over stdio, started as servers.json says:
their tools equal the recorded public ones, scenario 1's chain answers consistently, and
unknown ids answer like the public servers without ending the server.

One session (eight processes) serves the module: the ``stdio`` fixture makes every call
and the tests read its record.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from drugtarget_calls import Answer, Servers

from plansmith.domains.drugtarget import SOURCES
from plansmith.domains.drugtarget._base import public

Call = tuple[str, str, dict[str, Any] | None]

#: unknown or malformed ids, each with a label
UNKNOWN: dict[str, Call] = {
    "ot.search": ("opentargets", "search_diseases", {"query": "no such disease xyzzy"}),
    "ot.summary": ("opentargets", "get_disease_targets_summary", {"diseaseId": "EFO_9999999"}),
    "ot.summary-none": ("opentargets", "get_disease_targets_summary", {}),
    "up.gene": ("uniprot", "search_by_gene", {"gene": "NOSUCHGENE"}),
    "up.info": ("uniprot", "get_protein_info", {"accession": "Q99999", "format": "json"}),
    "up.info-bad": ("uniprot", "get_protein_info", {"accession": "not an accession"}),
    "re.gene": ("reactome", "find_pathways_by_gene", {"gene": "NOSUCHGENE"}),
    "re.details": ("reactome", "get_pathway_details", {"id": "no such pathway"}),
    "kegg.info": ("kegg", "get_pathway_info", {"pathway_id": "hsa99999"}),
    "pdb.uniprot": ("pdb", "search_by_uniprot", {"uniprot_id": "Q99999"}),
    "pdb.info": ("pdb", "get_structure_info", {"pdb_id": "9ZZZ"}),
    "af.structure": ("alphafold", "get_structure", {"uniprotId": "Q99999"}),
    "af.available": ("alphafold", "check_availability", {"uniprotId": "Q99999"}),
    "chembl.uniprot": ("chembl", "search_by_uniprot", {"uniprot_id": "Q99999"}),
    "chembl.compound": ("chembl", "get_compound_info", {"chembl_id": "CHEMBL0"}),
    "pm.search": ("pubmed", "search_articles", {"query": "xyzzy plugh"}),
    "pm.details": ("pubmed", "get_article_details", {"pmid": "1"}),
    "pm.details-bad": ("pubmed", "get_article_details", {"pmid": "abc"}),
    **{f"{source}.unknown-tool": (source, "no_such_tool", {}) for source in SOURCES},
    "ot.after": ("opentargets", "search_diseases", {"query": "type 2 diabetes"}),
}


async def _tools(s: Servers) -> dict[str, list[dict[str, Any]]]:
    listed: dict[str, list[dict[str, Any]]] = {}
    for source in SOURCES:
        result = await s.clients[source].list_tools()
        listed[source] = [
            {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
            for t in result.tools
        ]
    return listed


async def _chain(s: Servers) -> dict[str, Answer]:
    """Scenario 1 (breast cancer), each step fed by the answer before it."""
    out: dict[str, Answer] = {}
    out["diseases"] = await s("opentargets", "search_diseases", {"query": "breast cancer"})
    disease_id = out["diseases"].data["data"]["search"]["hits"][0]["id"]
    out["targets"] = await s(
        "opentargets", "get_disease_targets_summary", {"diseaseId": disease_id}
    )
    gene = out["targets"].data["topTargets"][0]["targetSymbol"]
    out["gene"] = await s("uniprot", "search_by_gene", {"gene": gene, "organism": "Homo sapiens"})
    accession = out["gene"].data["results"][0]["primaryAccession"]
    out["protein"] = await s(
        "uniprot", "get_protein_info", {"accession": accession, "format": "json"}
    )
    out["pdb"] = await s("pdb", "search_by_uniprot", {"uniprot_id": accession})
    out["alphafold"] = await s(
        "alphafold", "get_structure", {"uniprotId": accession, "format": "json"}
    )
    out["chembl"] = await s("chembl", "search_by_uniprot", {"uniprot_id": accession})
    target = out["chembl"].data["targets"][0]["target_chembl_id"]
    out["compounds"] = await s("chembl", "get_target_compounds", {"target_chembl_id": target})
    out["reactome"] = await s("reactome", "find_pathways_by_gene", {"gene": gene})
    out["kegg"] = await s("kegg", "get_pathway_info", {"pathway_id": "hsa05224"})
    out["pubmed"] = await s("pubmed", "search_articles", {"query": f"breast cancer {gene}"})
    return out


@pytest.fixture(scope="module")
def stdio() -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with Servers(list(SOURCES), stdio=True) as s:
            tools = await _tools(s)
            chain = await _chain(s)
            unknown = {label: await s(*call) for label, call in UNKNOWN.items()}
        return {"tools": tools, "chain": chain, "unknown": unknown}

    result: dict[str, Any] = anyio.run(go)
    return result


def _canonical(value: Any) -> str:
    """Key order normalised, nothing else."""
    return json.dumps(value, sort_keys=True)


def test_every_server_lists_exactly_the_public_tools(stdio: dict[str, Any]) -> None:
    listed: dict[str, list[dict[str, Any]]] = stdio["tools"]
    for source in SOURCES:
        recorded = public(source)["tools"]
        assert [t["name"] for t in listed[source]] == [t["name"] for t in recorded], source
        for got, want in zip(listed[source], recorded, strict=True):
            assert _canonical(got["inputSchema"]) == _canonical(want["inputSchema"]), got["name"]
            assert got["description"] == want["description"], got["name"]


def test_scenario_1_chain_answers_consistently(stdio: dict[str, Any]) -> None:
    """search_diseases -> disease id -> targets -> first gene -> UniProt accession ->
    PDB, AlphaFold and ChEMBL by accession: every step non-empty and about the same thing."""
    out: dict[str, Answer] = stdio["chain"]
    assert not any(a.is_error or a.code for a in out.values()), out
    assert out["diseases"].data["data"]["search"]["hits"][0]["id"] == "EFO_0000305"
    top = out["targets"].data["topTargets"]
    assert top
    assert out["targets"].data["diseaseName"] == "breast carcinoma"
    gene = top[0]["targetSymbol"]
    entry = out["gene"].data["results"][0]
    assert entry["genes"][0]["geneName"]["value"] == gene
    accession = entry["primaryAccession"]
    assert out["protein"].data["primaryAccession"] == accession
    assert out["pdb"].data["total_count"] >= 1
    assert out["pdb"].data["result_set"]
    assert out["alphafold"].data["entryId"] == f"AF-{accession}-F1"
    chembl = out["chembl"].data["targets"]
    assert chembl
    assert chembl[0]["target_components"][0]["accession"] == accession
    assert out["compounds"].data["compound_ids"]
    assert out["reactome"].data["pathways"]
    assert out["kegg"].data["entry"] == "hsa05224"
    assert out["pubmed"].data["pmids"]


def _http(text: str) -> Answer:
    return Answer(text, is_error=True)


def test_unknown_ids_answer_like_the_public_servers(stdio: dict[str, Any]) -> None:
    got: dict[str, Answer] = stdio["unknown"]
    assert got["ot.search"].data == {"data": {"search": {"hits": [], "total": 0}}}
    summary = got["ot.summary"].data
    assert summary["topTargets"] == []
    assert summary["totalTargets"] == 0
    assert summary["fullResults"] == {"data": {"disease": None}}
    assert got["ot.summary-none"] == Answer("MCP error -32602: Disease ID is required", code=-32602)
    assert got["up.gene"].data == {"results": []}
    assert got["up.info"] == _http(
        "Error fetching protein info: Request failed with status code 404"
    )
    assert got["up.info-bad"] == _http(
        "Error fetching protein info: Request failed with status code 400"
    )
    assert got["re.gene"] == _http(
        "Error finding pathways by gene: Request failed with status code 404"
    )
    details = got["re.details"]
    assert details.is_error
    assert details.data["error"] == "No pathway found for identifier: no such pathway"
    assert got["kegg.info"] == _http(
        "Error executing tool get_pathway_info: MCP error -32603: Failed to get pathway info: "
        "Request failed with status code 404"
    )
    assert got["pdb.uniprot"].data == ""  # RCSB answers 204 No Content
    assert got["pdb.info"] == _http(
        "Error fetching structure info: Request failed with status code 404"
    )
    assert got["af.structure"] == _http(
        "Error fetching AlphaFold structure: Request failed with status code 404"
    )
    assert got["af.available"].data == {
        "uniprotId": "Q99999",
        "available": False,
        "error": "Request failed with status code 404",
    }
    assert got["chembl.uniprot"].data["targets"] == []
    assert got["chembl.uniprot"].data["page_meta"]["total_count"] == 0
    assert got["chembl.compound"] == _http(
        "Error executing tool get_compound_info: MCP error -32603: Failed to get compound info: "
        "Request failed with status code 404"
    )
    assert got["pm.search"].data["pmids"] == []
    assert got["pm.search"].data["totalResults"] == 0
    failed = "MCP error -32603: Tool execution failed:"
    assert got["pm.details"] == Answer(f"{failed} Article not found for PMID: 1", code=-32603)
    assert got["pm.details-bad"] == Answer(f"{failed} Invalid PMID format: abc", code=-32603)


def test_unknown_tools_are_refused_and_every_server_goes_on(stdio: dict[str, Any]) -> None:
    got: dict[str, Answer] = stdio["unknown"]
    for source in SOURCES:
        answer = got[f"{source}.unknown-tool"]
        assert "Unknown tool: no_such_tool" in answer.text, source
        # as the public servers: a JSON-RPC error, or an isError text where the server
        # catches everything (KEGG, ChEMBL: -32601 inside the text; PubMed: -32603)
        assert answer.code in (-32601, -32603) or answer.is_error, source
    assert got["ot.after"].data["data"]["search"]["hits"][0]["id"] == "MONDO_0005148"
