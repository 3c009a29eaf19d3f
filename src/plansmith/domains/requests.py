"""What a request may carry: a domain's named inputs (files a user names), and how they
become the objects and facts of the problem and the servers of its runs.

A domain that takes inputs has a ``RequestInputs``: ``inputs`` declares them (name,
what is expected, which goals need them); ``prepare`` checks the files a request gives
(each must exist and be of the expected kind, else an ``InputError`` naming the input)
and returns the problem's objects and initial state and, for domains whose servers are
confined to the request's files, the ``mcpServers`` document its runs use. Faces find a
folder's ``RequestInputs`` with ``request_inputs(path)``: bio's (sequence files),
code's (a repository folder) and the lab's PCR (values: samples, channels, cycles).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from plansmith.errors import InputError

__all__ = [
    "InputSpec",
    "PreparedRequest",
    "RequestInputs",
    "request_inputs",
    "inputs_in_text",
    "missing_inputs_error",
]


@dataclass(frozen=True, slots=True)
class InputSpec:
    """A named input: a file (``formats`` it may be in), a folder, or a value (``kind``),
    and the goals that need it."""

    name: str
    description: str
    formats: tuple[str, ...] = ()
    needed_by: tuple[str, ...] = ()
    type: str = "object"  # the type of the object it becomes (named as the input)
    kind: str = "file"  # "file", "folder" or "value" (a number or word, not a path)


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    """The objects and initial state the inputs make, and the servers of the runs (None:
    the folder's ``servers.json``)."""

    objects: Mapping[str, str]
    init: tuple[str, ...]
    servers: Mapping[str, object] | None = None
    files: Mapping[str, str] = field(default_factory=dict)  # input -> absolute path or value
    tasks: tuple[str, ...] = ()  # the job itself, for a domain whose inputs make it whole


class RequestInputs(Protocol):
    """A domain's inputs and how a request's files become its problem."""

    @property
    def inputs(self) -> tuple[InputSpec, ...]: ...

    @property
    def makes_servers(self) -> bool:
        """Whether ``prepare`` makes the runs' servers (else the folder's servers.json)."""
        ...

    def assign(self, paths: Sequence[Path]) -> dict[str, Path]:
        """Name each file a request's text gave (by its kind), or raise ``InputError``."""
        ...

    def values_in_text(self, text: str) -> dict[str, str]:
        """The value inputs a request's text states ("24 samples"), by input name."""
        ...

    def needed(self, goal: Sequence[str]) -> tuple[str, ...]:
        """The inputs the ground ``goal`` needs."""
        ...

    def prepare(
        self, given: Mapping[str, Path], workdir: Path, values: Mapping[str, str]
    ) -> PreparedRequest:
        """Check ``given`` (files, folders) and ``values`` and make the problem's objects,
        init and the runs' servers (``workdir``: the run home, under which each run
        writes in its own folder)."""
        ...


def request_inputs(folder: Path) -> RequestInputs | None:
    """The ``RequestInputs`` of a shipped domain folder (None: it takes no inputs)."""
    from plansmith.domains import bio, code, lab  # noqa: PLC0415 - on demand

    where = folder.resolve()
    if where == bio.DOMAIN_DIR:
        return bio.BIO_INPUTS
    if where == code.DOMAIN_DIR:
        return code.CODE_INPUTS
    if where == lab.PCR_DIR:
        return lab.PCR_INPUTS
    return None


#: a token of a request that names a file or folder: a path with a file suffix, a path
#: with a separator, or a folder's name with a trailing separator ("shop/")
_PATHLIKE = re.compile(
    r"(?:[\w.~-]*/)*[\w.~-]+\.[A-Za-z][\w]{0,9}\b|(?:[\w.~-]*/)+[\w.~-]+/?|[\w.~-]+/"
)


def inputs_in_text(text: str, base: Path, *, folders: bool = False) -> tuple[str, list[Path]]:
    """The request's words that name existing files (and folders, when ``folders``;
    relative to ``base``), and the text with each replaced by a placeholder the caller
    renames."""
    found: list[Path] = []

    def take(match: re.Match[str]) -> str:
        word = match.group(0).rstrip(".,;:")
        path = Path(word).expanduser()
        path = path if path.is_absolute() else base / path
        if not (path.is_file() or (folders and path.is_dir())):
            return match.group(0)
        found.append(path.resolve())
        return f"\0{len(found) - 1}\0"

    return _PATHLIKE.sub(take, text), found


def missing_inputs_error(
    domain: str, specs: Sequence[InputSpec], missing: Sequence[str], *, what: str = "this goal"
) -> InputError:
    """One typed answer that lists what is needed (``what``: what needs it)."""
    wanted = [s for s in specs if s.name in missing]
    listed = "; ".join(f"{s.name}: {s.description}" for s in wanted)
    example = ", ".join(f'"{s.name}": "{"VALUE" if s.kind == "value" else "PATH"}"' for s in wanted)
    say = (
        "state them in the request"
        if all(s.kind == "value" for s in wanted)
        else "name the files in the request"
    )
    return InputError(
        f"the {domain} domain needs input(s) for {what}: {listed}",
        hint=f"pass inputs={{{example}}}, or {say}",
    )
