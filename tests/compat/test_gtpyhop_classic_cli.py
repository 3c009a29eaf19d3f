"""``plansmith plan`` on a classic GTPyhop example folder (issue 34): such a package
(``__init__.py``, ``actions.py``, ``methods.py``, ``examples.py``; no ``domain.py``)
runs its own problems from ``main()``, so the CLI refuses it with an InputError
whose hint is the exact command that runs it under plansmith's stand-in."""

from __future__ import annotations

import importlib.machinery
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SPEC = importlib.machinery.PathFinder.find_spec("gtpyhop")
pytestmark = pytest.mark.skipif(SPEC is None, reason="gtpyhop 2.0.2 is not installed")


def _blocks_htn() -> Path:
    assert SPEC is not None
    assert SPEC.origin is not None
    return Path(SPEC.origin).parent / "examples" / "blocks_htn"


def _plan(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from plansmith.cli import main; main()", "plan", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _hint_command(stderr: str) -> list[str]:
    line = next(x for x in stderr.splitlines() if "hint:" in x)
    command = shlex.split(line.split("hint: run it with plansmith planning for GTPyhop: ")[1])
    assert command[0] == "python"
    return [sys.executable, *command[1:]]


@pytest.mark.parametrize("copied", [False, True])
def test_a_classic_example_is_refused_with_the_command_that_runs_it(
    copied: bool, tmp_path: Path
) -> None:
    folder = _blocks_htn()
    if copied:  # a copy outside the installed package: imported from its parent folder
        folder = Path(shutil.copytree(folder, tmp_path / "blocks_htn"))
    done = _plan(folder)
    assert done.returncode == 2, done.stderr
    assert "is a classic GTPyhop example" in done.stderr
    assert "has no domain.py" not in done.stderr
    ran = subprocess.run(
        _hint_command(done.stderr),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    assert "check_result> The result is as expected." in ran.stdout
    assert "Imported GTPyhop version" not in ran.stdout  # plansmith planned it
