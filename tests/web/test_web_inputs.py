"""A domain's inputs on the web, over the shipped catalog: files uploaded for bio's gene
and family (``POST /api/uploads``) planned, checked and made a run with a named goal; a
repository folder for code's diagnosis; the lab's PCR planned from its values alone; and
the typed 422s for inputs that are missing, wrong or not the domain's, with no run made.
The uploads are stored under the home, named safely, capped in size, and refused from
another site or without their header."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from _shop_repo import shop_repo
from plansmith.domains.bio import DATA_DIR
from plansmith.web import WebSettings, create_app

pytestmark = pytest.mark.anyio

UPLOAD = {"X-Plansmith-Upload": "1"}
SUMMARY = {"domain": "bio", "goal": "gc_and_orf_summary", "args": {"s": "gene"}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(WebSettings(home=tmp_path / "home"))  # the shipped domains
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1", timeout=120
    ) as c:
        yield c
    await app.state.controller.aclose()


async def _upload(client: httpx.AsyncClient, name: str, data: bytes) -> dict[str, Any]:
    response = await client.post("/api/uploads", files={"file": (name, data)}, headers=UPLOAD)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


async def _sequences(client: httpx.AsyncClient) -> tuple[str, str]:
    gene = await _upload(client, "gene.fasta", (DATA_DIR / "query.fasta").read_bytes())
    family = await _upload(client, "family.fasta", (DATA_DIR / "family.fasta").read_bytes())
    return gene["path"], family["path"]


def _error(response: httpx.Response, status: int = 422) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    return error


def _steps(plan: dict[str, Any]) -> list[tuple[str, list[str]]]:
    return [(s["action"], s["args"]) for s in plan["plan"]["steps"]]


async def test_the_domains_list_their_inputs_and_goals_fit_them_by_name(
    client: httpx.AsyncClient,
) -> None:
    domains = {d["name"]: d for d in (await client.get("/api/domains")).json()}
    bio, code, pcr = domains["bio"], domains["code"], domains["pcr"]
    assert [(i["name"], i["kind"], i["formats"]) for i in bio["inputs"]] == [
        ("gene", "file", ["fasta", "genbank"]),
        ("family", "file", ["fasta"]),
    ]
    assert "gc_and_orf_summary" in bio["inputs"][0]["needed_by"]
    assert [(i["name"], i["kind"]) for i in code["inputs"]] == [("repo", "folder")]
    assert [(i["name"], i["kind"]) for i in pcr["inputs"]] == [
        ("samples", "value"), ("channels", "value"), ("cycles", "value")
    ]  # fmt: skip
    assert pcr["goals"] == []  # its inputs make the job
    assert domains["research"]["inputs"] == []
    summary = next(g for g in bio["goals"] if g["name"] == "gc_and_orf_summary")
    assert summary["parameters"][0]["choices"] == ["gene", "family"]
    assert bio["runnable"] is True  # its servers are made from each request's inputs


async def test_uploaded_sequences_plan_check_and_make_a_run_of_a_named_goal(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    gene, family = await _sequences(client)
    assert Path(gene).parent.parent == tmp_path / "home" / "uploads"
    body = {**SUMMARY, "inputs": {"gene": gene}}
    plan = (await client.post("/api/plan", json=body)).json()
    assert plan["plan"]["problem"]["name"] == "gc_and_orf_summary-gene"  # summarised(gene)
    assert _steps(plan) == [
        ("load_sequences", ["gene"]), ("gc_content", ["gene"]),
        ("find_orfs", ["gene"]), ("write_summary", ["gene"]),
    ]  # fmt: skip
    problem = next((tmp_path / "home" / "requests").glob("*.yaml")).read_text()
    assert "summarised(gene)" in problem
    assert "input(gene)" in problem

    both = {
        "domain": "bio",
        "goal": "homologues_of_gene",
        "args": {"q": "gene", "d": "family"},
        "inputs": {"gene": gene, "family": family},
    }
    homologues = (await client.post("/api/plan", json=both)).json()
    assert ("load_sequences", ["family"]) in _steps(homologues)

    checked = (await client.post("/api/check", json=body)).json()
    assert checked["plan_hash"] == plan["plan_hash"]
    assert checked["bound"]["steps"][0]["action"] == "load_sequences"

    made = await client.post("/api/runs", json=body)
    assert made.status_code == 201, made.text
    run = made.json()
    servers = Path(run["inputs"]["servers"])  # the servers this request's inputs made
    assert servers.parent.parent == tmp_path / "home" / "requests"
    assert gene in servers.read_text()
    assert run["status"] == "awaiting approval"
    assert run["plan_hash"] == plan["plan_hash"]
    # the run records what was asked, as an MCP face's run does: its report shows it
    report = (await client.get(f"/api/runs/{run['run_id']}/report")).json()
    assert report["asked"] == {
        "domain": "bio", "planned_by": "web", "goal_name": SUMMARY["goal"],
        "args": SUMMARY["args"], "inputs": {"gene": gene},
        "request": f"goal {SUMMARY['goal']}(s=gene) with gene={gene} of bio",
    }  # fmt: skip


def _repo(tmp_path: Path) -> Path:
    """A tiny git repository whose plansmith-code.toml names its test command."""
    return shop_repo(tmp_path)


async def test_a_repository_folder_plans_the_code_diagnosis(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    repo = _repo(tmp_path)
    body = {"domain": "code", "goal": "diagnosis", "args": {"s": "repo"}}
    plan = await client.post("/api/plan", json={**body, "inputs": {"repo": str(repo)}})
    assert plan.status_code == 200, plan.text
    assert _steps(plan.json())[0] == ("run_suite", ["repo"])
    assert _steps(plan.json())[-1] == ("report_diagnosis", ["repo"])
    assert plan.json()["plan"]["problem"]["name"] == "diagnosis-repo"

    missing = _error(await client.post("/api/plan", json=body))
    assert missing["message"].startswith("the code domain needs input(s) for this goal: repo")
    plain = tmp_path / "plain"
    plain.mkdir()
    wrong = _error(await client.post("/api/plan", json={**body, "inputs": {"repo": str(plain)}}))
    assert wrong["message"] == f"input repo: {plain} is not a git repository"


async def test_the_pcr_values_alone_make_its_job(client: httpx.AsyncClient) -> None:
    body = {"domain": "pcr", "inputs": {"samples": "16", "cycles": "2"}}
    plan = await client.post("/api/plan", json=body)
    assert plan.status_code == 200, plan.text
    result = plan.json()
    assert result["plan"]["problem"]["name"] == "pcr-inputs"
    assert "prepare_pcr" in json.dumps(result["plan"]["decomposition"])
    assert result["steps"] > 10
    domains = {d["name"]: d for d in (await client.get("/api/domains")).json()}
    if not domains["pcr"]["runnable"]:  # no lab venv here: the plan is what can be checked
        return
    made = await client.post("/api/runs", json=body)
    assert made.status_code == 201, made.text
    assert made.json()["plan_hash"] == result["plan_hash"]
    assert made.json()["status"] == "awaiting approval"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"domain": "pcr", "inputs": {"samples": "0"}}, "input samples: '0' is not a whole"),
        ({"domain": "pcr", "inputs": {"channels": "8"}}, "the pcr domain needs input(s) for "),
        (
            {"domain": "pcr", "inputs": {"samples": "8", "tips": "2"}},
            "the PCR domain takes no files",
        ),
        ({**SUMMARY}, "the bio domain needs input(s) for this goal: gene"),
        ({**SUMMARY, "inputs": {"gene": "/no/such/gene.fasta"}}, "input gene: no file"),
        ({**SUMMARY, "inputs": {"gene": "FAMILY"}}, "input gene: family.fasta holds 8 sequ"),
        ({**SUMMARY, "inputs": {"gene": "GENE", "tips": "3"}}, "the bio domain has no input"),
        ({"domain": "bio", "inputs": {"gene": "GENE"}}, "domain 'bio' makes no job of its "),
        ({"domain": "research", "inputs": {"x": "1"}}, "the domain research takes no inputs"),
        (
            {"domain": "bio", "problem": "p", "inputs": {"gene": "G"}},
            "body: Value error, inputs go with",
        ),
        ({"domain": "pcr"}, "body: Value error, give a problem or a goal"),
    ],
)
async def test_missing_or_wrong_inputs_are_a_422_naming_the_input_and_make_no_run(
    client: httpx.AsyncClient, body: dict[str, Any], message: str
) -> None:
    gene, family = await _sequences(client)
    named = {"GENE": gene, "FAMILY": family}
    inputs = {k: named.get(v, v) for k, v in body.get("inputs", {}).items()}
    body = {**body, "inputs": inputs} if "inputs" in body else body
    for path in ("/api/plan", "/api/check", "/api/runs"):
        error = _error(await client.post(path, json=body))
        assert error["message"].startswith(message), (path, error)
    assert (await client.get("/api/runs")).json() == []


async def test_an_upload_is_named_safely_under_the_home_and_stored_once(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    uploads = tmp_path / "home" / "uploads"
    first = await _upload(client, "../../etc/my gene;x.fasta", b">g\nACGT\n")
    again = await _upload(client, "../../etc/my gene;x.fasta", b">g\nACGT\n")
    assert first == again
    assert first["name"] == "my_gene_x.fasta"
    assert first["size"] == 8
    assert Path(first["path"]) == uploads / first["sha256"][:16] / "my_gene_x.fasta"
    assert Path(first["path"]).read_bytes() == b">g\nACGT\n"
    dotted = await _upload(client, "..", b"x")
    assert dotted["name"] == "upload"
    assert [p.name for p in uploads.iterdir() if p.name.startswith(".")] == []


async def test_refused_uploads_store_nothing(tmp_path: Path) -> None:
    app = create_app(WebSettings(home=tmp_path / "home", max_upload=1000))
    transport = httpx.ASGITransport(app=app)
    uploads = tmp_path / "home" / "uploads"
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
        files = {"file": ("big.fasta", b"A" * 1001)}
        big = _error(await c.post("/api/uploads", files=files, headers=UPLOAD), 413)
        assert big["type"] == "UploadTooLargeError"
        huge = {"file": ("huge.fasta", b"A" * 200_000)}
        _error(await c.post("/api/uploads", files=huge, headers=UPLOAD), 413)
        small = {"file": ("ok.fasta", b"A" * 10)}
        header = _error(await c.post("/api/uploads", files=small), 403)
        assert header["location"] == "header.x-plansmith-upload"
        foreign = {**UPLOAD, "Origin": "http://evil.example"}
        _error(await c.post("/api/uploads", files=small, headers=foreign), 403)
        _error(await c.post("/api/uploads", json={"file": "x"}, headers=UPLOAD), 415)
        other = {"other": ("a.fasta", b"A")}
        nofile = _error(await c.post("/api/uploads", files=other, headers=UPLOAD))
        assert "field 'file'" in nofile["message"]
        fields = await c.post("/api/uploads", data={"x": "1"}, files=small, headers=UPLOAD)
        _error(fields, 400)  # nothing but the one file
    await app.state.controller.aclose()
    stored = [p for p in uploads.rglob("*") if p.is_file()] if uploads.is_dir() else []
    assert stored == []


async def test_an_upload_needs_the_token_when_one_is_set(tmp_path: Path) -> None:
    app = create_app(WebSettings(home=tmp_path / "home", token="s3cret"))
    transport = httpx.ASGITransport(app=app)
    files = {"file": ("g.fasta", b">g\nACGT\n")}
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
        _error(await c.post("/api/uploads", files=files, headers=UPLOAD), 401)
        auth = {**UPLOAD, "Authorization": "Bearer s3cret"}
        assert (await c.post("/api/uploads", files=files, headers=auth)).status_code == 201
    await app.state.controller.aclose()
    assert shutil.which("git")  # the code test's repository needs it


def _age(path: Path, days: float) -> None:
    """Make ``path`` look last used ``days`` ago."""
    then = time.time() - days * 86_400
    os.utime(path, (then, then))


async def test_uploads_no_request_named_for_the_keep_days_are_pruned(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    uploads = tmp_path / "home" / "uploads"
    old = Path((await _upload(client, "old.fasta", b">o\nACGT\n"))["path"])
    used = Path(
        (await _upload(client, "used.fasta", (DATA_DIR / "query.fasta").read_bytes()))["path"]
    )
    for path in (old, used):
        _age(path, 8)  # past the default 7 days
    part = uploads / ".part-0123456789abcdef"
    part.write_bytes(b"half")
    _age(part, 2)
    # a plan request that names an upload uses it: it is kept for 7 days more
    plan = await client.post("/api/plan", json={**SUMMARY, "inputs": {"gene": str(used)}})
    assert plan.status_code == 200, plan.text
    new = Path((await _upload(client, "new.fasta", b">n\nAC\n"))["path"])  # prunes the rest

    assert not old.exists()
    assert not old.parent.exists()  # its prefix folder, left empty, goes with it
    assert not part.exists()
    assert used.exists()
    assert new.exists()


async def test_uploads_are_pruned_as_the_app_starts_and_kept_with_keep_days_0(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    stale = home / "uploads" / "0123456789abcdef" / "stale.fasta"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b">s\nA\n")
    _age(stale, 30)
    keep = create_app(WebSettings(home=home, upload_keep_days=0))
    async with keep.router.lifespan_context(keep):
        pass
    assert stale.exists()  # 0: every upload is kept
    prune = create_app(WebSettings(home=home, upload_keep_days=10))
    async with prune.router.lifespan_context(prune):
        pass
    assert not stale.exists()
