"""The compiled build (mypyc, opt-in) and the plain one side by side."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _mypyc_hook() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        config = tomllib.load(f)
    hook: dict[str, object] = config["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["mypyc"]
    return hook


def test_no_extension_module_sits_beside_the_sources() -> None:
    # the editable install would import one in place of the code being edited
    assert sorted(p.name for p in (ROOT / "src").rglob("*.so")) == []


def test_a_plain_install_is_pure_python_and_the_compiled_one_is_opt_in() -> None:
    hook = _mypyc_hook()
    assert hook["enable-by-default"] is False


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
