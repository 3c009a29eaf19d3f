"""GTPyhop's drug target discovery (loaded unchanged, extended by plansmith with a KEGG
action and method) planned by plansmith and run over the eight servers as real processes
(stdio, as the shipped servers.json starts them): the context placeholders resolved from
earlier steps' outputs, every value of the report traced to its step, server and tool;
the same structure run after run, cold and warm; a server killed mid-run restarted; a
source that stays down marked missing; a run replayed from its log; the domain as
published (``as_published``), without KEGG."""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from plansmith.binding import load_bindings
from plansmith.domains.drugtarget import pipeline
from plansmith.engine import Engine
from plansmith.execution import Event, StepRetrying, StepSkipped, StepStarted, StepSucceeded
from plansmith.model import Plan
from plansmith.servers import WarmPools, load_servers

pytest.importorskip("gtpyhop")

SCENARIO = "scenario_1_breast_cancer"


def _run(home: Path, **options: object) -> pipeline.DrugTargetRun:
    async def go() -> pipeline.DrugTargetRun:
        return await pipeline.run_drug_target(SCENARIO, home=home, **options)  # type: ignore[arg-type]

    return anyio.run(go)


PUBLISHED = [
    "a_search_disease",
    "a_get_disease_targets",
    "a_get_protein_by_gene",
    "a_find_pathways_by_gene",
    "a_get_pdb_structures",
    "a_get_alphafold_structure",
    "a_get_compounds_for_target",
    "a_search_literature",
]


def _servers_of(plan: Plan) -> list[str]:
    """The server of each step, from the binding of its action."""
    bindings = load_bindings(pipeline.DT_BINDINGS)
    found = [bindings.get(s.action) for s in plan.steps]
    return [b.server if b is not None else "(no binding)" for b in found]


@pytest.mark.parametrize("scenario", pipeline.DT_SCENARIOS)
def test_the_default_plan_has_eleven_steps_over_all_eight_servers(scenario: str) -> None:
    plan, domain = pipeline.plan_drug_target(scenario)
    assert [s.action for s in plan.steps] == [
        *PUBLISHED[:4],
        "a_find_kegg_pathways_by_gene",
        "a_get_kegg_pathway",
        *PUBLISHED[4:7],
        "a_get_target_compounds",
        PUBLISHED[7],
    ]
    assert plan.steps[9].args == ("${context.chembl_target_ids[0]}",)
    assert plan.steps[4].args == ("${context.kegg_genes[0]}",)
    assert plan.steps[5].args == ("${context.kegg_pathway_ids[0]}",)
    assert sorted(set(_servers_of(plan))) == sorted(pipeline.SOURCES)
    found = domain.action("a_find_kegg_pathways_by_gene")
    assert found is not None
    assert [p.name for p in found.parameters] == ["kegg_gene_id"]


@pytest.mark.parametrize("scenario", pipeline.DT_SCENARIOS)
def test_as_published_plans_the_papers_eight_steps_without_kegg(scenario: str) -> None:
    plan, domain = pipeline.plan_drug_target(scenario, as_published=True)
    assert [s.action for s in plan.steps] == PUBLISHED
    assert "kegg" not in _servers_of(plan)
    assert domain.action("a_find_kegg_pathways_by_gene") is None
    assert plan.hash != pipeline.plan_drug_target(scenario)[0].hash


def test_the_plan_has_the_papers_steps_and_its_context_placeholders() -> None:
    plan, domain = pipeline.plan_drug_target(SCENARIO, as_published=True)
    assert [s.action for s in plan.steps] == PUBLISHED
    assert plan.steps[1].args == ("${context.disease_id}",)
    assert plan.steps[4].args == ("${context.uniprot_accession}",)
    search = domain.action("a_search_disease")
    assert search is not None
    assert [p.name for p in search.parameters] == ["query", "size"]


def test_scenario_1_runs_over_eight_servers_and_every_value_names_its_source(
    tmp_path: Path,
) -> None:
    run = _run(tmp_path)
    assert run.state == "succeeded"
    assert run.failed_steps == 0
    found = run.findings
    assert found.disease is not None
    assert found.disease.value == {"id": "EFO_0000305", "name": "breast carcinoma"}
    assert found.disease.cite() == "[s1.disease_id opentargets:search_diseases]"
    # each placeholder got the value the step before it gave
    assert next(t.value["targetSymbol"] for t in found.targets) == "ESR1"
    assert found.protein is not None
    assert found.protein.value["accession"] == "P03372"
    assert found.protein.cite() == "[s3.uniprot_accession uniprot:search_by_gene]"
    assert [p.value for p in found.pdb]
    assert all(p.server == "pdb" for p in found.pdb)
    assert found.alphafold is not None
    assert found.alphafold.value["id"] == "AF-P03372-F1"
    assert [c.value["target_chembl_id"] for c in found.chembl_targets] == ["CHEMBL206"]
    # the compounds tested against that target (plansmith's step after the domain's)
    assert [(c.value["molecule_pref_name"], c.cite()) for c in found.compounds] == [
        ("TAMOXIFEN", "[s10.compound_activities chembl:get_target_compounds]"),
        ("FULVESTRANT", "[s10.compound_activities chembl:get_target_compounds]"),
    ]
    assert found.articles
    assert all(a.tool == "search_articles" for a in found.articles)
    # KEGG: gene -> KEGG gene id (UniProt's cross-reference) -> its pathway -> its record
    assert found.kegg_gene is not None
    assert found.kegg_gene.value == "hsa:2099"
    assert found.kegg_gene.cite() == "[s3.kegg_genes uniprot:search_by_gene]"
    assert [(w.value, w.server, w.tool) for w in found.kegg_links] == [
        ("path:hsa05224", "kegg", "find_related_entries")
    ]
    assert [(w.value, w.cite()) for w in found.kegg_pathways] == [
        (
            {"id": "hsa05224", "name": "Breast cancer - Homo sapiens (human)"},
            "[s6.kegg_pathway kegg:get_pathway_info]",
        )
    ]
    assert found.missing == []
    # eight servers, each its own process, each used
    assert sorted({server for server, _ in found.calls.values()}) == sorted(pipeline.SOURCES)
    assert found.calls["s5"] == ("kegg", "find_related_entries")
    assert found.calls["s6"] == ("kegg", "get_pathway_info")
    report = (run.report_dir / "report.md").read_text()
    assert "- P03372: Estrogen receptor [s3.uniprot_accession uniprot:search_by_gene]" in report
    assert "## KEGG pathways" in report
    assert (
        "- hsa05224: Breast cancer - Homo sapiens (human) [s6.kegg_pathway kegg:get_pathway_info]"
        in report
    )
    body = json.loads((run.report_dir / "report.json").read_text())
    assert body["run"]["state"] == "succeeded"
    assert {o["from"] for o in body["run"]["outputs"]} >= {
        "s1.disease_id",
        "s3.uniprot_accession",
        "s3.kegg_genes",
        "s5.kegg_pathway_ids",
        "s6.kegg_pathway",
    }
    assert body["findings"]["kegg_pathways"][0]["server"] == "kegg"


def test_scenario_1_as_published_runs_seven_servers_and_says_kegg_is_missing(
    tmp_path: Path,
) -> None:
    run = _run(tmp_path, as_published=True)
    assert run.state == "succeeded"
    assert len(run.plan.steps) == 8
    found = run.findings
    assert "kegg" not in {server for server, _ in found.calls.values()}
    assert found.kegg_gene is not None  # UniProt's cross-reference is still read
    assert found.kegg_pathways == []
    assert found.missing == [
        "no KEGG pathway linked to the gene: a_find_kegg_pathways_by_gene did not run",
        "no KEGG pathway record: a_get_kegg_pathway did not run",
        "no compound tested against the ChEMBL target: a_get_target_compounds did not run",
    ]


def test_three_cold_runs_and_three_warm_runs_have_one_structure(tmp_path: Path) -> None:
    cold = [_run(tmp_path / "cold") for _ in range(3)]
    assert len({r.run_id for r in cold}) == 3
    assert len({r.structure() for r in cold}) == 1

    async def warm_runs() -> list[pipeline.DrugTargetRun]:
        engine = Engine(tmp_path / "warm")
        pools = WarmPools(tmp_path / "warm" / "servers.log", idle_timeout=60)
        engine.pool_factory = pools.factory
        try:
            return [
                await pipeline.run_drug_target(SCENARIO, home=tmp_path, engine=engine)
                for _ in range(3)
            ]
        finally:
            await pools.aclose()
            engine.close()

    warm = anyio.run(warm_runs)
    assert {r.state for r in [*cold, *warm]} == {"succeeded"}
    assert {r.structure() for r in warm} == {cold[0].structure()}
    log = (tmp_path / "warm" / "servers.log").read_text()
    for source in pipeline.SOURCES:  # all eight, KEGG included
        assert log.count(f"server '{source}' starts") == 1, log  # once, kept warm


def _pid_recording_servers(tmp_path: Path, source: str, *, then_refuse: bool = False) -> Path:
    """The shipped servers, but ``source`` through a script that appends its pid to a
    file and then runs the server (``then_refuse``: only its first start; a later one
    exits at once, as a source that stays down)."""
    pids = tmp_path / f"{source}.pids"
    script = tmp_path / f"{source}.sh"
    refuse = f'[ -s "{pids}" ] && exit 3\n' if then_refuse else ""
    server = Path(sys.executable).parent / "plansmith-drugtarget"
    script.write_text(f'#!/bin/sh\n{refuse}echo $$ >> "{pids}"\nexec "{server}" {source}\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    config = json.loads(pipeline.DT_SERVERS.read_text())
    config["mcpServers"][source] = {"command": str(script), "args": []}
    path = tmp_path / "servers.json"
    path.write_text(json.dumps(config))
    return pids


def _killer(pids: Path, step: str) -> tuple[list[int], pipeline.Subscriber]:
    killed: list[int] = []

    def on_event(event: Event) -> None:
        if isinstance(event, StepStarted) and event.step == step and not killed:
            pid = int(pids.read_text().split()[0])
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    return killed, on_event


def test_a_server_killed_as_its_step_starts_is_restarted_and_the_run_succeeds(
    tmp_path: Path,
) -> None:
    pids = _pid_recording_servers(tmp_path, "uniprot")
    killed, on_event = _killer(pids, "s3")
    servers = load_servers(tmp_path / "servers.json")
    run = _run(tmp_path / "home", servers=servers, subscribe=on_event)
    assert killed
    assert run.state == "succeeded", run.findings.missing
    assert run.failed_steps == 0
    assert len(pids.read_text().split()) == 2  # started, killed, started again
    assert run.findings.protein is not None
    assert run.findings.missing == []


def test_a_source_that_stays_down_fails_its_step_and_the_report_marks_what_is_missing(
    tmp_path: Path,
) -> None:
    pids = _pid_recording_servers(tmp_path, "alphafold", then_refuse=True)
    killed, on_event = _killer(pids, "s8")
    retried: list[str] = []

    def watch(event: Event) -> None:
        on_event(event)
        if isinstance(event, StepRetrying):
            retried.append(event.error_class)

    servers = load_servers(tmp_path / "servers.json")
    run = _run(tmp_path / "home", servers=servers, subscribe=watch)
    assert killed
    assert run.state == "failed"
    assert run.failed_steps == 1
    found = run.findings
    assert found.alphafold is None
    # what ran before it is kept, with its sources
    assert found.protein is not None
    assert found.pdb
    missing = "\n".join(found.missing)
    assert "s8 a_get_alphafold_structure (alphafold:get_structure) failed" in missing
    assert "no ChEMBL target for the protein: a_get_compounds_for_target did not run" in missing
    report = (run.report_dir / "report.md").read_text()
    assert "## Missing" in report
    assert "s8 a_get_alphafold_structure" in report


def test_an_unknown_disease_gets_no_targets_found_and_a_typed_error_not_a_crash(
    tmp_path: Path,
) -> None:
    events: list[Event] = []
    run = _run(tmp_path, disease="no such disease at all", subscribe=events.append)
    # the search finds nothing: every step that needs its id is skipped, not failed
    assert run.state == "succeeded"
    assert run.failed_steps == 0
    skipped = [e.step for e in events if isinstance(e, StepSkipped)]
    called = [e.step for e in events if isinstance(e, StepSucceeded)]
    assert called == ["s1", "s11"]  # the disease search, and the literature search by name
    assert skipped == [f"s{i}" for i in range(2, 11)]
    first = next(e for e in events if isinstance(e, StepSkipped))
    assert "${context.disease_id}" in first.reason
    assert "is null" in first.reason
    found = run.findings
    assert found.disease is None
    assert found.no_targets
    missing = "\n".join(found.missing)
    assert "no disease found for the query (s1 opentargets:search_diseases)" in missing
    assert "s2 a_get_disease_targets (opentargets:get_disease_targets_summary) skipped" in missing
    report = (run.report_dir / "report.md").read_text()
    assert "**No targets found.**" in report
    # `plansmith show` says which steps were skipped and why, and the run succeeded
    import plansmith.cli._show  # noqa: F401 - registers the command
    from plansmith.cli._app import app

    shown = CliRunner().invoke(
        app, ["show", run.run_id, "--home", str(tmp_path)], env={"COLUMNS": "400"}
    )
    assert shown.exit_code == 0, shown.output
    assert "skipped: step s2: ${context.disease_id}: output 'disease_id'" in shown.output
    assert f"run {run.run_id}: succeeded" in shown.output


def test_a_run_replays_from_its_log_with_the_recorded_events(tmp_path: Path) -> None:
    import plansmith.cli._run  # noqa: F401 - registers the command
    from plansmith.cli._app import app

    run = _run(tmp_path)
    result = CliRunner().invoke(app, ["replay", run.run_id, "--home", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert f"replayed run {run.run_id}: " in result.stderr
    assert "each step's events as recorded" in result.stderr
    replayed = [json.loads(line) for line in result.stdout.splitlines()]
    assert sum(e["type"] == "StepSucceeded" for e in replayed) == 11


def test_the_cli_demo_runs_scenario_1_and_prints_the_traced_report(tmp_path: Path) -> None:
    import plansmith.cli._demo  # noqa: F401 - registers the command
    from plansmith.cli._app import app

    result = CliRunner().invoke(app, ["demo", "drug-target", "--home", str(tmp_path)])
    out = result.output
    assert result.exit_code == 0, out
    assert "a_get_disease_targets" in out
    assert "${context.disease_id}" in out
    assert "[s2.targets opentargets:get_disease_targets_summary]" in out
    assert "failed steps: 0" in out
    assert "servers used: 8 (alphafold, chembl, kegg, opentargets, pdb, pubmed," in out
    assert "[s6.kegg_pathway kegg:get_pathway_info]" in out
    assert (tmp_path / "runs.db").is_file()


#: scenario 2's ChEMBL target (amyloid-beta A4, CHEMBL2487) has no activity in the data set
NO_COMPOUND = "no compound tested against the ChEMBL target (s10 chembl:get_target_compounds)"


@pytest.mark.parametrize(
    ("scenario", "disease", "gene", "found_ids", "missing"),
    [
        (
            "scenario_2_alzheimers",
            "MONDO_0004975",
            "APP",
            ("P05067", "hsa:351", "hsa05010"),
            [NO_COMPOUND],
        ),
        ("scenario_3_diabetes", "MONDO_0005148", "PPARG", ("P37231", "hsa:5468", "hsa03320"), []),
    ],
)
def test_the_other_scenarios_run_and_say_what_is_missing(  # noqa: PLR0917
    tmp_path: Path,
    scenario: str,
    disease: str,
    gene: str,
    found_ids: tuple[str, str, str],
    missing: list[str],
) -> None:
    """``found_ids``: the UniProt accession, the KEGG gene and the KEGG pathway."""
    accession, kegg_gene, kegg_pathway = found_ids

    async def go() -> pipeline.DrugTargetRun:
        return await pipeline.run_drug_target(scenario, home=tmp_path)

    run = anyio.run(go)
    assert run.state == "succeeded"
    assert run.failed_steps == 0
    found = run.findings
    assert found.missing == missing
    assert bool(found.compounds) is not bool(missing)
    assert found.disease is not None
    assert found.disease.value["id"] == disease
    assert found.targets[0].value["targetSymbol"] == gene
    assert found.protein is not None
    assert found.protein.value["accession"] == accession
    assert found.kegg_gene is not None
    assert found.kegg_gene.value == kegg_gene
    assert [w.value["id"] for w in found.kegg_pathways] == [kegg_pathway]
    assert {w.server for w in found.kegg_pathways} == {"kegg"}
