"""``plansmith run``'s options: a bad option is a clear error, exit code 2."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from plansmith.cli import _register, app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "doc-pipeline"


def test_run_names_the_unknown_word_of_approve_tiers(tmp_path: Path) -> None:
    _register()
    home = tmp_path / "home"
    args = ["run", str(EXAMPLE / "domain.yaml"), str(EXAMPLE / "problem.yaml")]
    args += ["--servers", str(tmp_path / "servers.json"), "--bindings", str(tmp_path / "b.yaml")]
    result = CliRunner().invoke(app, [*args, "--approve-tiers", "write,exec", "--home", str(home)])
    assert result.exit_code == 2
    # what ApprovalPolicy.parse says, with its hint, under the option's name
    assert "--approve-tiers: 'write,exec' is not a list of tiers: unknown 'exec'" in result.stderr
    assert "hint: name tiers read, write, execute" in result.stderr
    assert not home.exists()  # refused before the run log is opened
