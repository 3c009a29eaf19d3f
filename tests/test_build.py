"""The compiled build (mypyc, opt-in) and the plain one side by side."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import _pddl_suite as suite

ROOT = Path(__file__).resolve().parents[1]


def _hooks() -> dict[str, dict[str, object]]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        config = tomllib.load(f)
    hooks: dict[str, dict[str, object]] = config["tool"]["hatch"]["build"]["targets"]["wheel"][
        "hooks"
    ]
    return hooks


def _mypyc_hook() -> dict[str, object]:
    return _hooks()["mypyc"]


def test_no_extension_module_sits_beside_the_sources() -> None:
    # the editable install would import one in place of the code being edited
    assert sorted(p.name for p in (ROOT / "src").rglob("*.so")) == []


def test_a_plain_install_is_pure_python_and_the_compiled_one_is_opt_in() -> None:
    hook = _mypyc_hook()
    assert hook["enable-by-default"] is False
    # the C extension (hatch_build.py) comes only with the compiled build too
    hooks = _hooks()
    assert hooks["custom"]["enable-by-default"] is False
    assert hooks["custom"]["path"] == "hatch_build.py"
    assert (ROOT / "hatch_build.py").is_file()


def test_the_compiled_modules_exist_and_this_process_runs_one_build_of_them_all() -> None:
    include = _mypyc_hook()["include"]
    assert isinstance(include, list)
    assert include
    kinds = set()
    for entry in include:
        path = ROOT / str(entry).lstrip("/")
        assert path.is_file(), entry
        name = str(entry).removeprefix("/src/").removesuffix(".py").replace("/", ".")
        module = importlib.import_module(name)
        kinds.add(Path(module.__file__ or "").suffix)
    # all compiled (.venv-compiled, `make test-compiled`) or all sources (.venv)
    assert kinds in ({".so"}, {".py"})


def test_the_installed_package_is_marked_typed() -> None:
    # PEP 561: without the marker a user's type checker sees plansmith as untyped; the
    # wheel takes every file of src/plansmith (``packages``), so this one too
    from importlib.resources import files

    marker = files("plansmith").joinpath("py.typed")
    assert marker.is_file()
    assert marker.read_bytes() == b""


# one task of each generated domain, each one the default search needs many steps on
PARITY_TASKS = [
    ("blocks", "blocks-7-s3"),
    ("gripper", "gripper-10"),
    ("logistics", "logistics-3-5-s2"),
    ("miconic", "miconic-16-32-s4"),
    ("depot", "depot-5-8-s7"),
    ("satellite", "satellite-2-4-s2"),
]


def _plan_bytes(domain: Path, task: Path, *options: str, sources: bool) -> bytes:
    """``plansmith plan --format json`` in a child: the installed build, or (``sources``)
    the source tree put first on the path."""
    env = dict(os.environ)
    if sources:
        env["PYTHONPATH"] = str(ROOT / "src")
    command = [sys.executable, "-m", "plansmith", "plan", str(domain), str(task)]
    done = subprocess.run(
        [*command, "--format", "json", *options],
        env=env,
        capture_output=True,
        check=True,
        timeout=300,
    )
    return done.stdout


def test_the_sources_on_the_path_run_as_python_whatever_the_installed_build() -> None:
    probe = "import importlib; print(importlib.import_module('plansmith.planning._task').__file__)"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == str(ROOT / "src/plansmith/planning/_task.py")


@pytest.mark.parametrize(("domain", "name"), PARITY_TASKS)
@pytest.mark.parametrize("options", [(), ("--search", "gbfs"), ("--no-novelty",)])
def test_the_installed_planner_writes_the_plan_bytes_the_sources_write(
    domain: str, name: str, options: tuple[str, ...], tmp_path: Path
) -> None:
    # under `make test-compiled` the installed build is the compiled one
    domain_file, task_file = suite.write(suite.task(domain, name), tmp_path)
    installed = _plan_bytes(domain_file, task_file, *options, sources=False)
    assert installed.startswith(b"{")
    assert installed == _plan_bytes(domain_file, task_file, *options, sources=True)
