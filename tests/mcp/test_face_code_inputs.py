"""The code domain from a plain request that names its repository, through ``plansmith
mcp`` with its defaults (no PLANSMITH_CODE_CONFIG, no sampling): over stdio to a
succeeded diagnosis naming the failing function; and the typed answers for a folder
that is no repository or names no test command, with no run made."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import _face_helpers as fh
import anyio
import pytest
from test_face_transports import MAIN

from _shop_repo import git, shop_repo

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _work(tmp_path: Path) -> Path:
    """A working folder with shop/ (a repository with a failing test), plain/ (a folder
    that is no repository) and bare/ (a repository that names no test command)."""
    work = tmp_path / "work"
    work.mkdir()
    shop_repo(work)
    (work / "plain").mkdir()
    bare = work / "bare"
    bare.mkdir()
    git(bare, "init", "-q")
    return work


async def _diagnose(client: Any) -> None:
    domains = {d["name"]: d for d in (await fh.call(client, "list_domains"))["domains"]}
    assert domains["code"]["ready"] is True, domains["code"]
    info = await fh.call(client, "describe_domain", {"name": "code"})
    assert [i["name"] for i in info["inputs"]] == ["repo"]
    plan = await fh.call(
        client, "make_plan", {"domain": "code", "request": "diagnose the failing tests in shop/"}
    )
    assert plan["status"] == "planned", plan
    assert plan["translation"]["goal"] == ["diagnosed(repo)"]
    assert plan["translation"]["llm_calls"] == 0
    assert plan["binding"]["ok"] is True, plan["binding"]
    assert "execute" in plan["tiers"]
    assert plan["needs_approval"] is True
    await fh.call(client, "approve_plan", {"plan_hash": plan["plan_hash"]})
    run = await fh.call(client, "start_run", {"plan_hash": plan["plan_hash"]})
    status = await fh.poll(client, run["run_id"])
    assert status["state"] == "succeeded", status
    report = await fh.call(client, "get_run_report", {"run_id": run["run_id"]})
    assert report["report"]["asked"]["inputs"]["repo"].endswith("/shop")
    assert "double" in report["markdown"]  # the failing function, found by the diagnosis


async def _refusals(client: Any) -> None:
    before = len((await fh.call(client, "list_runs"))["runs"])
    plain = await fh.error_text(
        client, "make_plan", {"domain": "code", "goal": ["diagnosed(repo)"],
                              "inputs": {"repo": "plain"}},
    )  # fmt: skip
    assert "input repo:" in plain
    assert "not a git repository" in plain
    bare = await fh.error_text(
        client, "make_plan", {"domain": "code", "request": "diagnose the tests of bare/"}
    )
    assert "names no test command" in bare
    assert "plansmith-code.toml" in bare
    missing = await fh.error_text(
        client, "make_plan", {"domain": "code", "goal": ["diagnosed(repo)"]}
    )
    assert "needs input(s) for this goal: repo" in missing
    assert len((await fh.call(client, "list_runs"))["runs"]) == before  # no run made


async def test_stdio_default_face_diagnoses_a_repository_named_in_the_request(
    tmp_path: Path,
) -> None:
    from mcp import Client, StdioServerParameters, stdio_client

    work = _work(tmp_path)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PLANSMITH_")},
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    args = ["-c", MAIN, "mcp", "--home", str(tmp_path / "home")]  # the shipped catalog
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(work))
    with anyio.fail_after(300), (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=240) as client:
            await _diagnose(client)
            await _refusals(client)
