"""The servers in process (MCP client over memory): the three scenarios' chains, bad
arguments, the public servers' quirks kept on purpose, the records and the configs."""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest
from drugtarget_calls import Answer, Servers

from plansmith.domains.drugtarget import DOMAIN_DIR, SOURCES
from plansmith.domains.drugtarget._base import data, public
from plansmith.domains.drugtarget.server import SOURCES as SERVER_SOURCES
from plansmith.domains.drugtarget.server import create_server, main
from plansmith.servers import load_servers
from plansmith.servers._config import StdioServer

Calls = list[tuple[str, str, dict[str, Any] | None]]


def _run(calls: Calls) -> list[Answer]:
    async def go() -> list[Answer]:
        async with Servers(sorted({c[0] for c in calls}), stdio=False) as s:
            return [await s(*c) for c in calls]

    return anyio.run(go)


@pytest.mark.parametrize(
    ("query", "disease_id", "first_gene"),
    [
        ("breast cancer", "EFO_0000305", "ESR1"),
        ("Alzheimer's disease", "MONDO_0004975", "APP"),
        ("type 2 diabetes", "MONDO_0005148", "PPARG"),
    ],
)
def test_each_scenario_chain(query: str, disease_id: str, first_gene: str) -> None:
    async def go() -> dict[str, Answer]:
        async with Servers(list(SOURCES), stdio=False) as s:
            out = {"search": await s("opentargets", "search_diseases", {"query": query})}
            found = out["search"].data["data"]["search"]["hits"][0]["id"]
            out["summary"] = await s(
                "opentargets", "get_disease_targets_summary", {"diseaseId": found}
            )
            gene = out["summary"].data["topTargets"][0]["targetSymbol"]
            out["uniprot"] = await s("uniprot", "search_by_gene", {"gene": gene})
            acc = out["uniprot"].data["results"][0]["primaryAccession"]
            out["info"] = await s(
                "uniprot", "get_protein_info", {"accession": acc, "format": "json"}
            )
            out["reactome"] = await s("reactome", "find_pathways_by_gene", {"gene": gene})
            out["pdb"] = await s("pdb", "search_by_uniprot", {"uniprot_id": acc})
            out["alphafold"] = await s(
                "alphafold", "get_structure", {"uniprotId": acc, "format": "json"}
            )
            out["chembl"] = await s("chembl", "search_by_uniprot", {"uniprot_id": acc})
            out["kegg"] = await s("kegg", "search_genes", {"query": gene, "organism_code": "hsa"})
            out["pubmed"] = await s("pubmed", "search_articles", {"query": f"{query} {gene}"})
            return out

    out = anyio.run(go)
    assert not any(a.is_error or a.code for a in out.values())
    assert out["search"].data["data"]["search"]["hits"][0]["id"] == disease_id
    assert out["summary"].data["topTargets"][0]["targetSymbol"] == first_gene
    for key in ("reactome", "pdb", "chembl", "pubmed"):
        assert out[key].text not in ("", '""'), key
    assert out["reactome"].data["pathways"]
    assert out["pdb"].data["result_set"]
    assert out["chembl"].data["targets"]
    assert out["kegg"].data["genes"]
    assert out["pubmed"].data["pmids"]
    assert re.fullmatch(r"AF-[A-Z0-9]+-F1", out["alphafold"].data["entryId"])


def test_the_public_servers_quirks_are_kept() -> None:
    info, seq, genes, pathway, related, fasta = _run(
        [
            ("uniprot", "get_protein_info", {"accession": "P03372"}),
            ("uniprot", "get_protein_sequence", {"accession": "P03372"}),
            ("kegg", "get_pathway_genes", {"pathway_id": "hsa05224"}),
            ("kegg", "get_pathway_info", {"pathway_id": "hsa05010"}),
            (
                "kegg",
                "convert_identifiers",
                {"source_db": "uniprot", "target_db": "hsa", "identifiers": ["up:P03372"]},
            ),
            ("alphafold", "get_structure", {"uniprotId": "P03372"}),
        ]
    )
    assert info.text == "[object Object]"  # String(object): pass format "json"
    assert seq.text.startswith(">sp|P03372|ESR1_HUMAN")
    assert "X" * 60 in seq.text
    assert genes.data["gene_count"] == 1  # parseKEGGList keeps one value per key
    assert pathway.data["gene"] == {"351": "APP; Amyloid-beta precursor protein"}  # first GENE line
    assert pathway.data["pathway"] == {}  # PATHWAY_MAP starts with PATHWAY
    assert related.data["conversions"] == {"up:P03372": "hsa:2099"}
    assert fasta.text.startswith("HEADER")
    assert "AF-P03372-F1" in fasta.text


@pytest.mark.parametrize(
    ("gene", "kegg_gene", "pathway", "name"),
    [
        ("ESR1", "hsa:2099", "hsa05224", "Breast cancer - Homo sapiens (human)"),
        ("APP", "hsa:351", "hsa05010", "Alzheimer disease - Homo sapiens (human)"),
        ("PPARG", "hsa:5468", "hsa03320", "PPAR signaling pathway - Homo sapiens (human)"),
    ],
)
def test_the_kegg_route_gene_to_kegg_id_to_pathway_to_its_record(
    gene: str, kegg_gene: str, pathway: str, name: str
) -> None:
    """The route plansmith's KEGG action and method take (docs/drug-target.md)."""
    (protein,) = _run([("uniprot", "search_by_gene", {"gene": gene, "organism": "human"})])
    refs = protein.data["results"][0]["uniProtKBCrossReferences"]
    assert [r["id"] for r in refs if r["database"] == "KEGG"] == [kegg_gene]
    related, info = _run(
        [
            (
                "kegg",
                "find_related_entries",
                {"source_db": "hsa", "target_db": "pathway", "source_entries": [kegg_gene]},
            ),
            ("kegg", "get_pathway_info", {"pathway_id": f"path:{pathway}"}),
        ]
    )
    # KEGG lists a gene's pathways by id; parseKEGGList keeps one link per entry: the last
    assert related.data == {
        "source_db": "hsa",
        "target_db": "pathway",
        "link_count": 1,
        "links": {kegg_gene: f"path:{pathway}"},
    }
    assert info.data["entry"] == pathway
    assert info.data["name"] == name


def test_tools_without_data_answer_empty_and_check_their_schema() -> None:
    ok, bad, wrapped = _run(
        [
            ("uniprot", "get_protein_features", {"accession": "P03372"}),
            ("uniprot", "get_protein_features", {}),
            ("chembl", "predict_solubility", {"chembl_id": 5}),
        ]
    )
    assert ok.data["results"] == []
    assert bad == Answer("MCP error -32602: Invalid arguments", code=-32602)
    assert wrapped == Answer(
        "Error executing tool predict_solubility: MCP error -32602: Invalid arguments",
        is_error=True,
    )


def test_wrong_types_are_invalid_params_like_the_type_guards() -> None:
    answers = _run(
        [
            ("opentargets", "search_diseases", {"query": "breast", "size": 0}),
            ("opentargets", "search_diseases", {"query": "breast", "size": True}),
            ("uniprot", "search_by_gene", {"gene": 5}),
            ("pdb", "get_structure_info", {"pdb_id": "ABCD"}),
            ("reactome", "search_pathways", {"query": "ERBB2", "type": "gene"}),
            ("alphafold", "get_structure", {"uniprotId": "P03372", "format": "mmcif"}),
            ("opentargets", "search_diseases", None),
        ]
    )
    assert all(a.code == -32602 for a in answers), answers


def test_records_name_the_public_servers() -> None:
    assert SERVER_SOURCES == SOURCES
    for source in SOURCES:
        record = public(source)
        assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", record["repository"])
        assert re.fullmatch(r"[0-9a-f]{40}", record["commit"])
        assert record["licence"] == "MIT"
        names = [t["name"] for t in record["tools"]]
        assert len(names) == len(set(names)) > 0
        for tool in record["tools"]:
            assert set(tool) == {"name", "description", "inputSchema"}
            assert tool["inputSchema"]["type"] == "object"
        assert data(source)["_about"]["demonstration"] is True


def test_server_configs_load() -> None:
    local = load_servers(DOMAIN_DIR / "servers.json")
    assert local.names == SOURCES
    for entry in local.servers:
        assert isinstance(entry, StdioServer)
        # the console script, or this package's module run by python: the source last
        assert entry.command in ("plansmith-drugtarget", "python"), entry
        assert entry.args[-1] == entry.name
    public_config = load_servers(
        DOMAIN_DIR / "servers-public.json", env={"AUGMENTED_NATURE_DIR": "/opt/an"}
    )
    assert public_config.names == SOURCES
    for entry in public_config.servers:
        assert isinstance(entry, StdioServer)
        assert entry.command == "node"
        assert entry.args[0].startswith("/opt/an/")
        assert entry.args[0].endswith("/build/index.js")


def test_unknown_source_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown source"):
        create_server("nosuch")
    with pytest.raises(SystemExit):
        main(["nosuch"])


def test_answers_are_json_stringify_text() -> None:
    (answer,) = _run([("opentargets", "get_disease_details", {"id": "EFO_0000305"})])
    assert answer.text == json.dumps(answer.data, indent=2, ensure_ascii=False)
    assert answer.data["data"]["disease"]["name"] == "breast carcinoma"
