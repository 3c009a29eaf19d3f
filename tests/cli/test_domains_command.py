"""``plansmith domains``: the catalog the faces offer, and whether each domain runs here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _domains(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plansmith", "domains", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_domains_lists_the_catalog_with_why_a_domain_cannot_run_and_the_fix(
    tmp_path: Path,
) -> None:
    env = {
        k: v for k, v in os.environ.items() if k not in ("PLANSMITH_CODE_CONFIG", "NOTES_WORKDIR")
    }
    listed = _domains("--json", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert list(rows) == [
        *("bio", "code", "pcr", "research", "notes-to-git"),
        *("bio-opentrons", "dna-extraction", "drug-target"),  # made by code
    ]
    assert rows["drug-target"]["kind"] == "made"
    assert rows["drug-target"]["ready"] is True
    assert rows["bio-opentrons"]["scenarios"][0] == "scenario_1"
    # code takes its repository from the request: ready, with a note of what to name
    assert rows["code"]["ready"] is True
    assert any("repo (the git repository" in n for n in rows["code"]["notes"])
    assert rows["code"]["goals"] == ["diagnosis", "proven_patch"]
    notes = rows["notes-to-git"]
    assert notes["ready"] is False
    assert "$NOTES_WORKDIR" in notes["reason"]
    assert "examples/notes-to-git/README.md" in notes["fix"]

    work = tmp_path / "work"
    work.mkdir()
    fixed = _domains("--json", env={**env, "NOTES_WORKDIR": str(work)})
    after = {r["name"]: r for r in json.loads(fixed.stdout)}["notes-to-git"]
    assert "NOTES_WORKDIR" not in after["reason"]  # set: ready, or the next thing it lacks

    table = _domains(env={**env, "COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert "NOTES_WORKDIR" in table.stdout
    assert "fix:" in table.stdout


def test_domains_of_a_folder_given_lists_only_it(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    folder.joinpath("domain.yaml").write_text(
        "domain: plain\npredicates: {done: []}\nactions:\n"
        "  finish: {parameters: {}, precondition: [], effect: [done()]}\n"
    )
    listed = _domains("--domains", str(folder), "--json", env=dict(os.environ))
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert (row["name"], row["ready"]) == ("plain", False)
    assert row["reason"] == "plans only: the folder has no servers.json and bindings.yaml"
