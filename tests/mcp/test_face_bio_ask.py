"""The bio domain's ask through a real MCP client: ``plansmith mcp`` with its defaults
(the shipped catalog) over stdio, a plain request for a reviewed family report, and the
SDK client's elicitation handler answering "top5" (a scripted person). The plan takes
the answer's branch (the homologues are trimmed to the query and the 5 best hits before
the alignment), the answer is in the log with who gave it, and ``plansmith replay``
reproduces the run from the log without asking anyone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import _face_helpers as fh
import anyio
import pytest
from test_face_ask_elicitation import Host, _answers, _client_info, _events
from test_face_transports import MAIN

from plansmith.domains.bio import DATA_DIR

pytestmark = pytest.mark.anyio

NEEDS = ("blastn", "makeblastdb", "mafft", "FastTree")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.skipif(
    any(shutil.which(p) is None for p in NEEDS), reason="needs BLAST+, MAFFT and FastTree"
)
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_bio_question_answered_through_elicitation_takes_its_branch_and_replays(
    tmp_path: Path, mode: str
) -> None:
    from mcp import Client, StdioServerParameters, stdio_client

    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    shutil.copy(DATA_DIR / "query.fasta", work / "data" / "gene.fasta")
    shutil.copy(DATA_DIR / "family.fasta", work / "data" / "family.fasta")
    home = tmp_path / "home"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PLANSMITH_")},
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-c", MAIN, "mcp", "--home", str(home)], env=env, cwd=work
    )
    host = Host("accept", "top5")
    request = "reviewed family report of data/gene.fasta against data/family.fasta"
    with anyio.fail_after(300), (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog),
            mode=mode,
            elicitation_callback=host,
            client_info=_client_info(),
            read_timeout_seconds=240,
        ) as client:
            plan = await fh.call(client, "make_plan", {"domain": "bio", "request": request})
            assert plan["status"] == "planned", plan
            assert plan["translation"]["llm_calls"] == 0
            actions = [s["action"] for s in plan["steps"]]
            assert "review_homologues" in actions
            assert "keep_top_hits" not in actions  # the plan assumes "all"
            await fh.call(client, "approve_plan", {"plan_hash": plan["plan_hash"]})
            run = await fh.call(client, "start_run", {"plan_hash": plan["plan_hash"]})
            status = await fh.call(client, "await_run", {"run_id": run["run_id"]})
            events = await _events(client, run["run_id"])
    assert status["state"] == "succeeded", status
    ((message, schema),) = host.asked
    assert message.startswith("The search found ")
    assert "Align every homologue, or only the top 5?" in message
    assert schema["properties"]["answer"]["enum"] == ["all", "top5"]
    assert _answers(events) == [("top5", "mcp:ask-test-host", "")]
    done: list[dict[str, Any]] = [e for e in events if e["type"] == "StepSucceeded"]
    ran = [e["action"] for e in done]
    assert ran.index("review_homologues") < ran.index("keep_top_hits") < ran.index("align_mafft")
    kept = next(e for e in done if e["action"] == "keep_top_hits")
    assert kept["outputs"]["count"] == 6  # the query and the 5 best hits
    alignment = next(e for e in done if e["action"] == "align_mafft")["outputs"]["alignment"]
    assert Path(alignment).read_text().count(">") == 6

    replay = subprocess.run(
        [sys.executable, "-m", "plansmith", "replay", run["run_id"], "--home", str(home)],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,  # nobody to ask: a replay asks no one
        timeout=300,
        check=False,
    )
    assert replay.returncode == 0, replay.stderr
    assert '"type":"AnswerRecorded"' in replay.stdout
