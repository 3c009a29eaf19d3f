"""``plansmith plan``, ``validate`` and ``explain`` as a user calls them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import _pddl_suite as suite
from plansmith.cli import _register, app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "doc-pipeline"

DOMAIN = """\
domain: toy
types: {item: object}
predicates:
  have: [item]
  made: [item]
actions:
  make:
    parameters: {i: item}
    precondition: [have(i)]
    effect: [made(i)]
"""


def _invoke(*args: str) -> tuple[int, str, str]:
    _register()
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_plan_prints_text_plan_and_exits_zero() -> None:
    code, out, _ = _invoke("plan", str(EXAMPLE / "domain.yaml"), str(EXAMPLE / "problem.yaml"))
    assert code == 0
    assert "summarise(notes)" in out
    assert "index(q3)" in out


def test_plan_format_json_prints_exactly_the_plan_json() -> None:
    code, out, _ = _invoke(
        "plan", str(EXAMPLE / "domain.yaml"), str(EXAMPLE / "problem.yaml"), "--format", "json"
    )
    assert code == 0
    document = json.loads(out)
    assert document["format"] == "plansmith.plan"
    assert document["hash"].startswith("sha256:")
    assert {s["action"] for s in document["steps"]} == {"summarise", "index"}


def test_plan_output_file_then_validate_and_explain(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    domain, problem = str(EXAMPLE / "domain.yaml"), str(EXAMPLE / "problem.yaml")
    code, out, _ = _invoke("plan", domain, problem, "--format", "json", "-o", str(plan_file))
    assert code == 0
    assert out == ""
    assert json.loads(plan_file.read_text())["steps"]
    code, out, _ = _invoke("validate", domain, problem, str(plan_file))
    assert code == 0
    assert "valid" in out
    code, out, _ = _invoke("explain", domain, problem, str(plan_file))
    assert code == 0
    assert "summarise(notes)" in out


def test_validate_rejects_a_tampered_plan_with_exit_one(tmp_path: Path) -> None:
    domain, problem = str(EXAMPLE / "domain.yaml"), str(EXAMPLE / "problem.yaml")
    plan_file = tmp_path / "plan.json"
    assert _invoke("plan", domain, problem, "--format", "json", "-o", str(plan_file))[0] == 0
    from dataclasses import replace

    from plansmith.formats import parse_plan_json, plan_to_json

    plan = parse_plan_json(plan_file.read_text())
    kept = tuple(replace(s, after=()) for s in plan.steps if s.action != "summarise")
    plan_file.write_text(plan_to_json(replace(plan, steps=kept)))
    code, _, err = _invoke("validate", domain, problem, str(plan_file))
    assert code == 1
    assert "summarised" in err


def test_unsolvable_problem_exits_three(tmp_path: Path) -> None:
    domain = _write(tmp_path, "d.yaml", DOMAIN)
    problem = _write(
        tmp_path,
        "p.yaml",
        "problem: p\ndomain: toy\nobjects: {a: item}\ninit: []\ngoal: [made(a)]\n",
    )
    code, _, err = _invoke("plan", str(domain), str(problem))
    assert code == 3
    assert "unsolvable" in err.lower() or "no plan" in err.lower()


def test_node_limit_exits_four(tmp_path: Path) -> None:
    domain, task = suite.write(suite.task("blocks", "blocks-17-s6"), tmp_path)
    code, _, err = _invoke("plan", str(domain), str(task), "--node-limit", "1")
    assert code == 4
    assert "limit" in err.lower()


def test_malformed_problem_exits_two_with_location(tmp_path: Path) -> None:
    domain = _write(tmp_path, "d.yaml", DOMAIN)
    problem = _write(
        tmp_path,
        "p.yaml",
        "problem: p\ndomain: toy\nobjects: {a: item}\ninit: [hav(a)]\ngoal: [made(a)]\n",
    )
    code, _, err = _invoke("plan", str(domain), str(problem))
    assert code == 2
    assert f"{problem}:4" in err
    assert "hint" in err


@pytest.mark.parametrize(
    "body",
    ["goal: []\n", "tasks: []\n", "goal: []\ntasks: []\n"],
    ids=["empty goal", "empty tasks", "both empty"],
)
def test_problem_with_neither_goal_nor_tasks_exits_two_at_the_problem(
    tmp_path: Path, body: str
) -> None:
    domain = _write(tmp_path, "d.yaml", DOMAIN)
    problem = _write(tmp_path, "p.yaml", "# a problem\nproblem: p\ndomain: toy\n" + body)
    code, _, err = _invoke("plan", str(domain), str(problem))
    assert code == 2
    assert f"{problem}:2:1: problem 'p' has neither a goal nor tasks" in err
    assert "hint: add `goal:" in err


def test_plan_file_that_is_not_utf8_exits_two_at_the_bad_byte(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    plan_file.write_bytes(b'{\n  "format": "plansmith-pl\xe9an"\n}\n')
    for command in ("validate", "explain"):
        code, _, err = _invoke(
            command, str(EXAMPLE / "domain.yaml"), str(EXAMPLE / "problem.yaml"), str(plan_file)
        )
        assert code == 2
        assert f"{plan_file}:2:26: the plan file is not UTF-8 text (byte 0xe9)" in err
        assert "hint: a plan file is the UTF-8 JSON" in err


def test_missing_problem_file_exits_two(tmp_path: Path) -> None:
    code, _, err = _invoke("plan", str(EXAMPLE / "domain.yaml"), str(tmp_path / "nope.yaml"))
    assert code == 2
    assert "nope.yaml" in err


@pytest.mark.parametrize("fmt", ["mermaid", "dot", "text"])
def test_plan_renders_other_formats(fmt: str) -> None:
    code, out, _ = _invoke(
        "plan", str(EXAMPLE / "domain.yaml"), str(EXAMPLE / "problem.yaml"), "--format", fmt
    )
    assert code == 0
    assert "index" in out


def test_plan_bytes_are_identical_across_hash_seeds(tmp_path: Path) -> None:
    domain, task = suite.write(suite.task("logistics", "logistics-4-8-s3"), tmp_path)
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-m", "plansmith", "plan", str(domain), str(task), "--format", "json"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        outputs.add(proc.stdout)
    assert len(outputs) == 1
    plan_file = _write(tmp_path, "plan.json", outputs.pop())
    code, out, _ = _invoke("validate", str(domain), str(task), str(plan_file))
    assert code == 0
    assert "valid" in out


def _gtpyhop_folder(name: str) -> Path:
    import gtpyhop

    return Path(gtpyhop.__file__).parent / "examples" / "mcp-orchestration" / name


def test_plan_gtpyhop_folder_by_problem_name() -> None:
    folder = _gtpyhop_folder("bio_opentrons")
    code, out, _ = _invoke("plan", str(folder), "--problem", "scenario_1", "--format", "json")
    assert code == 0
    document = json.loads(out)  # the domain's own prints must not reach stdout
    assert document["planner"]["kind"] == "htn"
    assert len(document["steps"]) == 56  # GTPyhop's 55 plus the lid step it drops as a no-op


def test_plan_gtpyhop_folder_with_unknown_problem_lists_the_known_ones() -> None:
    code, _, err = _invoke("plan", str(_gtpyhop_folder("bio_opentrons")), "--problem", "nope")
    assert code == 2
    assert "scenario_6" in err


def test_plan_htn_yaml_problem_records_its_decomposition() -> None:
    code, out, _ = _invoke(
        "plan", str(EXAMPLE / "domain.yaml"), str(EXAMPLE / "problem-htn.yaml"), "--format", "json"
    )
    assert code == 0
    document = json.loads(out)
    assert document["planner"]["kind"] == "htn"
    assert "decomposition" in document


@pytest.mark.parametrize("command", ["validate", "explain"])
def test_validate_and_explain_refuse_a_gtpyhop_folder_saying_what_they_take(
    tmp_path: Path, command: str
) -> None:
    folder = _gtpyhop_folder("bio_opentrons")
    plan_file = tmp_path / "bio.json"
    code, _, _ = _invoke("plan", str(folder), "--problem", "scenario_1", "-o", str(plan_file))
    assert code == 0
    code, _, err = _invoke(command, str(folder), "scenario_1", str(plan_file))
    assert code == 2
    assert f"{command} takes a domain file (.yaml, .yml, .json or .pddl), not a folder" in err
    assert "hint: a GTPyhop folder's actions are Python code" in err


def _help(*args: str) -> str:
    _register()
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("command", ["validate", "explain"])
def test_validate_and_explain_help_name_the_domain_files_they_take(command: str) -> None:
    assert "Domain file (.yaml, .yml, .json or .pddl); not a GTPyhop folder" in _help(command)


def test_validate_help_lists_its_exit_codes() -> None:
    codes = (
        "Exit codes: 0 valid; 1 invalid, or made for another domain or problem (the reason "
        "on stderr); 2 bad input (a file missing or malformed"
    )
    assert codes in _help("validate")
