"""Where the lab server's python comes from: ``--lab-python`` or $PLANSMITH_LAB_PYTHON,
.venv-lab beside the sources in a checkout, else a venv in the user cache directory that
plansmith builds on first use; and what a build that cannot be done leaves (nothing)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from plansmith.domains.lab import _labenv
from plansmith.errors import ServerStartError

SHOW = (
    "from plansmith.domains.lab.sim import LAB_PYTHON, REPO_ROOT, require_lab_venv\n"
    "from plansmith.errors import ServerStartError\n"
    "print(LAB_PYTHON)\n"
    "print(REPO_ROOT)\n"
    "try:\n"
    "    require_lab_venv()\n"
    "except ServerStartError as error:\n"
    "    print(error.message)\n"
    "    print(error.hint)\n"
)
PLANSMITH = Path(sys.executable).parent / "plansmith"


def _show(**env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k != "PLANSMITH_LAB_PYTHON"}
    done = subprocess.run(
        [sys.executable, "-c", SHOW],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.splitlines()


def _fake_python311(folder: Path) -> Path:
    """A fake ``python3.11`` on a PATH of its own: every call exits 1."""
    folder.mkdir(parents=True, exist_ok=True)
    fake = folder / "python3.11"
    fake.write_text("#!/bin/sh\necho 'fake python3.11: refusing' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return fake


def _left(folder: Path) -> list[str]:
    """What a build left in ``folder`` (its lock file aside)."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".lock"))


def _cache_only(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    """As an installed plansmith sees it: no checkout, the user cache in ``cache``."""
    monkeypatch.setattr(_labenv, "checkout_root", lambda: None)
    monkeypatch.delenv("PLANSMITH_LAB_PYTHON", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))


def test_the_lab_python_is_the_venv_beside_the_sources_by_default() -> None:
    lines = _show()
    if _labenv.checkout_root() is None:  # an installed plansmith (the compiled build's)
        assert lines[0] == str(_labenv.cache_venv() / "bin" / "python")
    else:
        assert lines[0] == str(Path(lines[1]) / ".venv-lab" / "bin" / "python")


def test_plansmith_lab_python_names_another_one_and_a_missing_one_is_a_typed_error(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "lab" / "bin" / "python"
    lines = _show(PLANSMITH_LAB_PYTHON=str(missing))
    assert lines[0] == str(missing)
    assert lines[2] == (
        f"the lab server's python ($PLANSMITH_LAB_PYTHON) is not usable: {missing} is missing"
    )
    assert "docs/lab.md" in lines[3]


def test_the_option_comes_before_the_variable_and_the_checkout() -> None:
    assert _labenv.find_lab_python("/opt/lab/bin/python") == (
        Path("/opt/lab/bin/python"),
        "option",
    )


def test_an_installed_plansmith_uses_the_user_cache_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cache_only(monkeypatch, tmp_path / "cache")
    python, source = _labenv.find_lab_python()
    assert source == "cache"
    assert python.parent.parent.parent == tmp_path / "cache" / "plansmith"
    assert python.parent.parent.name.startswith("lab-venv-")
    assert python.parts[-2:] == ("bin", "python")


def test_the_pins_are_the_makefiles() -> None:
    assert _labenv.pins() == ["opentrons==9.1.2", "mcp==1.9.4", "pydantic<2.12"]
    makefile = (Path(__file__).resolve().parents[3] / "Makefile").read_text()
    assert "pip install --quiet -r $(LAB_REQUIREMENTS)" in makefile
    assert "LAB_REQUIREMENTS := src/plansmith/domains/lab/requirements-lab.txt" in makefile


def test_the_base_python_is_python311_on_path_else_this_one_if_it_is_a_311(
    tmp_path: Path,
) -> None:
    fake = _fake_python311(tmp_path / "bin")
    assert _labenv.find_base_python(str(tmp_path / "bin")) == fake
    empty = str(tmp_path / "nothing")
    assert _labenv.find_base_python(empty, ("/x/python", (3, 11, 7))) == Path("/x/python")
    assert _labenv.find_base_python(empty, ("/x/python", (3, 12, 1))) is None


def test_no_python311_is_a_typed_error_with_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cache_only(monkeypatch, tmp_path / "cache")
    monkeypatch.setattr(_labenv, "find_base_python", lambda path=None, current=None: None)
    with pytest.raises(ServerStartError) as raised:
        _labenv.ensure_lab_python(build=True, say=lambda _: None)
    assert "no python3.11 on PATH" in raised.value.message
    hint = raised.value.hint or ""
    assert "apt-get install python3.11 python3.11-venv" in hint
    assert "--lab-python" in hint
    assert "$PLANSMITH_LAB_PYTHON" in hint
    assert not (tmp_path / "cache" / "plansmith").exists()


def test_a_fake_python311_that_fails_leaves_nothing_a_later_run_would_take(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cache_only(monkeypatch, tmp_path / "cache")
    monkeypatch.setenv("PATH", str(_fake_python311(tmp_path / "bin").parent))
    said: list[str] = []
    for _ in range(2):  # the second run tries again: the first left nothing behind
        with pytest.raises(ServerStartError) as raised:
            _labenv.ensure_lab_python(build=True, say=said.append)
        assert "-m venv` failed (exit 1)" in raised.value.message
        assert "fake python3.11: refusing" in raised.value.message
        assert "python3.11" in (raised.value.hint or "")
        assert _left(tmp_path / "cache" / "plansmith") == []
    assert len(said) == 2
    assert str(tmp_path / "bin" / "python3.11") in said[0]  # which python it uses
    assert "pip install 'opentrons==9.1.2' 'mcp==1.9.4' 'pydantic<2.12'" in said[0]


def test_pip_failing_removes_the_half_made_venv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = _labenv.find_base_python()
    if base is None:  # pragma: no cover - python3.11 is what the lab venv needs anyway
        pytest.skip("no python3.11 to make a venv with")
    # no package index and no local wheels: pip cannot install anything (as offline)
    for name in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    venv = tmp_path / "cache" / "lab-venv-test"
    with pytest.raises(ServerStartError) as raised:
        _labenv.build_lab_venv(venv, base=base, say=lambda _: None)
    assert "`pip install 'opentrons==9.1.2'" in raised.value.message
    assert "package index" in (raised.value.hint or "")
    assert _left(tmp_path / "cache") == []


def test_demo_with_a_lab_python_that_does_not_exist_stops_before_planning(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PLANSMITH_LAB_PYTHON"}
    env.update(PATH="/nonexistent", XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run(
        [str(PLANSMITH), "demo", "--samples", "8", "--lab-python", str(tmp_path / "no-python")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 5, done.stderr
    assert "the lab server's python (--lab-python) is not usable" in done.stderr
    assert f"{tmp_path / 'no-python'} is missing" in done.stderr
    assert "hint:" in done.stderr
    assert not (tmp_path / "cache").exists()
    assert not (tmp_path / ".plansmith").exists()
