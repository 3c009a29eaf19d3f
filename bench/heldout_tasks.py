"""The held-out task suite of the classical benchmarks: 70 tasks from two PyPI packages.

A second task set, independent of the default one (bench/ipc_tasks.py), to check that a
change tuned on the default suite holds elsewhere. Like the default suite, no task file is
in the repository: this module fetches, at bench time, into the same cache (outside the
repository), with pinned sha256s, and writes the suite into a temporary directory renamed
into place (``ipc_tasks.install``):

- the wheel of ``amlgym==1.0.13`` (MIT; AMLGym, a benchmark of action-model learning,
  ships classical IPC-style domains and problems as package data): 16 domains, from each
  the solving problems 0, 5 and 9 (``amlgym/benchmarks/problems/solving/NAME/K_NAME_prob
  .pddl``) and the learning-hard problem 1 (``.../learning_hard/NAME/1_NAME_prob.pddl``),
  named ``NAME-s0``, ``NAME-s5``, ``NAME-s9``, ``NAME-h1``: 64 tasks. visitall has no
  learning-hard problem in the wheel; its fourth task is solving problem 7 (``visitall-s7``).
- IPC-2006 Storage from the ``pddl`` 0.5.1 sdist the default suite already fetches
  (``tests/fixtures/pddl_files/storage``, 30 problems): every fifth, p05 … p30, named
  ``storage-p05`` …: 6 tasks.

The files are written as shipped, but for one fix: amlgym's visitall problems name their
domain ``grid_visit_all`` where the domain file says ``grid-visit-all``, which pyperplan
rejects; the problems' ``(:domain …)`` is set to the domain file's name (recorded in
SOURCE.json). pyperplan 2.1 does not read matchingbw's problems (they declare
``:requirements``, which its problem parser rejects), so it is not run there (``pyperplan``
= ``n`` in ``expected.csv``); it reads the rest (amlgym's childsnack has no negative
preconditions, and it reads Storage's ``either`` types).

  CACHE/amlgym-1.0.13-py3-none-any.whl      the wheel, as downloaded
  CACHE/heldout-amlgym-1.0.13/               the suite (SUITE below):
  SUITE/DOMAIN/domain.pddl                   each domain, as shipped
  SUITE/DOMAIN/DOMAIN-s0.pddl                its tasks
  SUITE/expected.csv                         domain, problem, optimal_length, pyperplan
  SUITE/SOURCE.json                          packages, versions, sha256s, each file's origin
  SUITE/LICENSE-amlgym.txt                   the wheel's licence
  SUITE/LICENSE-pddl.txt                     the sdist's licence

Usage: .venv/bin/python bench/heldout_tasks.py [--cache DIR] [--refresh] [--check]
Prints the suite's directory and its tasks; ``--check`` parses each with plansmith's reader.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import ipc_tasks

AMLGYM = "amlgym"
AMLGYM_VERSION = "1.0.13"
WHEEL = f"{AMLGYM}-{AMLGYM_VERSION}-py3-none-any.whl"
#: sha256 of the wheel on PyPI (pip checks it too: ``--require-hashes``)
WHEEL_SHA256 = "8eb9df343990d68560d8319dbb5557a59a7c13339de1cd433c2d054851b37ee0"
WHEEL_LICENSE = f"{AMLGYM}-{AMLGYM_VERSION}.dist-info/licenses/LICENSE.md"
BENCHMARKS = "amlgym/benchmarks"
#: bumped when what the suite holds changes, so an older cached suite is rebuilt
LAYOUT = 3
SUITE_NAME = f"heldout-{AMLGYM}-{AMLGYM_VERSION}"

AMLGYM_DOMAINS = [
    "barman",
    "childsnack",
    "elevators",
    "ferry",
    "floortile",
    "goldminer",
    "matchingbw",
    "nomystery",
    "npuzzle",
    "parking",
    "rovers",
    "sokoban",
    "spanner",
    "tpp",
    "transport",
    "visitall",
]
#: the tasks taken from each amlgym domain: task suffix -> (problem set, problem number)
PICKS = {"s0": ("solving", 0), "s5": ("solving", 5), "s9": ("solving", 9)}
HARD = {"h1": ("learning_hard", 1)}
#: the wheel has no learning-hard visitall problem: its fourth task instead
STAND_IN = {"visitall": {"s7": ("solving", 7)}}
STORAGE_FOLDER = f"{ipc_tasks.FIXTURES}/storage"
STORAGE_PROBLEMS = ("p05", "p10", "p15", "p20", "p25", "p30")
#: domains pyperplan 2.1 cannot read, and why
NO_PYPERPLAN = {"matchingbw": "its problems declare :requirements (pyperplan rejects it)"}
_DOMAIN_NAME = re.compile(r"\(\s*define\s*\(\s*domain\s+([^\s()]+)", re.IGNORECASE)
_PROBLEM_DOMAIN = re.compile(r"\(\s*:domain\s+([^\s()]+)\s*\)", re.IGNORECASE)


@dataclass(frozen=True)
class Pick:
    domain: str
    task: str  # the task's name, e.g. goldminer-s0
    origin: str  # the path inside the archive


def amlgym_picks(domain: str) -> list[Pick]:
    """The tasks taken from one amlgym domain."""
    chosen = {**PICKS, **STAND_IN.get(domain, HARD)}
    return [
        Pick(
            domain,
            f"{domain}-{suffix}",
            f"{BENCHMARKS}/problems/{kind}/{domain}/{k}_{domain}_prob.pddl",
        )
        for suffix, (kind, k) in chosen.items()
    ]


def storage_picks() -> list[Pick]:
    return [Pick("storage", f"storage-{p}", f"{STORAGE_FOLDER}/{p}.pddl") for p in STORAGE_PROBLEMS]


class _Writer:
    """Writes files into the suite and remembers where each came from."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.files: dict[str, dict[str, str]] = {}
        self.rows: list[dict[str, str]] = []

    def put(self, relative: str, text: str, origin: str, written: str | None = None) -> None:
        """``written`` (default: ``text``, the file as shipped) into ``out/relative``."""
        path = self.out / relative
        path.parent.mkdir(exist_ok=True)
        path.write_text(text if written is None else written)
        sha = hashlib.sha256(text.encode()).hexdigest()
        self.files[relative] = {"from": origin, "sha256": sha}
        if written is not None and written != text:
            self.files[relative]["changed"] = "(:domain ...) set to the domain file's name"

    def task(self, pick: Pick, text: str, domain_text: str) -> None:
        written = _PROBLEM_DOMAIN.sub(f"(:domain {domain_name(domain_text)})", text, count=1)
        self.put(f"{pick.domain}/{pick.task}.pddl", text, pick.origin, written)
        row = {"domain": pick.domain, "problem": f"{pick.task}.pddl", "optimal_length": ""}
        self.rows.append({**row, "pyperplan": "n" if pick.domain in NO_PYPERPLAN else "y"})


def domain_name(domain_text: str) -> str:
    found = _DOMAIN_NAME.search(domain_text)
    if found is None:
        raise SystemExit("a domain file without (define (domain NAME) ...)")
    return found.group(1)


def _from_wheel(wheel: Path, writer: _Writer) -> None:
    with zipfile.ZipFile(wheel) as archive:

        def read(name: str) -> str:
            try:
                return archive.read(name).decode("utf-8")
            except KeyError:
                raise SystemExit(f"{WHEEL}: {name} missing") from None

        (writer.out / "LICENSE-amlgym.txt").write_text(read(WHEEL_LICENSE))
        for domain in AMLGYM_DOMAINS:
            origin = f"{BENCHMARKS}/domains/{domain}.pddl"
            domain_text = read(origin)
            writer.put(f"{domain}/domain.pddl", domain_text, origin)
            for pick in amlgym_picks(domain):
                writer.task(pick, read(pick.origin), domain_text)


def _from_sdist(sdist: Path, writer: _Writer) -> None:
    with tarfile.open(sdist, "r:gz") as tar:

        def read(name: str) -> str:
            member = tar.extractfile(name)
            if member is None:
                raise SystemExit(f"{ipc_tasks.SDIST}: {name} missing")
            return member.read().decode("utf-8")

        (writer.out / "LICENSE-pddl.txt").write_text(read(ipc_tasks.LICENSE))
        origin = f"{STORAGE_FOLDER}/domain.pddl"
        domain_text = read(origin)
        writer.put("storage/domain.pddl", domain_text, origin)
        for pick in storage_picks():
            writer.task(pick, read(pick.origin), domain_text)


def _manifest(writer: _Writer) -> dict[str, object]:
    return {
        "layout": LAYOUT,
        "sha256": WHEEL_SHA256,
        "packages": [
            {
                "package": AMLGYM,
                "version": AMLGYM_VERSION,
                "file": WHEEL,
                "sha256": WHEEL_SHA256,
                "license": "MIT (the wheel's LICENSE.md, copied as LICENSE-amlgym.txt)",
                "domains": AMLGYM_DOMAINS,
            },
            {
                "package": ipc_tasks.PACKAGE,
                "version": ipc_tasks.VERSION,
                "file": ipc_tasks.SDIST,
                "sha256": ipc_tasks.SHA256,
                "license": "MIT (the sdist's LICENSE, copied as LICENSE-pddl.txt)",
                "domains": ["storage (IPC-2006 Storage, propositional)"],
            },
        ],
        "stand-ins": {"visitall-s7": "the wheel has no learning_hard problem for visitall"},
        "not run by pyperplan": NO_PYPERPLAN,
        "files": writer.files,
    }


def _write_suite(wheel: Path, sdist: Path, out: Path) -> None:
    writer = _Writer(out)
    _from_wheel(wheel, writer)
    _from_sdist(sdist, writer)
    ipc_tasks.write_expected(out, writer.rows)
    (out / "SOURCE.json").write_text(json.dumps(_manifest(writer), indent=1) + "\n")


def ensure(cache: Path | None = None, *, refresh: bool = False) -> Path:
    """The held-out suite's directory, fetched and written first if needed."""
    cache = cache or ipc_tasks.cache_dir()
    suite = cache / SUITE_NAME
    if not refresh and ipc_tasks.is_current(suite, LAYOUT, WHEEL_SHA256):
        return suite
    pin = f"{AMLGYM}=={AMLGYM_VERSION}"
    wheel = ipc_tasks.pip_download(cache, pin, WHEEL, WHEEL_SHA256, sdist=False)
    sdist = ipc_tasks.download(cache)
    return ipc_tasks.install(
        cache, SUITE_NAME, lambda out: _write_suite(wheel, sdist, out), LAYOUT, WHEEL_SHA256
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cache", type=Path, help=f"default: {ipc_tasks.cache_dir()}")
    parser.add_argument("--refresh", action="store_true", help="write the suite again")
    parser.add_argument("--check", action="store_true", help="parse each task with plansmith")
    args = parser.parse_args()
    suite = ensure(args.cache, refresh=args.refresh)
    tasks = ipc_tasks.load(suite)
    print(f"{suite} ({len(tasks)} tasks)")
    for domain in dict.fromkeys(t.domain for t in tasks):
        names = " ".join(t.name.removeprefix(f"{domain}-") for t in tasks if t.domain == domain)
        note = f" (not run by pyperplan: {NO_PYPERPLAN[domain]})" if domain in NO_PYPERPLAN else ""
        print(f"  {domain}: {names}{note}")
    return ipc_tasks.check(tasks) if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
