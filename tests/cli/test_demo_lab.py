"""``plansmith demo``: PCR prep planned and run on the simulator; ``demo lab-prep`` still plans."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "domains" / "lab"))
from _labclient import SKIP_REASON

from plansmith.cli import _register, app

_register(["plansmith", "demo"])


@pytest.mark.skipif(SKIP_REASON is not None, reason=str(SKIP_REASON))
def test_demo_lab_plans_runs_and_reports(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["demo", "lab", "--samples", "16", "--channels", "8", "--home", str(tmp_path)]
    )
    out = result.output
    assert result.exit_code == 0, out
    assert "37 steps in" in out
    assert "succeeded" in out
    assert "failed steps: 0" in out
    assert "simulator commands (get_run_log):" in out
    # to a pipe (CI, a log) the line is whole, its path and command not cut in two
    assert f"Watch runs in a browser: plansmith serve --home {tmp_path} (the run log" in out
    assert (tmp_path / "runs.db").is_file()


def test_demo_lab_prep_still_plans_the_shipped_example() -> None:
    result = CliRunner().invoke(app, ["demo", "lab-prep"])
    assert result.exit_code == 0, result.output
    assert "plan validated" in result.output


def test_demo_of_an_example_prints_its_explanation_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    result = CliRunner().invoke(app, ["demo", "doc-pipeline"])
    assert result.exit_code == 0, result.output
    # bracketed text is shown, not read as a style tag and dropped
    assert "s1 summarise(notes)  [cost 1, read]" in result.output
    assert "s3 index(notes)  [cost 1, write]" in result.output


def test_demo_lab_rejects_a_bad_sample_count(tmp_path: Path) -> None:
    if SKIP_REASON is not None:
        pytest.skip(SKIP_REASON)
    result = CliRunner().invoke(app, ["demo", "--samples", "0", "--home", str(tmp_path)])
    assert result.exit_code != 0
    assert "samples must be 1 to 96" in result.output


@pytest.mark.skipif(SKIP_REASON is not None, reason=str(SKIP_REASON))
def test_demo_bio_opentrons_runs_a_scenario_and_lists_the_mappings(tmp_path: Path) -> None:
    pytest.importorskip("gtpyhop")
    result = CliRunner().invoke(
        app, ["demo", "bio-opentrons", "--scenario", "1", "--home", str(tmp_path)]
    )
    out = " ".join(result.output.split())  # rich wraps long lines
    assert result.exit_code == 0, out
    assert "56 steps in 56 layers" in out  # GTPyhop plans are totally ordered
    assert "slot D1 -> pcr_plate on thermocycler" in out
    assert "load name opentrons_flex_96_wellplate_200ul_pcr ->" in out
    assert "failed steps: 0; replans: 0" in out
    assert "simulator commands (get_run_log):" in out


def test_demo_home_help_says_where_each_demo_keeps_its_runs() -> None:
    result = CliRunner().invoke(app, ["demo", "--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.replace("│", " ").split())
    assert "bio: HOME/demo-bio (plansmith serve --home HOME/demo-bio)" in out


@pytest.mark.skipif(SKIP_REASON is not None, reason=str(SKIP_REASON))
def test_demo_dna_extraction_runs_the_96_channel_protocol_on_the_simulator(
    tmp_path: Path,
) -> None:
    pytest.importorskip("gtpyhop")
    result = CliRunner().invoke(app, ["demo", "dna-extraction", "--home", str(tmp_path)])
    out = " ".join(result.output.split())
    assert result.exit_code == 0, out
    assert "scenario_1_standard, 96-channel pipette" in out
    assert "141 steps" in out
    assert "failed steps: 0" in out
    assert "simulator commands (get_run_log):" in out


def test_demo_dna_extraction_refuses_a_scenario_it_does_not_have(tmp_path: Path) -> None:
    if SKIP_REASON is not None:
        pytest.skip(SKIP_REASON)
    result = CliRunner().invoke(
        app, ["demo", "dna-extraction", "--scenario", "4", "--home", str(tmp_path)]
    )
    assert result.exit_code == 2, result.output
    assert "scenario must be 1 to 3" in result.output
