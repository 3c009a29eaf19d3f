"""GTPyhop's Python domains in the catalog of ``plansmith mcp`` with its defaults (no
sampling): bio-opentrons and the Omega HDQ DNA extraction on the Opentrons simulator, and
the drug target discovery over its eight servers, each from a plain request that names
its scenario through make_plan, approve, start and status to a succeeded run and its
report. A request that names no scenario gets a reason per scenario and no run; a bad
input is a typed error naming it, and no run. A run held for approval in one process is
approved and run by ``plansmith resume`` in another: the engine makes it again with the
run maker its log names (an installed entry point)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import _face_helpers as fh
import anyio
import pytest
from test_face_transports import MAIN

from plansmith.domains.lab import find_lab_python
from plansmith.domains.made import shipped_made_domains
from plansmith.engine import MADE_KEY, Engine, find_maker, made_by
from plansmith.errors import InputError

pytestmark = pytest.mark.anyio
LAB_PYTHON = find_lab_python()[0]
NEEDS_LAB = pytest.mark.skipif(not LAB_PYTHON.exists(), reason="needs the lab venv")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _env() -> dict[str, str]:
    keep = {"PLANSMITH_LAB_PYTHON"}  # the compiled build's tests name the lab venv
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("PLANSMITH_") or k in keep},
        "PYTHONPATH": os.pathsep.join(sys.path),
    }


def _client(tmp_path: Path, errlog: Any) -> Any:
    from mcp import Client, StdioServerParameters, stdio_client

    args = ["-c", MAIN, "mcp", "--home", str(tmp_path / "home")]  # the shipped catalog
    params = StdioServerParameters(command=sys.executable, args=args, env=_env(), cwd=tmp_path)
    return Client(stdio_client(params, errlog=errlog), read_timeout_seconds=240)


def test_every_shipped_maker_is_installed_as_an_entry_point() -> None:
    for made in shipped_made_domains().values():
        assert callable(find_maker(made.maker, {})), made.maker
    with pytest.raises(InputError, match="no run maker named 'nope'") as caught:
        find_maker("nope", {})
    assert "bio-opentrons" in (caught.value.hint or "")


def test_a_request_chooses_a_scenario_by_name_or_by_what_sets_it_apart() -> None:
    made = shipped_made_domains()
    assert made["bio-opentrons"].choose("PCR of 8 samples").problem == "scenario_2"
    assert made["bio-opentrons"].choose("run scenario 5").problem == "scenario_5"
    assert made["drug-target"].choose("targets for Alzheimer's disease").problem == (
        "scenario_2_alzheimers"
    )
    assert made["dna-extraction"].choose("a dry run").problem == "scenario_2_dry_run"
    for request in ("order a pizza", "", "breast cancer or diabetes"):
        choice = made["drug-target"].choose(request)
        assert choice.problem is None
        assert choice.reason
        assert len(choice.reasons) == len(made["drug-target"].problems) or "or" in request
        assert all(" -- " in r for r in choice.reasons)


def test_bad_arguments_are_typed_errors_naming_the_argument() -> None:
    bio = shipped_made_domains()["bio-opentrons"]
    for values, where in [
        ({"tip_racks": "3"}, "inputs.tip_racks"),
        ({"tips": "2"}, "inputs.tips"),
    ]:
        with pytest.raises(InputError) as caught:
            bio.args("scenario_1", values)
        assert caught.value.location is not None
        assert caught.value.location.argument == where
    with pytest.raises(InputError, match="no scenario 'scenario_9'"):
        bio.args("scenario_9", {})


async def _drug_target(client: Any) -> str:
    """The drug target plan for Alzheimer's, from a plain request, to a succeeded run."""
    plan = await fh.call(
        client,
        "make_plan",
        {"domain": "drug-target", "request": "find drug targets for Alzheimer's disease"},
    )
    assert plan["status"] == "planned", plan
    assert plan["translation"]["chosen"] == "scenario_2_alzheimers"
    assert plan["translation"]["llm_calls"] == 0
    assert plan["binding"]["ok"] is True, plan["binding"]
    assert len(plan["steps"]) == 11
    assert {s["server"] for s in plan["steps"]} >= {"opentargets", "kegg", "chembl"}
    await fh.call(client, "approve_plan", {"plan_hash": plan["plan_hash"]})
    run = await fh.call(client, "start_run", {"plan_hash": plan["plan_hash"]})
    status = await fh.poll(client, run["run_id"])
    assert status["state"] == "succeeded", status
    report = await fh.call(client, "get_run_report", {"run_id": run["run_id"]})
    assert report["report"]["state"] == "succeeded"
    assert report["report"]["asked"]["inputs"] == {"scenario": "scenario_2_alzheimers"}
    return str(run["run_id"])


async def _refusals(client: Any) -> None:
    before = len((await fh.call(client, "list_runs"))["runs"])
    pizza = await fh.call(
        client, "make_plan", {"domain": "drug-target", "request": "order a pizza"}
    )
    assert pizza["status"] == "needs_choice"
    assert "no scenario of drug-target matches 'order a pizza'" in pizza["translation"]["reason"]
    assert len(pizza["translation"]["candidates"]) == 3
    bad = await fh.error_text(
        client, "make_plan", {"domain": "bio-opentrons", "inputs": {"scenario": "scenario_9"}}
    )
    assert "no scenario 'scenario_9'" in bad
    assert "inputs.scenario" in bad
    goal = await fh.error_text(
        client, "make_plan", {"domain": "bio-opentrons", "goal": ["done(x)"]}
    )
    assert "made by code: it takes a scenario" in goal
    assert len((await fh.call(client, "list_runs"))["runs"]) == before  # no run made


async def _lab(client: Any, domain: str, inputs: dict[str, str], steps: int) -> None:
    plan = await fh.call(client, "make_plan", {"domain": domain, "inputs": inputs})
    assert plan["status"] == "planned", plan
    assert plan["binding"]["ok"] is True, plan["binding"]
    assert len(plan["steps"]) == steps
    await fh.call(client, "approve_plan", {"plan_hash": plan["plan_hash"]})
    run = await fh.call(client, "start_run", {"plan_hash": plan["plan_hash"]})
    with anyio.fail_after(240):
        while True:
            status = await fh.call(client, "get_run_status", {"run_id": run["run_id"]})
            if status["state"] in fh.TERMINAL:
                break
            await anyio.sleep(0.1)
    assert status["state"] == "succeeded", status
    report = await fh.call(client, "get_run_report", {"run_id": run["run_id"]})
    assert report["report"]["servers"].keys() <= {"movement", "liquid", "modules"}


async def test_stdio_default_face_lists_and_runs_the_drug_target_domain(tmp_path: Path) -> None:
    with anyio.fail_after(300), (tmp_path / "stderr.log").open("w") as errlog:
        async with _client(tmp_path, errlog) as client:
            listed = {d["name"]: d for d in (await fh.call(client, "list_domains"))["domains"]}
            for name in ("bio-opentrons", "dna-extraction", "drug-target"):
                assert listed[name]["kind"] == "made", listed[name]
                assert listed[name]["problems"], listed[name]
            info = await fh.call(client, "describe_domain", {"name": "bio-opentrons"})
            scenario = info["inputs"][0]
            assert scenario["name"] == "scenario"
            assert scenario["choices"] == [f"scenario_{n}" for n in range(1, 7)]
            assert info["inputs"][1]["choices"] == ["1", "2"]  # tip_racks
            await _refusals(client)
            run_id = await _drug_target(client)
    engine = Engine(tmp_path / "home")
    try:
        made = made_by(engine.log.run(run_id).inputs)
    finally:
        engine.close()
    assert made == ("drug-target", {"scenario": "scenario_2_alzheimers"})


@NEEDS_LAB
async def test_stdio_default_face_runs_bio_opentrons_and_dna_extraction_on_the_simulator(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(600), (tmp_path / "stderr.log").open("w") as errlog:
        async with _client(tmp_path, errlog) as client:
            listed = {d["name"]: d for d in (await fh.call(client, "list_domains"))["domains"]}
            assert listed["bio-opentrons"]["ready"] is True, listed["bio-opentrons"]
            await _lab(client, "bio-opentrons", {"scenario": "scenario_1"}, 56)
            await _lab(client, "dna-extraction", {"scenario": "scenario_2_dry_run"}, 100)


async def test_a_held_made_run_is_made_again_and_run_by_another_process(tmp_path: Path) -> None:
    with anyio.fail_after(300), (tmp_path / "stderr.log").open("w") as errlog:
        async with _client(tmp_path, errlog) as client:
            plan = await fh.call(
                client,
                "make_plan",
                {"domain": "drug-target", "inputs": {"scenario": "scenario_3_diabetes"}},
            )
            assert plan["status"] == "planned", plan
            run_id = plan["run_id"]
            status = await fh.call(client, "get_run_status", {"run_id": run_id})
            assert status["state"] == "awaiting approval", status
    home = tmp_path / "home"
    done = subprocess.run(
        [sys.executable, "-c", MAIN, "resume", run_id, "--yes", "--home", str(home)],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    engine = Engine(home)
    try:
        info = engine.log.run(run_id)
        assert info.inputs[MADE_KEY] == {
            "maker": "drug-target",
            "args": {"scenario": "scenario_3_diabetes"},
        }
        kinds = [type(e).__name__ for e in engine.log.events(run_id)]
    finally:
        engine.close()
    assert kinds.count("PlanReady") == 1  # bound once: the plan of the log ran
    assert kinds[-1] == "RunFinished"
    assert "PlanApproved" in kinds
