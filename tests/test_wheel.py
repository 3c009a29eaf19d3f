"""An installed plansmith works outside the checkout: the wheel, built from this tree and
installed into a scratch venv (pip's cache reused), carries the web's static files, the
examples and the schemas, and its commands run from a folder that is not the repository.

Its lab server is found (or built) without a source tree: here with a fake
``python3.11`` on PATH, so the build in the user cache directory fails at once and must
leave nothing behind. (A real first-use build takes about a minute and the network; see
docs/lab.md.)"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _left(folder: Path) -> list[str]:
    """What a build left in ``folder`` (its lock file aside)."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".lock"))


def _run(command: list[str | Path], cwd: Path, env: dict[str, str], timeout: int = 300) -> str:
    done = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"{command}: {done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A venv (no system site-packages) with the wheel of this tree; its bin and an env."""
    tmp = tmp_path_factory.mktemp("wheel")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PLANSMITH_LAB_PYTHON", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
    }
    _run([sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps", "-w", tmp / "dist"], tmp, env)
    (wheel,) = (tmp / "dist").glob("plansmith-*.whl")
    _run([sys.executable, "-m", "venv", tmp / "venv"], tmp, env)
    bin_dir = tmp / "venv" / "bin"
    _run([bin_dir / "python", "-m", "pip", "install", "--quiet", wheel], tmp, env, timeout=900)
    env["PATH"] = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
    env["XDG_CACHE_HOME"] = str(tmp / "cache")
    return bin_dir, env


def _package(bin_dir: Path, env: dict[str, str], cwd: Path) -> Path:
    code = "import pathlib, plansmith; print(pathlib.Path(plansmith.__file__).parent)"
    return Path(_run([bin_dir / "python", "-c", code], cwd, env).strip())


def test_the_wheel_holds_the_static_files_examples_schemas_and_lab_server(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    bin_dir, env = installed
    package = _package(bin_dir, env, tmp_path)
    assert package.is_relative_to(bin_dir.parent), package  # not the checkout's sources
    for name in ("index.js", "app.css", "favicon.svg"):
        assert (package / "web" / "static" / name).is_file(), name
    for kind in ("domain", "problem", "plan", "bindings", "servers"):
        assert (package / "schemas" / f"{kind}.schema.json").is_file(), kind
    assert (package / "examples" / "doc-pipeline" / "domain.yaml").is_file()
    lab = package / "domains" / "lab"
    assert (lab / "server.py").is_file()
    assert (lab / "labserver" / "labmcp.py").is_file()
    assert (lab / "requirements-lab.txt").read_text() == (
        ROOT / "src" / "plansmith" / "domains" / "lab" / "requirements-lab.txt"
    ).read_text()


def test_plansmith_plans_a_shipped_example_outside_the_checkout(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    bin_dir, env = installed
    example = _package(bin_dir, env, tmp_path) / "examples" / "doc-pipeline"
    out = _run(
        [
            bin_dir / "plansmith",
            "plan",
            example / "domain.yaml",
            example / "problem.yaml",
            "--format",
            "json",
            "-o",
            tmp_path / "plan.json",
        ],
        tmp_path,
        env,
    )
    assert (tmp_path / "plan.json").is_file(), out
    _run(
        [
            bin_dir / "plansmith",
            "validate",
            example / "domain.yaml",
            example / "problem.yaml",
            tmp_path / "plan.json",
        ],
        tmp_path,
        env,
    )
    help_text = _run([bin_dir / "plansmith", "demo", "--help"], tmp_path, env)
    assert "--lab-python" in help_text


def test_the_shipped_servers_console_scripts_start(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    bin_dir, env = installed
    assert "--config" in _run([bin_dir / "plansmith-code", "--help"], tmp_path, env)
    code = (
        "from plansmith.domains.lab._labenv import checkout_root, find_lab_python\n"
        "print(checkout_root()); print(*find_lab_python())"
    )
    lines = _run([bin_dir / "python", "-c", code], tmp_path, env).splitlines()
    assert lines[0] == "None"  # an installed plansmith: no source tree around it
    python, source = lines[1].split()
    assert source == "cache"
    assert python.startswith(str(Path(env["XDG_CACHE_HOME"]) / "plansmith" / "lab-venv-"))


def test_a_lab_env_that_cannot_be_built_is_one_typed_error_and_leaves_nothing(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    bin_dir, env = installed
    fake_bin = tmp_path / "fake-bin"
    fake_bin.mkdir()
    fake = fake_bin / "python3.11"  # a fake python3.11: every call exits 1
    fake.write_text("#!/bin/sh\necho 'fake python3.11' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    cache = tmp_path / "cache"
    run_env = {
        **env,
        "PATH": os.pathsep.join([str(fake_bin), "/bin"]),
        "XDG_CACHE_HOME": str(cache),
    }
    for command in (["plansmith", "demo", "--samples", "8"], ["plansmith-lab", "--role", "all"]):
        done = subprocess.run(
            [str(bin_dir / command[0]), *command[1:]],
            cwd=tmp_path,
            env=run_env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 5, done.stderr
        assert f"building the lab server's environment in {cache / 'plansmith'}" in done.stderr
        assert f"{fake} -m venv" in done.stderr
        assert "could not build the lab server's virtual environment" in done.stderr
        assert "hint:" in done.stderr
        assert "python3.11" in done.stderr
        assert _left(cache / "plansmith") == []  # no half-made venv left
