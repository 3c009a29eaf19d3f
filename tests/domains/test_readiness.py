"""Whether a domain folder runs here: a folder that cannot says why and what fixes it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from plansmith.domains.folders import load_folders, readiness_of, shipped_domain_dirs

BINDINGS = "bindings:\n  act:\n    server: s\n    tool: t\n"


def _folder(tmp_path: Path, servers: dict[str, object] | None) -> tuple[Path | None, Path]:
    bindings = tmp_path / "bindings.yaml"
    bindings.write_text(BINDINGS)
    if servers is None:
        return None, bindings
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path, bindings


def test_a_folder_whose_servers_start_here_is_ready(tmp_path: Path) -> None:
    servers, bindings = _folder(tmp_path, {"s": {"command": sys.executable, "args": ["-V"]}})
    ready = readiness_of("d", servers, bindings, env={})
    assert ready.ready
    assert (ready.reason, ready.fix) == ("", "")


def test_a_folder_without_servers_plans_only_and_says_what_to_add(tmp_path: Path) -> None:
    _, bindings = _folder(tmp_path, None)
    r = readiness_of("d", None, bindings, env={})
    assert not r.ready
    assert r.reason == "plans only: the folder has no servers.json"
    assert "docs/bindings.md" in r.fix
    assert readiness_of("d", None, None, env={}).reason.endswith(
        "no servers.json and bindings.yaml"
    )


def test_an_unset_variable_is_named_with_what_sets_it(tmp_path: Path) -> None:
    servers, bindings = _folder(
        tmp_path, {"code": {"command": sys.executable, "args": ["${env:PLANSMITH_CODE_CONFIG}"]}}
    )
    r = readiness_of("code", servers, bindings, env={})
    assert not r.ready
    assert r.reason == "servers.json needs $PLANSMITH_CODE_CONFIG, which is not set"
    assert "docs/code-tools.md" in r.fix
    assert readiness_of("code", servers, bindings, env={"PLANSMITH_CODE_CONFIG": "c"}).ready


def test_a_command_that_is_not_installed_is_named_with_how_to_get_it(tmp_path: Path) -> None:
    servers, bindings = _folder(tmp_path, {"files": {"command": "npx", "args": ["-y", "x"]}})
    r = readiness_of("d", servers, bindings, env={"PATH": str(tmp_path)})  # no npx there
    assert not r.ready
    assert r.reason == "server 'files': the command 'npx' is not installed"
    assert "apt-get install -y nodejs npm" in r.fix
    other, _ = _folder(tmp_path, {"x": {"command": "no-such-program-here"}})
    assert "give its full path" in readiness_of("d", other, bindings, env={}).fix


def test_a_servers_file_that_does_not_load_gives_its_error_and_hint(tmp_path: Path) -> None:
    servers, bindings = _folder(tmp_path, {"s": {"command": 42}})
    r = readiness_of("d", servers, bindings, env={})
    assert not r.ready
    assert "servers.json" in r.reason
    assert r.fix.startswith("write the program as a string")


def test_the_lab_without_its_simulator_venv_says_how_to_build_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANSMITH_LAB_PYTHON", str(tmp_path / "missing" / "python"))
    pcr = next(p for p in shipped_domain_dirs() if p.name == "pcr")
    r = readiness_of("pcr", pcr / "servers.json", pcr / "bindings.yaml")
    assert not r.ready
    assert r.reason.startswith("the Opentrons simulator's Python is missing")
    assert "make lab-venv" in r.fix


def test_bio_without_blast_is_ready_with_a_note_per_missing_program(tmp_path: Path) -> None:
    bio = next(p for p in shipped_domain_dirs() if p.name == "bio")
    env = {"PATH": str(tmp_path), "PLANSMITH_BIO_RUN_ROOT": "r", "PLANSMITH_BIO_INPUTS": "{}"}
    r = readiness_of("bio", bio / "servers.json", bio / "bindings.yaml", env=env)
    assert r.ready  # plansmith-bio is found beside this Python
    assert [n.split(" (")[0] for n in r.notes] == ["BLAST+", "MAFFT", "FastTree"]


def test_the_shipped_catalog_is_the_domains_that_run_each_saying_if_it_can_here() -> None:
    folders = load_folders(shipped_domain_dirs())
    assert list(folders) == ["bio", "code", "pcr", "research", "notes-to-git"]
    for folder in folders.values():
        r = folder.readiness
        assert folder.runnable == r.ready
        assert r.ready or (r.reason and r.fix), folder.name
