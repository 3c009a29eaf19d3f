"""Where the lab server's Python comes from, and building it where there is none.

The lab server runs in its own virtual environment (``requirements-lab.txt``:
``opentrons==9.1.2``, ``mcp==1.9.4``, ``pydantic<2.12``; opentrons 9.1.2 imports
on Python 3.11 only). :func:`find_lab_python` picks it, in this order:

1. the ``python`` given (``plansmith demo --lab-python PATH``), else the one
   ``$PLANSMITH_LAB_PYTHON`` names: used as it is, never built;
2. ``.venv-lab`` beside the sources, when plansmith runs from a checkout
   (``make lab-venv`` builds it, and so does :func:`ensure_lab_python`);
3. else ``lab-venv-<pins digest>`` in the user cache directory
   (``platformdirs.user_cache_dir("plansmith")``, e.g. ``~/.cache/plansmith``),
   which :func:`ensure_lab_python` creates on first use.

A build goes into a temporary folder beside the final one, which is renamed into
place only after the packages are installed and import; a failed build removes
its folder, so no later run takes a half-made environment for a good one. The
failure is one :class:`~plansmith.errors.ServerStartError` with a hint.

Standard library only at module level (plus ``plansmith.errors``): the
``plansmith-lab`` launcher imports this before it replaces itself with the lab
server.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from plansmith.errors import ServerStartError

__all__ = [
    "LAB_PYTHON_ENV",
    "REQUIREMENTS",
    "SERVER_SCRIPT",
    "Source",
    "pins",
    "checkout_root",
    "cache_venv",
    "find_lab_python",
    "find_base_python",
    "lab_venv_problem",
    "ensure_lab_python",
    "build_lab_venv",
]

_LAB_DIR = Path(__file__).resolve().parent
SERVER_SCRIPT = _LAB_DIR / "server.py"
#: the lab venv's pins, one a line: `make lab-venv` installs the same file
REQUIREMENTS = _LAB_DIR / "requirements-lab.txt"
#: names the lab venv's python (an installed plansmith, or another venv)
LAB_PYTHON_ENV = "PLANSMITH_LAB_PYTHON"
#: the Python the lab venv is made with: opentrons 9.1.2 imports on 3.11 only
BASE_VERSION = (3, 11)
#: written into a built venv last: a folder without it is not a lab venv
MARKER = ".plansmith-lab-venv"
_STAMP = ".installed-stamp"  # what `make lab-venv` touches when it is done

Source = Literal["option", "env", "checkout", "cache"]
Say = Callable[[str], None]


def pins() -> list[str]:
    """The requirements of the lab venv (``requirements-lab.txt`` without comments)."""
    lines = REQUIREMENTS.read_text(encoding="utf-8").splitlines()
    return [s for s in (line.split("#", 1)[0].strip() for line in lines) if s]


def checkout_root() -> Path | None:
    """The repository around the sources when plansmith runs from a checkout (an
    editable install), else None (an installed wheel)."""
    src = _LAB_DIR.parents[2]
    root = src.parent
    if src.name == "src" and (root / "pyproject.toml").is_file():
        return root
    return None


def cache_venv() -> Path:
    """The lab venv in the user cache directory, named by a digest of its pins (new
    pins: a new venv)."""
    from platformdirs import user_cache_dir  # noqa: PLC0415 (only where it is needed)

    digest = hashlib.sha256("\n".join(pins()).encode()).hexdigest()[:12]
    return Path(user_cache_dir("plansmith", appauthor=False)) / f"lab-venv-{digest}"


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def find_lab_python(python: str | Path | None = None) -> tuple[Path, Source]:
    """The lab server's python and where it came from (nothing is checked or built)."""
    named = os.environ.get(LAB_PYTHON_ENV)
    if python:
        return Path(python).expanduser(), "option"
    if named:
        return Path(named).expanduser(), "env"
    root = checkout_root()
    if root is not None:
        return _venv_python(root / ".venv-lab"), "checkout"
    return _venv_python(cache_venv()), "cache"


def find_base_python(
    path: str | None = None, current: tuple[str, tuple[int, ...]] | None = None
) -> Path | None:
    """A Python 3.11 to make the lab venv with: ``python3.11`` on ``path`` (default
    ``$PATH``), else this interpreter if it is a 3.11 (``current``: its executable and
    version, for tests)."""
    found = shutil.which("python3.11", path=path)
    if found:
        return Path(found)
    executable, version = current or (sys.executable, sys.version_info[:2])
    if executable and tuple(version[:2]) == BASE_VERSION:
        return Path(executable)
    return None


def lab_venv_problem(python: Path) -> str | None:
    """Why ``python`` cannot run the lab server, or None if it can."""
    if not python.exists():
        return f"{python} is missing"
    probe = (
        "import importlib.util as u, sys; "
        "sys.exit(0 if u.find_spec('opentrons') and u.find_spec('mcp') else 1)"
    )
    try:
        done = subprocess.run(
            [str(python), "-c", probe], capture_output=True, timeout=60, check=False
        )
    except OSError as error:
        return f"{python} does not run ({error.strerror or error})"
    if done.returncode != 0:
        return f"{python} cannot import opentrons and mcp"
    return None


def _quoted_pins() -> str:
    return " ".join(f"'{p}'" for p in pins())


def _point_elsewhere() -> str:
    return (
        f"or point `plansmith demo --lab-python PATH` or ${LAB_PYTHON_ENV} at a python that "
        f"has {_quoted_pins()} installed; see docs/lab.md"
    )


def ensure_lab_python(
    python: str | Path | None = None,
    *,
    build: bool = True,
    say: Say | None = None,
) -> Path:
    """The lab server's python, checked; built first (``build``) when it is the
    checkout's ``.venv-lab`` or the cache directory's venv and is missing or broken.

    Raises ServerStartError (with a hint) when there is none that works.
    """
    chosen, source = find_lab_python(python)
    problem = lab_venv_problem(chosen)
    if problem is None:
        return chosen
    if source in ("option", "env"):
        named = "--lab-python" if source == "option" else f"${LAB_PYTHON_ENV}"
        raise ServerStartError(
            f"the lab server's python ({named}) is not usable: {problem}",
            hint=f"name the python of a venv with {_quoted_pins()} installed "
            "(make lab-venv builds one in a checkout), or leave "
            f"{named} unset and plansmith builds one in its cache directory; see docs/lab.md",
        )
    venv = chosen.parent.parent
    if not build:
        raise ServerStartError(
            f"the lab server's virtual environment is not usable: {problem}",
            hint=(
                f"build it with `make -C {venv.parent} lab-venv`, "
                if source == "checkout"
                else "run `plansmith demo` once to build it, "
            )
            + _point_elsewhere(),
        )
    build_lab_venv(venv, say=say)
    return chosen


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _run(command: list[str], what: str, hint: str) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as error:
        raise ServerStartError(
            f"could not build the lab server's virtual environment: {what} did not run "
            f"({error.strerror or error})",
            hint=hint,
        ) from None
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout or "").strip().splitlines()[-6:])
        raise ServerStartError(
            f"could not build the lab server's virtual environment: {what} failed "
            f"(exit {done.returncode})" + (f":\n{tail}" if tail else ""),
            hint=hint,
        )


def build_lab_venv(
    venv: Path,
    *,
    base: Path | None = None,
    say: Say | None = None,
) -> Path:
    """Make the lab venv at ``venv`` with ``base`` (default: :func:`find_base_python`)
    and install the pins into it; its python.

    The venv is built in a temporary folder beside ``venv`` and renamed to it at the
    end; a failure removes that folder and raises ServerStartError.
    """
    say = say or _stderr
    base = base or find_base_python()
    install_python = (
        "install Python 3.11 with its venv module (Debian/Ubuntu: `apt-get install "
        "python3.11 python3.11-venv`; or `pyenv install 3.11`, `uv python install 3.11`) "
        "and put python3.11 on PATH, "
    )
    if base is None:
        raise ServerStartError(
            "could not build the lab server's virtual environment: no python3.11 on PATH "
            "(opentrons 9.1.2 imports on Python 3.11 only)",
            hint=install_python + _point_elsewhere(),
        )
    try:
        venv.parent.mkdir(parents=True, exist_ok=True)
        with _locked(venv.parent / f"{venv.name}.lock"):
            if lab_venv_problem(_venv_python(venv)) is None:  # another run built it meanwhile
                return _venv_python(venv)
            return _build(venv, base, say, install_python)
    except OSError as error:  # the cache folder cannot be written, the disk is full, ...
        raise ServerStartError(
            f"could not build the lab server's virtual environment in {venv}: "
            f"{error.strerror or error}",
            hint="make that folder writable (or set $XDG_CACHE_HOME to one that is), "
            + _point_elsewhere(),
        ) from None


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (several role servers starting at once on first
    use: one builds, the others wait and then take its venv)."""
    import fcntl  # noqa: PLC0415 (POSIX; the lab venv's layout, bin/python, is too)

    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(venv: Path, base: Path, say: Say, install_python: str) -> Path:
    say(
        f"plansmith: building the lab server's environment in {venv} (once; about a minute):\n"
        f"  {base} -m venv, then pip install {_quoted_pins()}"
    )
    started = time.perf_counter()
    building = Path(tempfile.mkdtemp(prefix=f"{venv.name}.building-", dir=venv.parent))
    try:
        _run(
            [str(base), "-m", "venv", "--clear", str(building)],
            f"`{base} -m venv`",
            install_python + _point_elsewhere(),
        )
        python = _venv_python(building)
        _run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
                str(REQUIREMENTS),
            ],
            f"`pip install {_quoted_pins()}`",
            "pip needs to reach the package index (check the network, a proxy, or pip's "
            "index settings in pip.conf / $PIP_INDEX_URL), " + _point_elsewhere(),
        )
        problem = lab_venv_problem(python)
        if problem is not None:
            raise ServerStartError(
                f"could not build the lab server's virtual environment: {problem}",
                hint=_point_elsewhere(),
            )
        (building / MARKER).write_text("\n".join(pins()) + "\n", encoding="utf-8")
        (building / _STAMP).touch()  # `make lab-venv` takes a checkout's .venv-lab as built
        if venv.exists() or venv.is_symlink():
            _remove(venv)  # a broken one (a working one was taken above)
        os.rename(building, venv)
    except BaseException:
        _remove(building)
        raise
    say(f"plansmith: the lab server's environment is ready ({time.perf_counter() - started:.0f} s)")
    return _venv_python(venv)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)
