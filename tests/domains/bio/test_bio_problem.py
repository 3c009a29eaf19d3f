"""The problem writer: named goals, inputs, and tool availability in the initial state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from plansmith.domains.bio import (
    DOMAIN_DIR,
    GOALS,
    detect_tools,
    problem_yaml,
    server_config,
    write_problem,
)
from plansmith.errors import ProblemError

INPUTS = {"gene": "q.gb", "family": "f.fasta"}


def test_detect_tools_needs_every_program_of_a_tool() -> None:
    on_path = {"blastn", "makeblastdb", "mafft", "fasttree"}
    assert detect_tools(lambda n: f"/bin/{n}" if n in on_path else None) == {"mafft", "fasttree"}
    every = on_path | {"blastdbcmd", "clustal-omega"}
    assert detect_tools(lambda n: f"/bin/{n}" if n in every else None) == {
        "blastn",
        "mafft",
        "clustalo",
        "fasttree",
    }


def test_full_report_problem_lists_inputs_homologues_and_available_tools() -> None:
    doc = yaml.safe_load(problem_yaml("full family report", INPUTS, available=["blastn", "x"]))
    assert doc["domain"] == "bio"
    assert doc["objects"] == {"gene": "seqset", "family": "seqset", "homologues": "seqset"}
    assert doc["init"] == [
        "input(gene)",
        "input(family)",
        "available(blastn)",
        "homologue_set(homologues, gene, family)",
    ]
    assert doc["goal"] == ["reported(gene)"]


@pytest.mark.parametrize("goal", [g.name for g in GOALS] + [g.title for g in GOALS])
def test_every_goal_is_found_by_name_or_title(goal: str) -> None:
    doc = yaml.safe_load(problem_yaml(goal, INPUTS, available=[]))
    assert doc["goal"]


def test_goal_without_its_inputs_says_which_are_missing() -> None:
    with pytest.raises(ProblemError, match="family"):
        problem_yaml("homologues of this gene", {"gene": "q.gb"})


def test_unknown_goal_and_unknown_input_are_problem_errors() -> None:
    with pytest.raises(ProblemError, match="no goal"):
        problem_yaml("cure cancer", INPUTS)
    with pytest.raises(ProblemError, match="unknown input"):
        problem_yaml("GC and ORF summary", {"gene": "a", "protein": "b"})


def test_goals_match_the_domain_file() -> None:
    domain = yaml.safe_load((DOMAIN_DIR / "domain.yaml").read_text())
    assert list(domain["goals"]) == [g.name for g in GOALS]
    for g in GOALS:
        assert domain["goals"][g.name]["description"].startswith(g.title)


def test_write_problem_and_server_config(tmp_path: Path) -> None:
    path = write_problem(tmp_path / "p.yaml", "GC and ORF summary", {"gene": "q.gb"}, available=[])
    assert yaml.safe_load(path.read_text())["goal"] == ["summarised(gene)"]
    config = server_config({"gene": "q.gb"}, tmp_path, python="/usr/bin/python3")
    bio = config["mcpServers"]["bio"]  # type: ignore[index]
    assert bio["command"] == "/usr/bin/python3"
    assert bio["args"] == ["-m", "plansmith.domains.bio.server"]
    assert json.loads(bio["env"]["PLANSMITH_BIO_INPUTS"]) == {"gene": str(Path("q.gb").resolve())}
    assert bio["env"]["PLANSMITH_BIO_RUN_ROOT"] == str(tmp_path.resolve())
