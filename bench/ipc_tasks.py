"""The default task suite of the classical benchmarks: IPC tasks from the ``pddl`` sdist.

plansmith is Apache-2.0 and commits no IPC task. The benchmarks take them, at bench time,
from a package of the Python package index: the source distribution of ``pddl==0.5.1``
(MIT-licensed; its test fixtures, ``tests/fixtures/pddl_files/``, hold IPC domains and
problems). This module downloads that sdist with pip into a cache outside the repository,
checks its sha256, and writes the suite there:

  CACHE/pddl-0.5.1.tar.gz                   the sdist, as downloaded
  CACHE/pddl-0.5.1/DOMAIN/domain.pddl       each kept domain (STRIPS, unit costs)
  CACHE/pddl-0.5.1/DOMAIN/pNN.pddl          its problems
  CACHE/pddl-0.5.1/expected.csv             domain, problem, optimal_length, pyperplan
  CACHE/pddl-0.5.1/SOURCE.json              where each file comes from, what was changed
  CACHE/pddl-0.5.1/LICENSE-pddl.txt         the sdist's licence

The suite is written into a temporary directory and renamed into place, so an interrupted
fetch leaves no half-made suite (a stray temporary directory at most, removed by the next
fetch). CACHE is ``$PLANSMITH_BENCH_CACHE``, else platformdirs' user cache directory of
plansmith plus ``/bench`` (``~/.cache/plansmith/bench`` on Linux).

Of the fixtures' 29 folders, three are classical tasks that both plansmith's reader and
the peers read (see ``DOMAINS``); the rest are fully observable non-deterministic (FOND)
domains, numeric ones, or use features plansmith does not read (``SKIPPED``). Barman and
Sokoban come from the IPC-2011 optimal track with action costs; the suite removes the
costs (the ``total-cost`` function, its ``increase`` effects, its initial value and the
metric), as pyperplan did for its IPC-2008 domains, so every planner solves the same
unit-cost task and a plan's cost is its length. pyperplan 2.1 does not read negative
preconditions, so childsnack is run by plansmith and Fast Downward only
(``pyperplan`` = ``n`` in ``expected.csv``). ``optimal_length`` is left empty: the sdist
gives none for the unit-cost tasks; bench_astar.py takes Fast Downward's A* + LM-cut plan
length in the same run as the reference.

A suite of your own (``--suite DIR`` of the benchmarks, or ``$PLANSMITH_PDDL_BENCHMARKS``)
has the same layout: ``DOMAIN/domain.pddl`` and problem files beside it, with an optional
``expected.csv`` (columns ``domain``, ``problem``, and optionally ``optimal_length`` and
``pyperplan``); without it every other ``*.pddl`` file of a domain folder is a task.

Usage: .venv/bin/python bench/ipc_tasks.py [--cache DIR] [--refresh] [--check] [--skipped]
Prints the suite's directory and its tasks; ``--check`` parses each with plansmith's reader.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

PACKAGE = "pddl"
VERSION = "0.5.1"
SDIST = f"{PACKAGE}-{VERSION}.tar.gz"
#: sha256 of the sdist on PyPI (pip checks it too: ``--require-hashes``)
SHA256 = "2c72b72de4bd4298cca1583f34488fba09df15b132ae5346eb9d8eefb127625d"
FIXTURES = f"{PACKAGE}-{VERSION}/tests/fixtures/pddl_files"
LICENSE = f"{PACKAGE}-{VERSION}/LICENSE"
SUITE_NAME = f"{PACKAGE}-{VERSION}"
#: bumped when what the suite holds changes, so an older cached suite is rebuilt
LAYOUT = 1


@dataclass(frozen=True)
class Source:
    folder: str  # in the sdist's fixtures
    what: str
    strip_costs: bool = False
    pyperplan: bool = True


#: the kept domains, by the name the benchmarks print
DOMAINS = {
    "barman": Source(
        "barman-sequential-optimal", "IPC-2011 Barman, optimal track", strip_costs=True
    ),
    "childsnack": Source(
        "childsnack",
        "IPC-2014 Childsnack (negative preconditions: pyperplan 2.1 cannot read it)",
        pyperplan=False,
    ),
    "sokoban": Source(
        "sokoban-sequential-optimal", "IPC-2008/2011 Sokoban, optimal track", strip_costs=True
    ),
}

#: the fixtures' other folders, and why the suite leaves them out
SKIPPED = {
    "acrobatics": "FOND (oneof effects)",
    "beam-walk": "FOND (oneof effects)",
    "block-grouping": "numeric fluents",
    "blocksworld-ipc08": "FOND (IPC-2008 FOND track)",
    "blocksworld_fond": "FOND",
    "cave-diving-sequential-optimal": "universally quantified effects, numeric fluents",
    "depots-numeric-automatic": "numeric fluents",
    "doors": "FOND (oneof effects)",
    "drone": "numeric fluents",
    "earth_observation": "FOND; its domain declares action 'slew' twice",
    "elevators": "FOND (oneof effects)",
    "faults-ipc08": "FOND (IPC-2008 FOND track)",
    "first-responders-ipc08": "FOND (IPC-2008 FOND track)",
    "hello-world-functions": "numeric fluents",
    "islands": "FOND (oneof effects)",
    "maintenance-sequential-satisficing-ipc2014": "universally quantified effects",
    "miner": "FOND (oneof effects)",
    "rovers-numeric-automatic": "numeric fluents",
    "rovers_fond": "FOND",
    "social-planning": "derived predicates; no problem files",
    "spiky-tireworld": "FOND; its domain uses an undeclared predicate",
    "storage": "'either' types (plansmith and pyperplan do not read them)",
    "tireworld": "FOND (oneof effects)",
    "tireworld-truck": "FOND (oneof effects)",
    "triangle-tireworld": "FOND (oneof effects)",
    "zenotravel": "FOND (oneof effects)",
}

_COST_PATTERNS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\(\s*increase\s*\(\s*total-cost\s*\)\s*[^()]*\)",
        r"\(\s*=\s*\(\s*total-cost\s*\)\s*[^()]*\)",
        r"\(\s*:metric\s+\w+\s*\(\s*total-cost\s*\)\s*\)",
        r"\(\s*:functions\s*\(\s*total-cost\s*\)\s*(-\s*number\s*)?\)",
        r":action-costs\b",
    )
]


def strip_costs(text: str) -> str:
    """``text`` without action costs: the unit-cost STRIPS task."""
    for pattern in _COST_PATTERNS:
        text = pattern.sub("", text)
    if "total-cost" in text.lower():
        raise ValueError("total-cost left after removing the action costs")
    return text


@dataclass(frozen=True)
class Task:
    domain: str
    name: str  # the problem file's stem
    domain_file: Path
    problem_file: Path
    optimal: int | None = None  # the optimal plan length, where known
    pyperplan: bool = True  # pyperplan 2.1 reads it

    @property
    def label(self) -> str:
        return f"{self.domain}/{self.name}"


def cache_dir() -> Path:
    """Where the sdist and the suite are kept: never inside the repository."""
    if env := os.environ.get("PLANSMITH_BENCH_CACHE"):
        return Path(env).expanduser()
    try:
        import platformdirs
    except ImportError:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "plansmith"
    else:
        base = Path(platformdirs.user_cache_dir("plansmith"))
    return base / "bench"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def pip_download(cache: Path, pin: str, filename: str, sha256: str, *, sdist: bool) -> Path:
    """``filename``, the sdist or wheel of ``pin`` (``NAME==VERSION``), in ``cache``: pip
    downloads it from the package index if it is not there yet; its sha256 is checked."""
    target = cache / filename
    if target.is_file() and sha256_of(target) == sha256:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".download-") as tmp:
        requirements = Path(tmp) / "requirements.txt"
        requirements.write_text(f"{pin} --hash=sha256:{sha256}\n")
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        cmd += ["--no-binary" if sdist else "--only-binary", ":all:"]
        cmd += ["--require-hashes", "-r", str(requirements), "--dest", tmp]
        kind = "sdist" if sdist else "wheel"
        print(f"downloading {pin} ({kind}) into {cache}", file=sys.stderr)
        subprocess.run(cmd, check=True)
        fetched = Path(tmp) / filename
        if not fetched.is_file() or sha256_of(fetched) != sha256:
            raise SystemExit(f"{filename}: not downloaded, or its sha256 is not {sha256}")
        os.replace(fetched, target)
    return target


def download(cache: Path) -> Path:
    """The sdist in ``cache``, downloaded by pip if it is not there yet; sha256 checked."""
    return pip_download(cache, f"{PACKAGE}=={VERSION}", SDIST, SHA256, sdist=True)


def write_expected(out: Path, rows: list[dict[str, str]]) -> None:
    """``out/expected.csv``: the suite's tasks, in the columns ``load`` reads."""
    with (out / "expected.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, ["domain", "problem", "optimal_length", "pyperplan"])
        writer.writeheader()
        writer.writerows(rows)


def _write_suite(sdist: Path, out: Path) -> None:
    rows = []
    files: dict[str, dict[str, str]] = {}
    with tarfile.open(sdist, "r:gz") as tar:

        def read(name: str) -> str:
            member = tar.extractfile(name)
            if member is None:
                raise SystemExit(f"{SDIST}: {name} missing")
            return member.read().decode("utf-8")

        names = set(tar.getnames())
        (out / "LICENSE-pddl.txt").write_text(read(LICENSE))
        for domain, source in DOMAINS.items():
            folder = f"{FIXTURES}/{source.folder}"
            problems = sorted(
                n.rsplit("/", 1)[1]
                for n in names
                if n.startswith(folder + "/") and re.fullmatch(r"p\d+\.pddl", n.rsplit("/", 1)[1])
            )
            (out / domain).mkdir()
            for name in ["domain.pddl", *problems]:
                text = read(f"{folder}/{name}")
                (out / domain / name).write_text(strip_costs(text) if source.strip_costs else text)
                files[f"{domain}/{name}"] = {
                    "from": f"{folder}/{name}",
                    "sha256": hashlib.sha256(text.encode()).hexdigest(),
                }
            rows += [
                {
                    "domain": domain,
                    "problem": name,
                    "optimal_length": "",
                    "pyperplan": "y" if source.pyperplan else "n",
                }
                for name in problems
            ]
    write_expected(out, rows)
    manifest = {
        "layout": LAYOUT,
        "package": f"{PACKAGE}=={VERSION}",
        "sdist": SDIST,
        "sha256": SHA256,
        "license": "MIT (the pddl package's LICENSE, copied as LICENSE-pddl.txt)",
        "domains": {
            d: {"from": s.folder, "what": s.what, "action costs removed": s.strip_costs}
            for d, s in DOMAINS.items()
        },
        "files": files,
    }
    (out / "SOURCE.json").write_text(json.dumps(manifest, indent=1) + "\n")


def is_current(suite: Path, layout: int, sha256: str) -> bool:
    """``suite`` was written, in this ``layout``, from the archive of this ``sha256``."""
    try:
        manifest = json.loads((suite / "SOURCE.json").read_text())
    except (OSError, ValueError):
        return False
    return bool(manifest.get("layout") == layout and manifest.get("sha256") == sha256)


def install(cache: Path, name: str, write: Callable[[Path], None], layout: int, sha: str) -> Path:
    """``cache/name``, written by ``write`` into a temporary directory renamed into place."""
    suite = cache / name
    for stale in cache.glob(f".{name}-*"):  # left by an interrupted fetch
        if time.time() - stale.stat().st_mtime > 3600:  # not one being written now
            shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(dir=cache, prefix=f".{name}-"))
    try:
        write(tmp)
        tmp.chmod(0o755)  # mkdtemp made it private
        if suite.exists():  # out of date, or --refresh: move it aside, then drop it
            old = Path(tempfile.mkdtemp(dir=cache, prefix=f".{name}-old-"))
            os.replace(suite, old / "suite")
            shutil.rmtree(old, ignore_errors=True)
        try:
            os.rename(tmp, suite)
        except OSError:  # another process wrote it first
            if not is_current(suite, layout, sha):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return suite


def ensure(cache: Path | None = None, *, refresh: bool = False) -> Path:
    """The default suite's directory, fetched and written first if needed."""
    cache = cache or cache_dir()
    suite = cache / SUITE_NAME
    if not refresh and is_current(suite, LAYOUT, SHA256):
        return suite
    sdist = download(cache)
    return install(cache, SUITE_NAME, lambda out: _write_suite(sdist, out), LAYOUT, SHA256)


def selected(task: Task, patterns: list[str]) -> bool:
    """``patterns`` (shell patterns) match the domain or ``domain/problem``; none: all."""
    return not patterns or any(
        fnmatchcase(task.domain, p) or fnmatchcase(task.label, p) for p in patterns
    )


def load(suite: Path, patterns: list[str] | None = None) -> list[Task]:
    """The tasks of ``suite`` (the layout above), those ``patterns`` select."""
    listing = suite / "expected.csv"
    tasks = []
    if listing.is_file():
        with listing.open(newline="") as f:
            for row in csv.DictReader(f):
                folder = suite / row["domain"]
                optimal = (row.get("optimal_length") or "").strip()
                tasks.append(
                    Task(
                        row["domain"],
                        Path(row["problem"]).stem,
                        folder / "domain.pddl",
                        folder / row["problem"],
                        int(optimal) if optimal else None,
                        (row.get("pyperplan") or "y").strip().lower() not in {"n", "no"},
                    )
                )
    else:
        for folder in sorted(p for p in suite.iterdir() if (p / "domain.pddl").is_file()):
            tasks.extend(
                Task(folder.name, problem.stem, folder / "domain.pddl", problem)
                for problem in sorted(folder.glob("*.pddl"))
                if not problem.stem.startswith("domain")
            )
    if not tasks:
        raise SystemExit(f"{suite}: no tasks (expected DOMAIN/domain.pddl and problems)")
    return [t for t in tasks if selected(t, patterns or [])]


def resolve(suite: Path | None) -> Path:
    """``--suite`` if given, else ``$PLANSMITH_PDDL_BENCHMARKS``, else the default suite.

    ``--suite heldout`` is the held-out suite of bench/heldout_tasks.py, fetched if needed.
    """
    if suite is None and (env := os.environ.get("PLANSMITH_PDDL_BENCHMARKS")):
        suite = Path(env)
    if suite is not None and str(suite) == "heldout":
        import heldout_tasks

        return heldout_tasks.ensure()
    if suite is None:
        return ensure()
    # absolute: the planners run in temporary working directories
    return suite.expanduser().resolve()


def add_suite_option(parser: argparse.ArgumentParser, *flags: str) -> None:
    parser.add_argument(
        *(flags or ("--suite",)),
        dest="suite",
        type=Path,
        metavar="DIR",
        help="your own tasks (DOMAIN/domain.pddl + problems, optional expected.csv), or "
        "'heldout' (bench/heldout_tasks.py); default: $PLANSMITH_PDDL_BENCHMARKS, else the "
        f"pddl sdist's IPC tasks (fetched into {cache_dir()})",
    )


def check(tasks: list[Task]) -> int:
    from plansmith.formats import load_domain, load_problem

    bad = 0
    for task in tasks:
        try:
            load_problem(task.problem_file, load_domain(task.domain_file))
        except Exception as exc:
            bad += 1
            print(f"{task.label}: {str(exc).splitlines()[0]}")
    print(f"plansmith's reader: {len(tasks) - bad}/{len(tasks)} tasks read")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cache", type=Path, help=f"default: {cache_dir()}")
    parser.add_argument("--refresh", action="store_true", help="write the suite again")
    parser.add_argument("--check", action="store_true", help="parse each task with plansmith")
    parser.add_argument("--skipped", action="store_true", help="the folders left out, and why")
    add_suite_option(parser)
    args = parser.parse_args()
    if args.skipped:
        for folder, why in SKIPPED.items():
            print(f"{folder:<44} {why}")
        return 0
    suite = args.suite or ensure(args.cache, refresh=args.refresh)
    tasks = load(suite)
    print(suite)
    for domain in dict.fromkeys(t.domain for t in tasks):
        mine = [t for t in tasks if t.domain == domain]
        note = "" if all(t.pyperplan for t in mine) else " (not run by pyperplan)"
        print(f"  {domain}: {len(mine)} tasks{note}")
    return check(tasks) if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
