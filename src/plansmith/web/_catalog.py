"""The domains a web app offers: the folders of ``--domains DIR`` (without it, the
domains plansmith ships, as ``plansmith mcp`` offers them).

A folder is a domain when it holds ``domain.yaml`` (or ``.yml``, ``.json``, ``.pddl``).
Its problems are the other YAML, JSON and PDDL files whose names start with
``problem``, and the files in its ``problems/`` folder. A folder's own ``servers.json``
and ``bindings.yaml`` win over the ``--servers`` and ``--bindings`` files.

A folder with ``domain.py`` and ``problems.py`` (and no domain file) is a GTPyhop
domain: its problems are the names of ``get_problems()`` (listed by
:mod:`plansmith.web._gtpyhop`); it can be planned and looked at, not run.

Whether a domain runs here is ``plansmith.domains.folders.inputs_readiness``, the rule
``plansmith mcp`` and ``plansmith domains`` use (a domain that makes its servers from a
request's inputs, as bio does, is ready with its bindings): if not, the card says why
and what fixes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from plansmith.domains.folders import GTPYHOP_READINESS, Readiness, inputs_readiness
from plansmith.domains.made import MadeDomain
from plansmith.errors import InputError

__all__ = [
    "DomainEntry",
    "find_domains",
    "domain_entries",
    "made_entry",
    "find_domain",
    "problem_file",
]

_DOMAIN_NAMES = ("domain.yaml", "domain.yml", "domain.json", "domain.pddl")
_PROBLEM_SUFFIXES = (".yaml", ".yml", ".json", ".pddl")


@dataclass(frozen=True, slots=True)
class DomainEntry:
    """A domain folder: its domain file, problems (by name), servers and bindings."""

    name: str
    folder: Path
    domain: Path
    problems: tuple[tuple[str, Path], ...]
    servers: Path | None
    bindings: Path | None
    #: A GTPyhop folder (``domain.py`` + ``problems.py``): planned, never run.
    gtpyhop: bool = False
    readiness: Readiness = GTPYHOP_READINESS
    #: A domain made by code (GTPyhop's Python domains plansmith ships): its problems
    #: are its scenarios, and its runs are made by its run maker.
    made: MadeDomain | None = None

    @property
    def runnable(self) -> bool:
        return self.readiness.ready

    def to_dict(self) -> dict[str, object]:
        kind = "made" if self.made is not None else "gtpyhop" if self.gtpyhop else "file"
        return {
            "name": self.name,
            "domain_file": self.domain.name,
            "problems": [name for name, _ in self.problems],
            "runnable": self.runnable,
            "kind": kind,
            "readiness": self.readiness.to_dict(),
        }


#: The problem names of a GTPyhop folder (given by the caller: listing them runs its code).
GtpyhopProblems = Callable[[Path], tuple[str, ...]]


def _problems(folder: Path) -> tuple[tuple[str, Path], ...]:
    found: dict[str, Path] = {}
    candidates = [p for p in folder.iterdir() if p.name.startswith("problem")]
    if (folder / "problems").is_dir():
        candidates += list((folder / "problems").iterdir())
    for path in sorted(candidates):
        if path.is_file() and path.suffix in _PROBLEM_SUFFIXES:
            found.setdefault(path.stem, path)
    return tuple(sorted(found.items()))


def _gtpyhop_entry(folder: Path, names: GtpyhopProblems | None) -> DomainEntry | None:
    if names is None or not all((folder / f).is_file() for f in ("domain.py", "problems.py")):
        return None
    problems = tuple((name, folder / "problems.py") for name in names(folder))
    return DomainEntry(folder.name, folder, folder / "domain.py", problems, None, None, True)


def _entry(
    folder: Path, servers: Path | None, bindings: Path | None, gtpyhop: GtpyhopProblems | None
) -> DomainEntry | None:
    domain = next((folder / n for n in _DOMAIN_NAMES if (folder / n).is_file()), None)
    if domain is None:
        return _gtpyhop_entry(folder, gtpyhop)
    own_servers = folder / "servers.json"
    own_bindings = folder / "bindings.yaml"
    servers = own_servers if own_servers.is_file() else servers
    bindings = own_bindings if own_bindings.is_file() else bindings
    return DomainEntry(
        name=folder.name,
        folder=folder,
        domain=domain,
        problems=_problems(folder),
        servers=servers,
        bindings=bindings,
        readiness=inputs_readiness(folder, folder.name, servers, bindings),
    )


def find_domains(
    root: Path | None,
    servers: Path | None = None,
    bindings: Path | None = None,
    gtpyhop: GtpyhopProblems | None = None,
) -> list[DomainEntry]:
    """The domain folders under ``root`` (``root`` itself too), sorted by name.

    GTPyhop folders are domains only when ``gtpyhop`` (which lists their problems) is given.
    """
    if root is None or not root.is_dir():
        return []
    folders = [root, *sorted(p for p in root.iterdir() if p.is_dir())]
    return domain_entries(folders, servers, bindings, gtpyhop)


def domain_entries(
    folders: Iterable[Path],
    servers: Path | None = None,
    bindings: Path | None = None,
    gtpyhop: GtpyhopProblems | None = None,
) -> list[DomainEntry]:
    """The domains among ``folders``, in their order (folders that are none are skipped)."""
    entries = [_entry(f, servers, bindings, gtpyhop) for f in folders]
    return [e for e in entries if e is not None]


def made_entry(made: MadeDomain) -> DomainEntry:
    """A domain made by code as a card of the index: its scenarios as its problems."""
    readiness = made.readiness
    notes = (made.description, *(f"{p.name}: {p.description}" for p in made.problems))
    return DomainEntry(
        name=made.name,
        folder=Path(made.name),
        domain=Path(f"{made.maker} (made by code)"),
        problems=tuple((p.name, Path(p.name)) for p in made.problems),
        servers=None,
        bindings=None,
        readiness=Readiness(readiness.ready, readiness.reason, readiness.fix, notes),
        made=made,
    )


def find_domain(entries: list[DomainEntry], name: str) -> DomainEntry | None:
    return next((e for e in entries if e.name == name), None)


def problem_file(entry: DomainEntry, problem: str) -> Path:
    for name, path in entry.problems:
        if name == problem:
            return path
    known = ", ".join(n for n, _ in entry.problems) or "none"
    raise InputError(
        f"domain {entry.name!r} has no problem {problem!r}", hint=f"its problems: {known}"
    )
