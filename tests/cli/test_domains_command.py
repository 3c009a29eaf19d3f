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
    env = {k: v for k, v in os.environ.items() if k != "PLANSMITH_CODE_CONFIG"}
    listed = _domains("--json", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert list(rows) == ["bio", "code", "pcr", "research", "notes-to-git"]
    assert rows["code"]["ready"] is False
    assert "$PLANSMITH_CODE_CONFIG" in rows["code"]["reason"]
    assert "docs/code-tools.md" in rows["code"]["fix"]
    assert rows["code"]["goals"] == ["diagnosis", "proven_patch"]

    config = tmp_path / "code.yaml"
    config.write_text("repo: .\n")
    ready = _domains("--json", env={**env, "PLANSMITH_CODE_CONFIG": str(config)})
    assert {r["name"]: r["ready"] for r in json.loads(ready.stdout)}["code"] is True

    table = _domains(env={**env, "COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert "PLANSMITH_CODE_CONFIG" in table.stdout
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
