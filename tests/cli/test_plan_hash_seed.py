"""``plansmith plan`` of a GTPyhop folder gives one plan whatever the caller's hash seed.

GTPyhop's cybersecurity scenario 6 and Childsnack p01 iterate over sets of strings:
planned under their own seeds, they gave 2 and 4+ different plans over
``PYTHONHASHSEED`` 0..3. The command plans them under ``PYTHONHASHSEED=0`` (running
itself again when its own seed is another), and records the seed in the plan.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plansmith.cli import _register, app
from plansmith.cli._hash_seed import CHILD_MARK

gtpyhop = pytest.importorskip("gtpyhop")
EXAMPLES = Path(gtpyhop.__file__).parent / "examples"
CASES = [
    (EXAMPLES / "cybersecurity_attack_planning", "scenario_6_admin_acl_change"),
    (EXAMPLES / "ipc-2020-total-order" / "Childsnack", "childsnack_p01"),
]


def _env(seed: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHASHSEED", CHILD_MARK)}
    if seed is not None:
        env["PYTHONHASHSEED"] = seed
    return env


def _plan(
    folder: Path, name: str, seed: str | None, *flags: str
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, *flags, "-m", "plansmith", "plan", str(folder), "--problem", name]
    return subprocess.run(
        [*command, "--format", "json"],
        capture_output=True,
        text=True,
        env=_env(seed),
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(("folder", "name"), CASES, ids=[name for _, name in CASES])
def test_one_plan_hash_under_every_hash_seed(folder: Path, name: str) -> None:
    hashes = set()
    for seed in ("0", "1", "2", "3", None):
        done = _plan(folder, name, seed)
        assert done.returncode == 0, done.stderr
        document = json.loads(done.stdout)
        assert document["planner"]["hash_seed"] == 0
        hashes.add(document["hash"])
    assert len(hashes) == 1


def test_called_in_process_it_plans_in_a_child_under_the_fixed_seed() -> None:
    folder, name = CASES[1]
    expected = _plan(folder, name, "0").stdout
    _register()
    result = CliRunner().invoke(
        app, ["plan", str(folder), "--problem", name, "--format", "json"], env={CHILD_MARK: None}
    )
    assert result.exit_code == 0, result.stderr
    if sys.flags.hash_randomization:  # this process could not plan it under seed 0 itself
        assert result.stdout == expected


def test_a_python_that_ignores_the_environment_plans_and_says_the_seed_is_not_fixed() -> None:
    folder, name = CASES[1]
    done = _plan(folder, name, None, "-E")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["planner"]["hash_seed"] is None
    assert "random hash seed" in done.stderr
