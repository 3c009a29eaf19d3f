"""The digests of the files a run was made from, and which of them changed since.

``Engine.run`` records, beside each input file's path in the run's ``inputs``, the
sha256 of its contents under ``KIND_digest`` (``domain_digest``, ...: flat keys whose
values are text, so that the faces that list a run's inputs by name show them as they
show the paths). A run recorded before digests were kept has none: nothing is compared.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from plansmith.model import JSONValue

__all__ = ["KINDS", "ChangedInput", "changed_inputs", "file_digests"]

#: the input files of a run made from files, in the order ``RunInputs`` names them
KINDS = ("domain", "problem", "servers", "bindings")

_CHUNK = 1 << 20


def _digest(path: Path) -> str | None:
    """``sha256:HEX`` of the file's contents; None when it cannot be read (gone, a
    directory): loading it then says why."""
    sha = hashlib.sha256()
    try:
        with path.open("rb") as f:
            while chunk := f.read(_CHUNK):
                sha.update(chunk)
    except OSError:
        return None
    return f"sha256:{sha.hexdigest()}"


def file_digests(paths: Mapping[str, Path]) -> dict[str, str]:
    """``{"domain_digest": "sha256:...", ...}`` for each file of ``paths`` that can be
    read (read before the files are loaded: a file edited meanwhile is then reported
    changed at resume, never missed)."""
    digests = {f"{kind}_digest": _digest(path) for kind, path in paths.items()}
    return {key: value for key, value in digests.items() if value is not None}


@dataclass(frozen=True, slots=True)
class ChangedInput:
    """An input file of a run whose contents are not those the run was made from.

    ``kind``: ``domain``, ``problem``, ``servers`` or ``bindings``; ``path``: the file;
    ``recorded``: the digest recorded with the run; ``now``: the file's digest now, None
    when it is gone (or cannot be read).
    """

    kind: str
    path: Path
    recorded: str
    now: str | None

    @property
    def meaning(self) -> str:
        """What the change means for the resumed run."""
        if self.now is None:
            return "it is gone or cannot be read: the run cannot be resumed without it"
        if self.kind == "servers":
            return (
                "the run goes on with the plan it recorded, and its tool servers are started"
                " from the file as it is now"
            )
        return "the run goes on with the plan it recorded; a replan would use the file as it is now"


def changed_inputs(recorded: Mapping[str, JSONValue]) -> tuple[ChangedInput, ...]:
    """The files of a run's recorded ``inputs`` whose contents differ from the digest
    recorded with them (those recorded without a digest are not compared)."""
    changed: list[ChangedInput] = []
    for kind in KINDS:
        path, digest = recorded.get(kind), recorded.get(f"{kind}_digest")
        if not isinstance(path, str) or not isinstance(digest, str):
            continue
        now = _digest(Path(path))
        if now != digest:
            changed.append(ChangedInput(kind, Path(path), digest, now))
    return tuple(changed)
