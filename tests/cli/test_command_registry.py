"""The command table that keeps ``plansmith`` start-up lean matches the commands defined."""

from __future__ import annotations

import os
import subprocess
import sys

from plansmith.cli import COMMAND_MODULES, _register, app


def test_every_command_is_in_the_table_and_nothing_else() -> None:
    _register()
    defined = {command.name for command in app.registered_commands}
    assert defined == set(COMMAND_MODULES)


def test_plan_command_does_not_import_the_run_web_or_mcp_faces() -> None:
    code = (
        "import sys; from plansmith.cli import _register; _register(['plansmith', 'plan']);"
        "print(sorted(m for m in sys.modules if m.split('.')[:2] in (['plansmith', 'web'],"
        " ['plansmith', 'engine'], ['plansmith', 'servers']) or m in ('mcp', 'fastapi')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_plansmith_plan_runs_without_importing_typer(tmp_path: object) -> None:
    example = "src/plansmith/examples/doc-pipeline/"
    code = (
        "import sys\n"
        "from plansmith.cli import main\n"
        f"sys.argv = ['plansmith', 'plan', '{example}domain.yaml', '{example}problem.yaml',"
        f" '-o', '{tmp_path}/plan.txt']\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    assert stop.code == 0, stop.code\n"
        "print(sorted(m for m in ('typer', 'click', 'rich') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _help(*args: str) -> str:
    env = {**os.environ, "COLUMNS": "300", "NO_COLOR": "1", "TERM": "dumb"}
    out = subprocess.run(
        [sys.executable, "-m", "plansmith", *args, "--help"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return out.stdout


def test_help_prints_each_commands_text_whole_and_in_one_paragraph() -> None:
    listing = _help()
    # a docstring's line breaks do not break the sentence in the command list
    assert "before anything runs: every problem is listed with its location." in listing
    run = _help("run")
    # square brackets are text, not markup that swallows them
    assert "needs plansmith[postgres])" in run
    assert "needs plansmith[dask])" in run
    assert "Stops at awaiting approval (exit 6) unless --yes or the policy allows the plan." in run


def test_version_is_printed_fast_and_by_the_app_alike() -> None:
    import plansmith

    out = subprocess.run(
        [sys.executable, "-m", "plansmith", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout == f"plansmith {plansmith.__version__}\n"
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output == out.stdout
    assert "--version" in _help()


def test_the_version_printed_is_the_installed_distributions() -> None:
    from importlib.metadata import version

    import plansmith

    assert plansmith.__version__ == version("plansmith")  # pyproject.toml's
