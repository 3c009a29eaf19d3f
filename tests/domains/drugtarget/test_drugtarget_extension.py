"""plansmith's KEGG extension of GTPyhop's drug_target_discovery domain: its action and
method check what GTPyhop's do, and the installed domain is left as it is."""

from __future__ import annotations

from typing import Any

import pytest

from plansmith.compat.gtpyhop import State
from plansmith.domains.drugtarget import pipeline
from plansmith.domains.drugtarget._extension import (
    a_find_kegg_pathways_by_gene,
    extended_domain,
    m_analyze_pathways_with_kegg,
    m_find_compounds_with_activities,
)
from plansmith.model import PyDomain

pytest.importorskip("gtpyhop")


def test_the_action_checks_types_and_its_precondition_like_the_domains_actions() -> None:
    state: Any = State("s")  # a State takes any state variable
    assert a_find_kegg_pathways_by_gene(state, "hsa:2099") is False  # proteins not validated
    state.proteins_validated = True
    assert a_find_kegg_pathways_by_gene(state, "  ") is False
    assert a_find_kegg_pathways_by_gene(state, 2099) is False
    assert a_find_kegg_pathways_by_gene(object(), "hsa:2099") is False
    after = a_find_kegg_pathways_by_gene(state, "hsa:2099")
    assert after is state
    assert after.kegg_pathways_found is True
    assert after.kegg_pathway_links[0]["kegg_gene_id"] == "hsa:2099"


def test_the_method_needs_validated_proteins() -> None:
    state: Any = State("s")  # a State takes any state variable
    assert m_analyze_pathways_with_kegg(state) is False
    state.validated_proteins = []
    state.proteins_validated = True
    assert [t[0] for t in m_analyze_pathways_with_kegg(state)] == [
        "a_find_pathways_by_gene",
        "a_find_kegg_pathways_by_gene",
        "a_get_kegg_pathway",
    ]


def test_the_extension_adds_two_actions_and_two_methods_first() -> None:
    from plansmith.compat import gtpyhop
    from plansmith.formats import load_gtpyhop_package

    domain, _ = load_gtpyhop_package(
        pipeline.drug_target_folder(), pipeline.DT_SCENARIOS[0], stand_in=gtpyhop
    )
    extended = extended_domain(domain)
    assert [n for n, _ in extended.actions] == [
        *(n for n, _ in domain.actions),
        "a_find_kegg_pathways_by_gene",
        "a_get_target_compounds",
    ]
    compounds = dict(domain.task_methods)["m_find_compounds"]
    assert dict(extended.task_methods)["m_find_compounds"] == (
        m_find_compounds_with_activities,
        *compounds,
    )
    published = dict(domain.task_methods)["m_analyze_pathways"]
    assert dict(extended.task_methods)["m_analyze_pathways"] == (
        m_analyze_pathways_with_kegg,
        *published,
    )
    assert len(published) == 1  # the loaded domain is not changed
    with pytest.raises(ValueError, match="not GTPyhop's drug_target_discovery"):
        extended_domain(PyDomain("other"))
