"""The bio domain from a plain request that names its input files, through ``plansmith
mcp`` with its defaults (the shipped catalog, no sampling): over stdio and streamable
HTTP to a succeeded run and its report; and the typed answers for missing, wrong or
unwanted inputs, with no run made."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import _face_helpers as fh
import anyio
import pytest
from test_face_transports import MAIN, _start_http

from plansmith.domains.bio import DATA_DIR

pytestmark = pytest.mark.anyio

NEEDS = ("blastn", "makeblastdb", "mafft", "FastTree")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _data(tmp_path: Path) -> Path:
    """A working folder with data/gene.fasta (one gene) and data/family.fasta."""
    data = tmp_path / "work" / "data"
    data.mkdir(parents=True)
    shutil.copy(DATA_DIR / "query.fasta", data / "gene.fasta")
    shutil.copy(DATA_DIR / "family.fasta", data / "family.fasta")
    (data / "notes.txt").write_text("not a sequence\n")
    return data.parent


async def _summary_flow(client: Any) -> None:
    domains = {d["name"]: d for d in (await fh.call(client, "list_domains"))["domains"]}
    assert domains["bio"]["ready"] is True
    info = await fh.call(client, "describe_domain", {"name": "bio"})
    assert [i["name"] for i in info["inputs"]] == ["gene", "family"]
    plan = await fh.call(
        client, "make_plan", {"domain": "bio", "request": "GC and ORF summary of data/gene.fasta"}
    )
    assert plan["status"] == "planned", plan
    assert plan["translation"]["goal"] == ["summarised(gene)"]
    assert plan["translation"]["llm_calls"] == 0
    assert plan["binding"]["ok"] is True, plan["binding"]
    await fh.call(client, "approve_plan", {"plan_hash": plan["plan_hash"]})
    run = await fh.call(client, "start_run", {"plan_hash": plan["plan_hash"]})
    status = await fh.poll(client, run["run_id"])
    assert status["state"] == "succeeded", status
    report = await fh.call(client, "get_run_report", {"run_id": run["run_id"]})
    assert report["report"]["asked"]["inputs"]["gene"].endswith("data/gene.fasta")
    assert "summarised(gene)" in report["markdown"] or "summarise" in report["markdown"]


async def test_stdio_default_face_runs_a_bio_request_naming_its_file(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters, stdio_client

    work = _data(tmp_path)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PLANSMITH_")},
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    args = ["-c", MAIN, "mcp", "--home", str(tmp_path / "home")]  # the shipped catalog
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(work))
    with anyio.fail_after(180), (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
            await _summary_flow(client)


@pytest.mark.skipif(
    any(shutil.which(p) is None for p in NEEDS), reason="needs BLAST+, MAFFT and FastTree"
)
async def test_http_default_face_runs_a_full_family_report_from_two_named_files(
    tmp_path: Path,
) -> None:
    work = _data(tmp_path)
    old = Path.cwd()
    os.chdir(work)  # the server's working folder: the request's paths are relative to it
    try:
        proc, url = await _start_http(["-c", MAIN, "mcp", "--home", str(tmp_path / "home")])
    finally:
        os.chdir(old)
    try:
        with anyio.fail_after(300):
            async with fh.http_client(url, session=True) as client:
                request = "full family report of data/gene.fasta against data/family.fasta"
                plan = await fh.call(client, "make_plan", {"domain": "bio", "request": request})
                assert plan["status"] == "planned", plan
                assert plan["translation"]["goal"] == ["reported(gene)"]
                await fh.call(client, "approve_plan", {"plan_hash": plan["plan_hash"]})
                run = await fh.call(client, "start_run", {"plan_hash": plan["plan_hash"]})
                status = await fh.poll(client, run["run_id"])
                assert status["state"] == "succeeded", status
                assert status["done"] == status["total"] >= 8
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _client(service: Any) -> Any:
    from mcp import Client

    from plansmith.mcp import build_face_server

    return Client(build_face_server(service, env={}))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            {"request": "GC and ORF summary of a gene"},
            "the bio domain needs input(s) for this goal: gene: one gene",
        ),
        (
            {"request": "full family report", "inputs": {"gene": "data/gene.fasta"}},
            "needs input(s) for this goal: family: the family database",
        ),
        ({"request": "GC and ORF summary of data/notes.txt"}, "notes.txt is neither FASTA nor"),
        (
            {"goal": ["summarised(gene)"], "inputs": {"gene": "data/family.fasta"}},
            "input gene: family.fasta holds 8 sequences, not one",
        ),
        ({"goal": ["summarised(gene)"], "inputs": {"gene": "data/none.fa"}}, "input gene: no file"),
        (
            {"goal": ["summarised(gene)"], "inputs": {"plasmid": "data/gene.fasta"}},
            "no input 'plasmid'",
        ),
    ],
)
async def test_missing_or_wrong_inputs_get_a_typed_answer_and_no_run(
    tmp_path: Path, args: dict[str, Any], expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = _data(tmp_path)
    monkeypatch.chdir(work)
    async with _client(fh.make_service(tmp_path)) as client:
        text = await fh.error_text(client, "make_plan", {"domain": "bio", **args})
        runs = await fh.call(client, "list_runs")
    assert text.startswith("Error executing tool make_plan: InputError: ")
    assert expected in text
    assert runs["runs"] == []


async def test_a_domain_that_takes_no_inputs_refuses_them(tmp_path: Path) -> None:
    async with _client(fh.make_service(tmp_path)) as client:
        text = await fh.error_text(
            client, "make_plan", {"domain": "docs", "goal": ["indexed(d1)"], "inputs": {"x": "y"}}
        )
    assert "the domain docs takes no inputs" in text
