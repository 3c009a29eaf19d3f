"""plansmith's extension of GTPyhop's ``drug_target_discovery`` domain: KEGG and the
compounds in the plan.

GTPyhop's domain (gtpyhop 2.0.2) declares ``a_get_kegg_pathway`` (``kegg-server:
get_pathway_info``), but none of its methods plans it: its scenarios use seven of its
eight servers. plansmith leaves the installed package as it is and extends the loaded
domain (a :class:`~plansmith.model.PyDomain`) with an action and a method, written
in GTPyhop's style (type checks, state-type checks, preconditions, effects):

- ``a_find_kegg_pathways_by_gene(state, kegg_gene_id)``: ``kegg-server:
  find_related_entries``, the KEGG pathways that link to a KEGG gene (``hsa:2099``);
- ``m_analyze_pathways_with_kegg``, a method of the task ``m_analyze_pathways`` tried
  before the domain's own: the Reactome pathways of the first gene (as the domain's
  method plans them), then gene -> KEGG gene id (UniProt's cross-reference, read from
  the protein step) -> its KEGG pathway -> that pathway's KEGG record.

The domain's compound step, ``a_get_compounds_for_target`` (``chembl-server:
search_by_uniprot``), finds ChEMBL *targets* by accession, not compounds. The second
action and method go one call further, as ChEMBL does:

- ``a_get_target_compounds(state, target_chembl_id)``: ``chembl-server:
  get_target_compounds``, the compounds tested against a ChEMBL target, with their
  activities;
- ``m_find_compounds_with_activities``, a method of the task ``m_find_compounds`` tried
  before the domain's own: the ChEMBL target of the protein (the domain's step), then
  the compounds tested against it.

``extended_domain`` returns the domain with all of them; the domain's own actions and
methods are kept, unchanged and in their order.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from plansmith.compat.gtpyhop import State
from plansmith.model import PyDomain

__all__ = [
    "EXTENDED_TASK",
    "COMPOUNDS_TASK",
    "a_find_kegg_pathways_by_gene",
    "m_analyze_pathways_with_kegg",
    "a_get_target_compounds",
    "m_find_compounds_with_activities",
    "extended_domain",
]

#: the domain's tasks that the added methods decompose
EXTENDED_TASK = "m_analyze_pathways"
COMPOUNDS_TASK = "m_find_compounds"


def _proteins_validated(state: Any) -> bool:
    """What both methods check before they decompose: a GTPyhop state, its
    ``validated_proteins`` list, and ``proteins_validated`` (as the domain's methods)."""
    return (
        isinstance(state, State)
        and hasattr(state, "validated_proteins")
        and bool(getattr(state, "proteins_validated", False))
    )


# --- Action: a_find_kegg_pathways_by_gene ---


def a_find_kegg_pathways_by_gene(state: Any, kegg_gene_id: object) -> Any:
    """
    Class: Action

    MCP_Tool: kegg-server:find_related_entries

    Action signature:
        a_find_kegg_pathways_by_gene(state, kegg_gene_id)

    Action parameters:
        kegg_gene_id: KEGG gene identifier (e.g., 'hsa:2099' for ESR1), as UniProt's
            KEGG cross-reference gives it

    Action purpose:
        Find the KEGG pathways that link to a gene (KEGG's /link/pathway/<gene>)

    Preconditions:
        - Proteins must be validated first (state.proteins_validated)

    Effects:
        - Gene-to-pathway links added (state.kegg_pathway_links) [DATA]
        - KEGG pathways found flag set (state.kegg_pathways_found) [ENABLER]

    Returns:
        Updated state if successful, False otherwise
    """
    # BEGIN: Type Checking
    if not isinstance(state, State):
        return False
    if not isinstance(kegg_gene_id, str):
        return False
    # END: Type Checking

    # BEGIN: State-Type Checks
    if not kegg_gene_id.strip():
        return False
    # END: State-Type Checks

    # BEGIN: Preconditions
    # Proteins must be validated first (the KEGG gene id comes from the UniProt entry)
    if not getattr(state, "proteins_validated", False):
        return False
    # END: Preconditions

    # BEGIN: Effects
    variables: Any = state  # a GTPyhop State holds its state variables as attributes
    # [DATA] Initialize kegg_pathway_links if not exists
    if getattr(variables, "kegg_pathway_links", None) is None:
        variables.kegg_pathway_links = []

    # [DATA] Add the links (populated by MCP server at runtime)
    variables.kegg_pathway_links.append(
        {
            "kegg_gene_id": kegg_gene_id,
            "pathway_ids": [],  # Populated by MCP server
            "source": "kegg",
        }
    )

    # [ENABLER] Gates a_get_kegg_pathway in m_analyze_pathways_with_kegg
    variables.kegg_pathways_found = True
    # END: Effects

    return variables


# --- Method: m_analyze_pathways_with_kegg (a method of the task m_analyze_pathways) ---


def m_analyze_pathways_with_kegg(state: Any) -> Any:
    """
    Class: Method

    Method signature:
        m_analyze_pathways_with_kegg(state)

    Method parameters:
        None (uses state.validated_proteins)

    Method purpose:
        Analyze pathway context with Reactome and KEGG: the Reactome pathways of the
        first gene, its KEGG gene id's pathways, and the KEGG record of the first one.

    Preconditions:
        - Proteins must be validated (state.proteins_validated)
        - Validated proteins list must exist (state.validated_proteins)

    Task decomposition:
        - a_find_pathways_by_gene: the first target's gene (Reactome)
        - a_find_kegg_pathways_by_gene: the KEGG gene id of its UniProt entry
        - a_get_kegg_pathway: the first KEGG pathway linked to that gene

    Returns:
        Task decomposition if successful, False otherwise
    """
    # BEGIN: Type Checking, Auxiliary Parameter Inference, Preconditions
    if not _proteins_validated(state):
        return False
    # END: Type Checking, Auxiliary Parameter Inference, Preconditions

    # BEGIN: Task Decomposition
    # ${context.first_gene}: a_get_disease_targets' output; ${context.kegg_genes}: the
    # KEGG ids of a_get_protein_by_gene's UniProt entry (its KEGG cross-references);
    # ${context.kegg_pathway_ids}: the pathways a_find_kegg_pathways_by_gene found.
    return [
        ("a_find_pathways_by_gene", "${context.first_gene}"),
        ("a_find_kegg_pathways_by_gene", "${context.kegg_genes[0]}"),
        ("a_get_kegg_pathway", "${context.kegg_pathway_ids[0]}"),
    ]
    # END: Task Decomposition


# --- Action: a_get_target_compounds ---


def a_get_target_compounds(state: Any, target_chembl_id: object) -> Any:
    """
    Class: Action

    MCP_Tool: chembl-server:get_target_compounds

    Action signature:
        a_get_target_compounds(state, target_chembl_id)

    Action parameters:
        target_chembl_id: ChEMBL target identifier (e.g., 'CHEMBL206' for the estrogen
            receptor), as a_get_compounds_for_target finds it

    Action purpose:
        Get the compounds tested against a ChEMBL target, with their activities

    Preconditions:
        - The protein's ChEMBL target must be looked up first (state.compounds_found)

    Effects:
        - Compounds with activities added (state.compound_activities) [DATA]
        - Compound activities found flag set (state.compound_activities_found) [ENABLER]

    Returns:
        Updated state if successful, False otherwise
    """
    # BEGIN: Type Checking
    if not isinstance(state, State):
        return False
    if not isinstance(target_chembl_id, str):
        return False
    # END: Type Checking

    # BEGIN: State-Type Checks
    if not target_chembl_id.strip():
        return False
    # END: State-Type Checks

    # BEGIN: Preconditions
    if not getattr(state, "compounds_found", False):
        return False
    # END: Preconditions

    # BEGIN: Effects
    variables: Any = state
    if getattr(variables, "compound_activities", None) is None:
        variables.compound_activities = []
    variables.compound_activities.append(
        {
            "target_chembl_id": target_chembl_id,
            "compound_ids": [],  # Populated by MCP server
            "activities": [],  # Populated by MCP server
            "source": "chembl",
        }
    )
    variables.compound_activities_found = True
    # END: Effects

    return variables


# --- Method: m_find_compounds_with_activities (a method of the task m_find_compounds) ---


def m_find_compounds_with_activities(state: Any) -> Any:
    """
    Class: Method

    Method signature:
        m_find_compounds_with_activities(state)

    Method parameters:
        None (uses state.validated_proteins)

    Method purpose:
        Find the drug compounds for the target: the protein's ChEMBL target (the
        domain's step), then the compounds tested against that target.

    Preconditions:
        - Proteins must be validated (state.proteins_validated)
        - Validated proteins list must exist (state.validated_proteins)

    Task decomposition:
        - a_get_compounds_for_target: the ChEMBL targets of the protein's accession
        - a_get_target_compounds: the compounds tested against the first of them

    Returns:
        Task decomposition if successful, False otherwise
    """
    # BEGIN: Type Checking, Auxiliary Parameter Inference, Preconditions
    if not _proteins_validated(state):
        return False
    # END: Type Checking, Auxiliary Parameter Inference, Preconditions

    # BEGIN: Task Decomposition
    # ${context.chembl_target_ids}: the ChEMBL target ids a_get_compounds_for_target found
    return [
        ("a_get_compounds_for_target", "${context.uniprot_accession}"),
        ("a_get_target_compounds", "${context.chembl_target_ids[0]}"),
    ]
    # END: Task Decomposition


def extended_domain(domain: PyDomain) -> PyDomain:
    """``domain`` (GTPyhop's ``drug_target_discovery`` as loaded) with plansmith's
    actions added after its own and its methods tried first for ``m_analyze_pathways``
    and ``m_find_compounds``."""
    actions = dict(domain.actions)
    tasks = dict(domain.task_methods)
    if "a_get_kegg_pathway" not in actions or not {EXTENDED_TASK, COMPOUNDS_TASK} <= set(tasks):
        raise ValueError(
            f"{domain.name!r} is not GTPyhop's drug_target_discovery: it lacks "
            f"a_get_kegg_pathway or the task {EXTENDED_TASK} or {COMPOUNDS_TASK}"
        )
    actions["a_find_kegg_pathways_by_gene"] = a_find_kegg_pathways_by_gene
    actions["a_get_target_compounds"] = a_get_target_compounds
    first = {
        EXTENDED_TASK: m_analyze_pathways_with_kegg,
        COMPOUNDS_TASK: m_find_compounds_with_activities,
    }
    methods = tuple(
        (task, (first[task], *found) if task in first else found)
        for task, found in domain.task_methods
    )
    return replace(domain, actions=tuple(actions.items()), task_methods=methods)
