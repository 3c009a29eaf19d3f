"""The lab's PCR from a plain request that states its values, through ``plansmith mcp``
with its defaults (the shipped catalog, no sampling): "PCR of 16 samples with the
8-channel pipette, 2 cycles" plans the domain's task on the real Opentrons simulator
and runs to success; a request that states no samples, or impossible values, gets one
typed answer and no run."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import _face_helpers as fh
import anyio
import pytest
from test_face_transports import MAIN

from plansmith.domains.lab import PCR_INPUTS, find_lab_python
from plansmith.errors import InputError

pytestmark = pytest.mark.anyio
LAB_PYTHON = find_lab_python()[0]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_values_are_read_from_the_request() -> None:
    said = PCR_INPUTS.values_in_text("PCR of 24 samples with the single-channel pipette, 25 cycles")
    assert said == {"samples": "24", "channels": "1", "cycles": "25"}
    assert PCR_INPUTS.values_in_text("prepare a PCR plate") == {}
    with pytest.raises(InputError, match="states samples twice"):
        PCR_INPUTS.values_in_text("24 samples, no, 48 samples")


def test_the_values_make_the_whole_problem_with_its_task(tmp_path: Path) -> None:
    prepared = PCR_INPUTS.prepare({}, tmp_path, {"samples": "16"})
    assert prepared.tasks == ("prepare_pcr(p1000, A1, 30)",)  # 8 channels, 30 cycles
    assert prepared.objects["A2"] == "unit"  # 16 samples: two columns
    assert "A3" not in prepared.objects
    assert dict(prepared.files) == {"samples": "16", "channels": "8", "cycles": "30"}
    for values, message in [
        ({"samples": "0"}, "input samples: '0' is not a whole number from 1 to 96"),
        ({"samples": "8", "channels": "4"}, "input channels: 4 is not a pipette here"),
        ({"samples": "8", "cycles": "x"}, "input cycles: 'x' is not a whole number"),
        ({"samples": "8", "tips": "2"}, "the PCR domain has no input 'tips'"),
        ({}, "the pcr domain needs input(s) for this job: samples"),
    ]:
        with pytest.raises(InputError) as caught:
            PCR_INPUTS.prepare({}, tmp_path, values)
        assert str(caught.value.message).startswith(message), caught.value.message


async def _pcr(client: Any) -> None:
    domains = {d["name"]: d for d in (await fh.call(client, "list_domains"))["domains"]}
    assert domains["pcr"]["ready"] is True, domains["pcr"]
    info = await fh.call(client, "describe_domain", {"name": "pcr"})
    assert [(i["name"], i["kind"]) for i in info["inputs"]] == [
        ("samples", "value"), ("channels", "value"), ("cycles", "value")
    ]  # fmt: skip
    before = len((await fh.call(client, "list_runs"))["runs"])
    missing = await fh.error_text(client, "make_plan", {"domain": "pcr", "request": "run a PCR"})
    assert "needs input(s) for this job: samples" in missing
    bad = await fh.error_text(
        client, "make_plan", {"domain": "pcr", "request": "PCR of 200 samples"}
    )
    assert "input samples: '200' is not a whole number from 1 to 96" in bad
    assert len((await fh.call(client, "list_runs"))["runs"]) == before  # no run made
    plan = await fh.call(
        client,
        "make_plan",
        {"domain": "pcr", "request": "PCR of 16 samples with the 8-channel pipette, 2 cycles"},
    )
    assert plan["status"] == "planned", plan
    assert plan["translation"]["tasks"] == ["prepare_pcr(p1000, A1, 2)"]
    assert plan["translation"]["llm_calls"] == 0
    assert plan["binding"]["ok"] is True, plan["binding"]
    await fh.call(client, "approve_plan", {"plan_hash": plan["plan_hash"]})
    run = await fh.call(client, "start_run", {"plan_hash": plan["plan_hash"]})
    status = await fh.poll(client, run["run_id"])
    assert status["state"] == "succeeded", status
    report = await fh.call(client, "get_run_report", {"run_id": run["run_id"]})
    assert report["report"]["asked"]["inputs"] == {"samples": "16", "channels": "8", "cycles": "2"}
    assert report["report"]["state"] == "succeeded"


@pytest.mark.skipif(not LAB_PYTHON.exists(), reason="needs the lab venv (make lab-venv)")
async def test_stdio_default_face_runs_a_pcr_request_on_the_simulator(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters, stdio_client

    work = tmp_path / "work"
    work.mkdir()
    keep = {"PLANSMITH_LAB_PYTHON"}  # the compiled build's tests name the lab venv
    # PYTHONPATH holds this venv's packages (mcp 2.x): plansmith-lab must not pass it on
    # to the lab venv's server (mcp 1.x), or the robot process cannot start
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PLANSMITH_") or k in keep},
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    args = ["-c", MAIN, "mcp", "--home", str(tmp_path / "home")]  # the shipped catalog
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(work))
    with anyio.fail_after(300), (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=240) as client:
            await _pcr(client)
