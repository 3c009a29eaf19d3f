"""A LangGraph agent delegates a whole plan to plansmith through langchain-mcp-adapters.

The agent (``_lc_agent.py``) runs in its own venv, ``.venv-lc`` (``make lc-venv``),
because langchain-mcp-adapters 0.3.2 needs mcp<2 while plansmith uses mcp 2.x; so it
also shows that a 1.x client works with ``plansmith mcp`` over stdio. Its chat model is
a scripted fake from langchain_core; the graph, tool node, adapters, plansmith and the
code server are all real. The agent lists the domains, plans ``diagnose(suite)`` in the
code domain, approves the plan's hash, starts the run, polls it and fetches the report
of the planted bug's diagnosis.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import _code_fixtures as cf
import pytest

from plansmith.domains import code

ROOT = Path(__file__).resolve().parents[3]
LC_PYTHON = ROOT / ".venv-lc" / "bin" / "python"
AGENT = Path(__file__).with_name("_lc_agent.py")

pytestmark = pytest.mark.skipif(
    not LC_PYTHON.exists(), reason="the LangGraph venv is not built: run `make lc-venv`"
)


def test_a_langgraph_agent_plans_approves_runs_and_reports_through_mcp(tmp_path: Path) -> None:
    world = cf.make_world(tmp_path / "w")
    cf.plant_bug(world)
    code.server_files(tmp_path / "srv", world.repo)
    env = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
        "HOME": str(tmp_path),
        "PLANSMITH_CODE_CONFIG": str(tmp_path / "srv" / "code-server.json"),
    }
    done = subprocess.run(
        [
            str(LC_PYTHON),
            str(AGENT),
            str(Path(sys.executable).parent / "plansmith"),
            str(code.DOMAIN_DIR),
            str(tmp_path / "home"),
            "code",
            "diagnose(suite)",
        ],
        cwd=ROOT,  # the domain's servers.json starts plansmith-code (on PATH, see env)
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["client_packages"]["mcp"].startswith("1.")
    assert result["client_packages"]["langchain-mcp-adapters"] == "0.3.2"
    called = result["tools_called"]
    assert called[:4] == ["list_domains", "make_plan", "approve_plan", "start_run"]
    assert called[-1] == "get_run_report"
    assert set(called[4:-1]) <= {"get_run_status"}
    assert result["domains"] == ["code"]
    plan = result["plan"]
    assert plan["status"] == "planned"
    assert plan["needs_approval"] is True
    assert plan["tiers"] == ["execute"]
    assert plan["binding"]["ok"] is True, plan["binding"]
    assert [s["tool"] for s in plan["steps"]] == [
        "run_tests",
        "parse_failures",
        "find_symbol",
        "read_file",
        "report_diagnosis",
    ]
    assert result["status"]["state"] == "succeeded"
    report = result["report"]["report"]
    assert report["plan"]["hash"] == plan["plan_hash"]
    assert report["plan"]["approval_event"] == "person"
    outputs = {o["from"]: o["value"] for s in report["steps"] for o in s["outputs"]}
    assert outputs["s5.file"] == "toolz/itertoolz.py"
    assert outputs["s5.function"] == "frequencies"
    assert "frequencies" in result["final_answer"]  # the agent's answer is the run report
