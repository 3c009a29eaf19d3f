"""Every runnable shipped domain through ``plansmith mcp`` with its defaults (the shipped
catalog, no sampling) over streamable HTTP, in one server process: code (a repository
named in the request), bio (a FASTA named in the request), pcr on the Opentrons simulator
(values named in the request), research (over the installed Python docs), and GTPyhop's
drug target discovery and bio_opentrons (domains made by code: a scenario named in the
request or the inputs), each from a plain request to a succeeded run and its report. The
stdio flows are the same functions (test_face_code_inputs, test_face_bio_inputs,
test_face_pcr_inputs, test_face_made_domains)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import _face_helpers as fh
import anyio
import pytest
from test_face_bio_inputs import _summary_flow
from test_face_code_inputs import _diagnose, _refusals
from test_face_made_domains import _drug_target, _lab
from test_face_pcr_inputs import LAB_PYTHON, _pcr
from test_face_transports import MAIN, _start_http

from _shop_repo import git, shop_repo
from plansmith.domains.bio import DATA_DIR
from plansmith.domains.research import find_python_docs

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _work(tmp_path: Path) -> Path:
    """The server's working folder: shop/ (a repository with a failing test), plain/ and
    bare/ (refused), and data/gene.fasta."""
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    shop_repo(work)
    (work / "plain").mkdir()
    (work / "bare").mkdir()
    git(work / "bare", "init", "-q")
    shutil.copy(DATA_DIR / "query.fasta", work / "data" / "gene.fasta")
    return work


async def _research(client: Any) -> None:
    started = await fh.call(client, "start_research", {"question": "How do I read a CSV file?"})
    assert started["sources"] == ["python-docs"]
    with anyio.fail_after(180):  # the first search builds the docs' index
        while True:
            status = await fh.call(client, "get_research_status", {"run_id": started["run_id"]})
            if status["state"] not in ("starting", "running"):
                break
            await anyio.sleep(0.1)
    report = await fh.call(client, "get_research_report", {"run_id": started["run_id"]})
    assert report["state"] == "succeeded", report
    assert report["citations"] > 0
    assert "library/csv.html" in report["markdown"]


@pytest.mark.skipif(find_python_docs() is None, reason="needs Debian's python3-doc")
async def test_http_default_face_runs_every_shipped_domain_from_a_plain_request(
    tmp_path: Path,
) -> None:
    work = _work(tmp_path)
    old = Path.cwd()
    os.chdir(work)  # the server's working folder: the requests' paths are relative to it
    try:
        proc, url = await _start_http(["-c", MAIN, "mcp", "--home", str(tmp_path / "home")])
    finally:
        os.chdir(old)
    try:
        with anyio.fail_after(600):
            async with fh.http_client(url, session=True) as client:
                listed = (await fh.call(client, "list_domains"))["domains"]
                ready = {d["name"] for d in listed if d["ready"]}
                assert {"bio", "code", "research"} <= ready, listed
                await _diagnose(client)
                await _refusals(client)
                await _summary_flow(client)
                await _research(client)
                await _drug_target(client)  # GTPyhop's, made by code
                if LAB_PYTHON.exists():
                    assert {"pcr", "bio-opentrons", "dna-extraction"} <= ready
                    await _pcr(client)
                    await _lab(client, "bio-opentrons", {"scenario": "scenario_1"}, 56)
                runs = (await fh.call(client, "list_runs"))["runs"]  # research's are its own
                assert [r["state"] for r in runs] == ["succeeded"] * (
                    5 if LAB_PYTHON.exists() else 3
                )
    finally:
        proc.terminate()
        proc.wait(timeout=30)
