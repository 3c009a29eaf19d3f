"""A request's inputs, read for any face: the files (and folders, values) a request is
given (``inputs``) or that its text names, made into the problem's objects and facts and
the runs' servers by the domain's ``RequestInputs`` (see ``plansmith.domains.requests``).

The MCP face (``make_plan``) and the web face (``/api/plan``, ``/api/runs``) both read
them here. Relative paths are read from ``base`` (the face's working folder). A domain
that takes no inputs refuses them; a goal whose inputs are missing gets one typed answer
that lists them (``RequestFiles.check_needed``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from plansmith.domains.folders import DomainFolder
from plansmith.domains.requests import (
    PreparedRequest,
    RequestInputs,
    inputs_in_text,
    missing_inputs_error,
    request_inputs,
)
from plansmith.errors import InputError, Location

__all__ = ["RequestFiles", "read_inputs", "read_request_inputs"]

_NO_INPUTS_HINT = "pass its objects and init instead (describe_domain lists them)"


@dataclass(frozen=True, slots=True)
class RequestFiles:
    """What a request's inputs made: the text with each file named by its input, the
    objects and init they give, and where the runs' servers file is (None: the folder's)."""

    maker: RequestInputs | None = None
    request: str | None = None
    given: Mapping[str, Path] = field(default_factory=dict)
    prepared: PreparedRequest | None = None
    servers_file: Path | None = None
    values: Mapping[str, str] = field(default_factory=dict)

    def objects_to_match(self) -> dict[str, str] | None:
        """The objects a request is matched over: the inputs given, or, with none, every
        input the domain takes (so that the goal, and what it lacks, can be told)."""
        if self.prepared is not None:
            return dict(self.prepared.objects)
        if self.maker is not None:
            return {s.name: s.type for s in self.maker.inputs}
        return None

    def check_needed(self, domain: str, goal: Sequence[str]) -> None:
        """Raise the typed ``InputError`` that lists the inputs ``goal`` (none: the job
        the inputs make) needs and the request did not give."""
        if self.maker is None:
            return
        missing = [
            n for n in self.maker.needed(goal) if n not in self.given and n not in self.values
        ]
        if missing:
            what = "this goal" if goal else "this job"
            raise missing_inputs_error(domain, self.maker.inputs, missing, what=what)


def _given(inputs: Mapping[str, str], base: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for name, value in inputs.items():
        path = Path(str(value)).expanduser()
        out[str(name)] = (path if path.is_absolute() else base / path).resolve()
    return out


def read_inputs(
    folder: DomainFolder,
    inputs: Mapping[str, str] | None,
    request: str | None,
    home: Path,
    base: Path | None = None,
) -> RequestFiles:
    """``read_request_inputs`` of a loaded domain folder."""
    return read_request_inputs(folder.path, folder.name, inputs, request, home, base)


def read_request_inputs(  # noqa: PLR0917 - a request's parts, each its own
    folder: Path,
    domain: str,
    inputs: Mapping[str, str] | None,
    request: str | None,
    home: Path,
    base: Path | None = None,
    *,
    no_inputs_hint: str = _NO_INPUTS_HINT,
) -> RequestFiles:
    """Read the inputs of a request for the domain ``domain`` in ``folder`` (files
    relative to ``base``, the cwd); the runs' servers file, when the inputs make one, is
    written under ``home``'s ``requests/`` (named by the inputs' digest)."""
    base = base or Path.cwd()
    maker = request_inputs(folder)
    if maker is None:
        if inputs:
            raise InputError(
                f"the domain {domain} takes no inputs",
                location=Location(argument="inputs"),
                hint=no_inputs_hint,
            )
        return RequestFiles(request=request)
    value_names = {s.name for s in maker.inputs if s.kind == "value"}
    values = {str(k): str(v) for k, v in (inputs or {}).items() if k in value_names}
    given = _given({k: v for k, v in (inputs or {}).items() if k not in value_names}, base)
    if request is not None:
        for name, value in maker.values_in_text(request).items():
            values.setdefault(name, value)
        takes_folders = any(s.kind == "folder" for s in maker.inputs)
        text, paths = inputs_in_text(request, base, folders=takes_folders)
        named = maker.assign(paths)
        by_path = {p: n for n, p in named.items()}
        for index, path in enumerate(paths):
            text = text.replace(f"\0{index}\0", by_path[path])
        request = text
        for name, path in named.items():
            given.setdefault(name, path)
    if not given and not values:
        return RequestFiles(maker, request)
    digest = hashlib.sha256(
        json.dumps({k: str(v) for k, v in sorted({**given, **values}.items())}).encode()
    ).hexdigest()[:16]
    workdir = home / "requests" / digest
    prepared = maker.prepare(given, home, values)  # its runs write under the home's runs/
    servers_file = None
    if prepared.servers is not None:
        workdir.mkdir(parents=True, exist_ok=True)
        servers_file = workdir / "servers.json"
        text = json.dumps(prepared.servers, indent=2, sort_keys=True) + "\n"
        if not servers_file.is_file() or servers_file.read_text(encoding="utf-8") != text:
            part = workdir / ".servers.json.part"
            part.write_text(text, encoding="utf-8")
            part.replace(servers_file)
    return RequestFiles(maker, request, given, prepared, servers_file, values)
