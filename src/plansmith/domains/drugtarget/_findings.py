"""The findings of a drug target run, each value traced to the step, server and tool
that gave it, made from the run's report (``plansmith.engine.build_report``).

What the run could not find is said, not left out: a disease no source knows, a
disease with no targets, a step that failed (its server died and did not come back),
an output the answer lacked. ``report.md`` and ``report.json`` are written into the
run's directory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Sourced", "Findings", "findings_of", "findings_markdown", "write_findings"]


@dataclass(frozen=True, slots=True)
class Sourced:
    """A value and where it came from: the step (``s3.uniprot_accession``), the server
    and the tool."""

    value: Any
    step: str
    server: str
    tool: str

    def cite(self) -> str:
        return f"[{self.step} {self.server}:{self.tool}]"


@dataclass(slots=True)
class Findings:
    """What a run found, by section; ``missing`` says what it did not, and why."""

    scenario: str
    run_id: str
    state: str
    disease: Sourced | None = None
    targets: list[Sourced] = field(default_factory=list)
    protein: Sourced | None = None
    pathways: list[Sourced] = field(default_factory=list)
    kegg_gene: Sourced | None = None
    kegg_links: list[Sourced] = field(default_factory=list)
    kegg_pathways: list[Sourced] = field(default_factory=list)
    pdb: list[Sourced] = field(default_factory=list)
    alphafold: Sourced | None = None
    chembl_targets: list[Sourced] = field(default_factory=list)
    compounds: list[Sourced] = field(default_factory=list)
    articles: list[Sourced] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    calls: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: the steps skipped (a value they read was absent): their tools were not called
    skipped: list[str] = field(default_factory=list)

    def called(self) -> list[str]:
        """The servers whose tools the run called, sorted."""
        return sorted({srv for step, (srv, _) in self.calls.items() if step not in self.skipped})

    @property
    def no_targets(self) -> bool:
        return not self.targets


def _outputs(step: Mapping[str, Any]) -> dict[str, Any]:
    return {str(o["from"]).split(".", 1)[1]: o["value"] for o in step.get("outputs", [])}


def _cited(step: Mapping[str, Any], name: str, value: Any) -> Sourced:
    return Sourced(value, f"{step['step']}.{name}", str(step["server"]), str(step["tool"]))


def _listed(step: Mapping[str, Any], name: str, keep: Any) -> list[Sourced]:
    values = _outputs(step).get(name)
    items = values if isinstance(values, list) else []
    return [_cited(step, name, keep(v)) for v in items]


def _target(row: Any) -> dict[str, Any]:
    row = row if isinstance(row, dict) else {}
    keys = ("targetSymbol", "targetName", "targetId", "associationScore")
    return {k: row.get(k) for k in keys}


def _pathway(row: Any) -> dict[str, Any]:
    row = row if isinstance(row, dict) else {}
    name = row.get("name")
    return {"id": row.get("id"), "name": name[0] if isinstance(name, list) and name else name}


def _chembl(row: Any) -> dict[str, Any]:
    row = row if isinstance(row, dict) else {}
    return {"target_chembl_id": row.get("target_chembl_id"), "pref_name": row.get("pref_name")}


def _compound(row: Any) -> dict[str, Any]:
    row = row if isinstance(row, dict) else {}
    keys = (
        "molecule_chembl_id",
        "molecule_pref_name",
        "standard_type",
        "standard_relation",
        "standard_value",
        "standard_units",
        "target_chembl_id",
    )
    return {k: row.get(k) for k in keys}


def _article(row: Any) -> dict[str, Any]:
    row = row if isinstance(row, dict) else {}
    keys = ("pmid", "title", "journal", "publicationDate")
    return {k: row.get(k) for k in keys}


# what each action's step gives, and what its absence means to a reader
_EMPTY = {
    "a_search_disease": "no disease found for the query",
    "a_get_disease_targets": "no targets found",
    "a_get_protein_by_gene": "no UniProt entry for the first target's gene",
    "a_find_pathways_by_gene": "no Reactome pathway for the gene",
    "a_find_kegg_pathways_by_gene": "no KEGG pathway linked to the gene",
    "a_get_kegg_pathway": "no KEGG pathway record",
    "a_get_target_compounds": "no compound tested against the ChEMBL target",
    "a_get_pdb_structures": "no PDB structure for the protein",
    "a_get_alphafold_structure": "no AlphaFold model for the protein",
    "a_get_compounds_for_target": "no ChEMBL target for the protein",
    "a_search_literature": "no PubMed article for the query",
}


def findings_of(report: Mapping[str, Any], scenario: str) -> Findings:
    """The findings of a run's report (``build_report``)."""
    found = Findings(scenario, str(report["run_id"]), str(report["state"]))
    ran: dict[str, Mapping[str, Any]] = {}
    for step in report["steps"]:
        found.calls[str(step["step"])] = (str(step["server"]), str(step["tool"]))
        ran.setdefault(str(step["action"]), step)
        if step["outcome"] != "succeeded":
            error = step.get("error") or {}
            said = error.get("message") if isinstance(error, dict) else error
            said = said or step.get("skipped")  # a skipped step: the value it lacked
            if step["outcome"] == "skipped":
                found.skipped.append(str(step["step"]))
            found.missing.append(
                f"{step['step']} {step['action']} ({step['server']}:{step['tool']})"
                f" {step['outcome']}: {said or 'no result'}"
            )
    _read(found, ran)
    protein_step = ran.get("a_get_protein_by_gene")
    if found.protein is not None and found.kegg_gene is None and protein_step is not None:
        found.missing.append(
            "no KEGG cross-reference in the UniProt entry"
            f" ({protein_step['step']} {protein_step['server']}:{protein_step['tool']})"
        )
    for action, absent in _EMPTY.items():
        step = ran.get(action)
        if step is None:
            found.missing.append(f"{absent}: {action} did not run")
        elif step["outcome"] == "succeeded" and not _gave(found, action):
            found.missing.append(f"{absent} ({step['step']} {step['server']}:{step['tool']})")
    return found


def _read(found: Findings, ran: Mapping[str, Mapping[str, Any]]) -> None:
    if (step := ran.get("a_search_disease")) is not None:
        out = _outputs(step)
        if out.get("disease_id"):
            disease = {"id": out["disease_id"], "name": out.get("disease_name")}
            found.disease = _cited(step, "disease_id", disease)
    if (step := ran.get("a_get_disease_targets")) is not None:
        found.targets = _listed(step, "targets", _target)
    if (step := ran.get("a_get_protein_by_gene")) is not None:
        out = _outputs(step)
        if out.get("uniprot_accession"):
            protein = {"accession": out["uniprot_accession"], "name": out.get("protein_name")}
            found.protein = _cited(step, "uniprot_accession", protein)
        genes = out.get("kegg_genes")
        if isinstance(genes, list) and genes:
            found.kegg_gene = _cited(step, "kegg_genes", genes[0])
    if (step := ran.get("a_find_pathways_by_gene")) is not None:
        found.pathways = _listed(step, "pathways", _pathway)
    if (step := ran.get("a_find_kegg_pathways_by_gene")) is not None:
        found.kegg_links = _listed(step, "kegg_pathway_ids", str)
    if (step := ran.get("a_get_kegg_pathway")) is not None:
        out = _outputs(step)
        if out.get("kegg_pathway"):
            record = {"id": out.get("kegg_pathway_entry"), "name": out["kegg_pathway"]}
            found.kegg_pathways = [_cited(step, "kegg_pathway", record)]
    if (step := ran.get("a_get_pdb_structures")) is not None:
        found.pdb = _listed(step, "pdb_ids", str)
    if (step := ran.get("a_get_alphafold_structure")) is not None:
        out = _outputs(step)
        if out.get("alphafold_id"):
            model = {k: out.get(f"alphafold_{k}") for k in ("id", "plddt", "url")}
            found.alphafold = _cited(step, "alphafold_id", model)
    if (step := ran.get("a_get_compounds_for_target")) is not None:
        found.chembl_targets = _listed(step, "chembl_targets", _chembl)
    if (step := ran.get("a_get_target_compounds")) is not None:
        found.compounds = _listed(step, "compound_activities", _compound)
    if (step := ran.get("a_search_literature")) is not None:
        found.articles = _listed(step, "articles", _article)


def _gave(found: Findings, action: str) -> bool:
    return bool(
        {
            "a_search_disease": found.disease,
            "a_get_disease_targets": found.targets,
            "a_get_protein_by_gene": found.protein,
            "a_find_pathways_by_gene": found.pathways,
            "a_find_kegg_pathways_by_gene": found.kegg_links,
            "a_get_kegg_pathway": found.kegg_pathways,
            "a_get_pdb_structures": found.pdb,
            "a_get_alphafold_structure": found.alphafold,
            "a_get_compounds_for_target": found.chembl_targets,
            "a_get_target_compounds": found.compounds,
            "a_search_literature": found.articles,
        }[action]
    )


def _lines(title: str, items: Sequence[Sourced], show: Any) -> list[str]:
    out = [f"## {title}", ""]
    out += [f"- {show(i.value)} {i.cite()}" for i in items] or ["- none found"]
    return [*out, ""]


def _kegg_lines(found: Findings) -> list[str]:
    """The KEGG section: the gene's KEGG id (UniProt's cross-reference), the pathway
    KEGG links it to, and that pathway's record."""
    out = ["## KEGG pathways", ""]
    g = found.kegg_gene
    out += [f"- KEGG gene {g.value} {g.cite()}" if g else "- KEGG gene: none found"]
    out += [f"- linked pathway {w.value} {w.cite()}" for w in found.kegg_links]
    out += [f"- {w.value['id']}: {w.value['name']} {w.cite()}" for w in found.kegg_pathways]
    if not found.kegg_pathways:
        out += ["- KEGG pathway record: none found"]
    return [*out, ""]


def findings_markdown(found: Findings) -> str:
    """The report a person reads: every value with its step, server and tool."""
    out = [f"# Drug target discovery: {found.scenario}", ""]
    out += [f"Run {found.run_id}: {found.state}.", ""]
    if found.no_targets:
        out += ["**No targets found.**", ""]
    d = found.disease
    out += ["## Disease", ""]
    out += [f"- {d.value['name']} ({d.value['id']}) {d.cite()}" if d else "- none found", ""]
    out += _lines(
        "Targets (Open Targets association score)",
        found.targets,
        lambda t: (
            f"{t['targetSymbol']}: {t['targetName']} ({t['targetId']}),"
            f" score {t['associationScore']}"
        ),
    )
    p = found.protein
    out += ["## Protein of the first target", ""]
    out += [f"- {p.value['accession']}: {p.value['name']} {p.cite()}" if p else "- none found"]
    out += [""]
    out += _lines("Reactome pathways", found.pathways, lambda w: f"{w['id']}: {w['name']}")
    out += _kegg_lines(found)
    out += _lines("PDB structures", found.pdb, str)
    a = found.alphafold
    out += ["## AlphaFold model", ""]
    out += [f"- {a.value['id']}, mean pLDDT {a.value['plddt']} {a.cite()}" if a else "- none"]
    out += [""]
    out += _lines(
        "ChEMBL targets of the protein (the domain's compound step: ChEMBL's target search)",
        found.chembl_targets,
        lambda c: f"{c['target_chembl_id']}: {c['pref_name']}",
    )
    out += _lines(
        "Compounds tested against the ChEMBL target (ChEMBL activities)",
        found.compounds,
        lambda c: (
            f"{c['molecule_chembl_id']} {c['molecule_pref_name']}: {c['standard_type']}"
            f" {c['standard_relation']} {c['standard_value']} {c['standard_units']}"
            f" against {c['target_chembl_id']}"
        ),
    )
    out += _lines(
        "Literature (PubMed)",
        found.articles,
        lambda r: f"PMID {r['pmid']}: {r['title']} ({r['journal']}, {r['publicationDate']})",
    )
    out += ["## Missing", ""]
    out += [f"- {m}" for m in found.missing] or ["- nothing: every step gave its values"]
    return "\n".join([*out, ""])


def write_findings(found: Findings, report: Mapping[str, Any], folder: Path) -> None:
    """``report.md`` (the findings) and ``report.json`` (findings and the run's report)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.md").write_text(findings_markdown(found))
    body = {"findings": asdict(found), "run": dict(report)}
    (folder / "report.json").write_text(json.dumps(body, indent=2, sort_keys=True, default=str))
