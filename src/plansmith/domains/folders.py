"""Domain folders: ``domain.yaml`` plus, optionally, ``problem.yaml`` (default objects
and initial state), ``bindings.yaml`` and ``servers.json`` (what running needs).

The shipped catalog (``shipped_domain_dirs``) is the domains that run: bio, code,
research, the lab's PCR domain and the notes-to-git example. The plan-only examples
(doc-pipeline, lab-prep) are not in it: ``plansmith plan`` plans them from their folders.
Each folder says whether it can run here (``readiness``): if not, why and what fixes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from plansmith.binding import Bindings, load_bindings
from plansmith.domains._readiness import (
    GTPYHOP_READINESS,
    Readiness,
    optional_notes,
    readiness_of,
)
from plansmith.domains.requests import request_inputs
from plansmith.errors import InputError, Location
from plansmith.formats import load_domain, load_problem, parse_problem
from plansmith.model import Domain, Problem, TypedName

__all__ = [
    "DomainFolder",
    "load_folders",
    "shipped_domain_dirs",
    "problem_of",
    "objects_of",
    "Readiness",
    "readiness_of",
    "inputs_readiness",
    "GTPYHOP_READINESS",
]

_PACKAGE = Path(__file__).resolve().parent.parent

NOT_CHECKED = Readiness(False, "not checked", "load the folder with load_folders")

#: the shipped domains that run, in the catalog's order (folders under the package)
_SHIPPED = (
    "domains/bio",
    "domains/code",
    "domains/lab/pcr",
    "domains/research",
    "examples/notes-to-git",
)


@dataclass(frozen=True, slots=True)
class DomainFolder:
    name: str
    path: Path
    domain: Domain
    problem: Problem | None = None
    bindings: Bindings | None = None
    readiness: Readiness = NOT_CHECKED

    @property
    def domain_file(self) -> Path:
        return self.path / "domain.yaml"

    @property
    def bindings_file(self) -> Path:
        return self.path / "bindings.yaml"

    @property
    def servers_file(self) -> Path:
        return self.path / "servers.json"

    @property
    def runnable(self) -> bool:
        return self.readiness.ready

    def check_readiness(self) -> Readiness:
        """Whether the folder runs here now (``readiness`` is as it was when loaded).

        A domain that takes inputs (bio) makes its servers per request from them: it is
        ready when it has bindings, with a note of what a request must name."""
        servers = self.servers_file
        bindings = self.bindings_file if self.bindings is not None else None
        return inputs_readiness(self.path, self.name, servers, bindings)


def inputs_readiness(
    folder: Path, name: str, servers: Path | None, bindings: Path | None
) -> Readiness:
    """Whether the domain folder ``folder`` runs here with these servers and bindings
    files: ``readiness_of``, except that a domain that takes inputs and makes its servers
    per request from them (bio) is ready when it has both files, with a note of what a
    request must name."""
    servers = servers if servers is not None and servers.is_file() else None
    maker = request_inputs(folder)
    if maker is not None and bindings is not None and servers is not None:
        names = ", ".join(f"{i.name} ({i.description})" for i in maker.inputs)
        takes = f"a request names its inputs: {names}"
        if maker.makes_servers:
            return Readiness(True, notes=(takes, *optional_notes(servers)))
        found = readiness_of(name, servers, bindings)
        return replace(found, notes=(takes, *found.notes)) if found.ready else found
    return readiness_of(name, servers, bindings)


def shipped_domain_dirs() -> list[Path]:
    """The shipped domain folders that run (some may not be ready here: see readiness)."""
    return [_PACKAGE / d for d in _SHIPPED if (_PACKAGE / d / "domain.yaml").is_file()]


def _folder(path: Path) -> DomainFolder:
    domain = load_domain(path / "domain.yaml")
    problem_file = path / "problem.yaml"
    problem = load_problem(problem_file, domain) if problem_file.is_file() else None
    bindings_file = path / "bindings.yaml"
    bindings = load_bindings(bindings_file) if bindings_file.is_file() else None
    folder = DomainFolder(path.name, path, domain, problem, bindings)
    return replace(folder, readiness=folder.check_readiness())


def load_folders(dirs: Iterable[Path]) -> dict[str, DomainFolder]:
    """Each folder with a ``domain.yaml``, by folder name; ``dirs`` may also be parents."""
    folders: dict[str, DomainFolder] = {}
    for d in dirs:
        candidates = [d] if (d / "domain.yaml").is_file() else sorted(d.glob("*/domain.yaml"))
        for path in (c if c.is_dir() else c.parent for c in candidates):
            if path.name in folders:
                raise InputError(
                    f"two domain folders are named {path.name!r}",
                    location=Location(str(path)),
                    hint="rename one of the folders",
                )
            folders[path.name] = _folder(path)
    return folders


def problem_of(
    folder: DomainFolder,
    *,
    goal: Sequence[str] = (),
    tasks: Sequence[str] = (),
    objects: Mapping[str, str] | None = None,
    init: Sequence[str] | None = None,
) -> tuple[str, Problem]:
    """The problem text for a request, parsed (and so validated) like a user's file.

    Objects and init default to the folder's ``problem.yaml``.
    """
    base = folder.problem
    if objects is None:
        objects = {o.name: o.type for o in base.objects} if base else {}
    if init is None:
        init = sorted(str(a) for a in base.init) if base else []
    if not goal and not tasks:
        raise InputError(
            "make_plan needs a goal, tasks or a request",
            hint='pass goal=["pred(obj)"], tasks=["task(obj)"] or request="..."',
        )
    data: dict[str, object] = {
        "problem": f"{folder.name}-request",
        "domain": folder.domain.name,
        "objects": dict(objects),
        "init": list(init),
    }
    if goal:
        data["goal"] = list(goal)
    if tasks:
        data["tasks"] = list(tasks)
    text = yaml.safe_dump(data, sort_keys=False)
    return text, parse_problem(text, folder.domain, file="make_plan")


def objects_of(folder: DomainFolder, objects: Mapping[str, str] | None) -> tuple[TypedName, ...]:
    """The request's objects, else the folder's ``problem.yaml`` objects."""
    if objects is not None:
        return tuple(TypedName(str(k), str(v)) for k, v in objects.items())
    return folder.problem.objects if folder.problem else ()
