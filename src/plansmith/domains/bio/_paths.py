"""Path confinement: a tool reads only the run directory and the inputs the user named.

A :class:`Sandbox` holds the run roots (directories under which run directories
live) and the named inputs (``name -> file``). Every path a tool receives is
resolved (symlinks and ``..`` included) before it is checked, so a link or a
``../`` that leads out of the sandbox is refused like any other outside path.
Refusals are :class:`plansmith.errors.InputError` with the reason and a hint.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from plansmith.errors import InputError, Location

__all__ = ["Sandbox", "sandbox_from_env", "file_ref", "sha256_file", "INPUTS_ENV", "RUN_ROOT_ENV"]

INPUTS_ENV = "PLANSMITH_BIO_INPUTS"
RUN_ROOT_ENV = "PLANSMITH_BIO_RUN_ROOT"


@dataclass(frozen=True, slots=True)
class Sandbox:
    """Run roots (read and write) and named input files (read only), all resolved."""

    run_roots: tuple[Path, ...]
    inputs: tuple[tuple[str, Path], ...] = ()

    @staticmethod
    def of(run_roots: list[str | Path], inputs: Mapping[str, str | Path]) -> Sandbox:
        roots = tuple(Path(r).resolve() for r in run_roots)
        named = tuple(sorted((n, Path(p).resolve()) for n, p in inputs.items()))
        return Sandbox(roots, named)

    def _inside_run(self, path: Path) -> bool:
        return any(path == r or path.is_relative_to(r) for r in self.run_roots)

    def readable(self, given: str) -> Path:
        """The file ``given`` names: an input's name, a named input's path, or a
        file inside a run root. Anything else is refused."""
        named = dict(self.inputs)
        if given in named:
            path = named[given]
        else:
            path = _local(given)
            if path not in named.values() and not self._inside_run(path):
                raise _refused(given, path, self, "read")
        if not path.is_file():
            raise InputError(
                f"no such file: {given}",
                location=Location(str(path)),
                hint="earlier steps write their outputs into the run directory: check the order",
            )
        return path

    def writable(self, given: str) -> Path:
        """An output path inside a run root (its parent directories are created)."""
        path = self.in_run(given)
        if path in dict(self.inputs).values():
            raise InputError(
                f"refusing to overwrite the input {given}",
                location=Location(str(path)),
                hint="write outputs to new files in the run directory",
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def in_run(self, given: str) -> Path:
        """``given`` resolved, if it lies inside a run root (it need not exist)."""
        path = _local(given)
        if not self._inside_run(path) or path in self.run_roots:
            raise _refused(given, path, self, "write")
        return path


def _local(given: str) -> Path:
    """A path, or a ``file://`` URI, resolved: symlinks followed and ``..`` removed."""
    if given.startswith("file://"):
        given = unquote(urlparse(given).path)
    return Path(given).expanduser().resolve()


def _refused(given: str, path: Path, box: Sandbox, verb: str) -> InputError:
    roots = ", ".join(str(r) for r in box.run_roots) or "(none configured)"
    what = "the run roots or the named inputs" if verb == "read" else "the run roots"
    return InputError(
        f"path refused: {given} resolves to {path}, outside {what}",
        location=Location(given),
        hint=f"run roots: {roots}; named inputs: {', '.join(n for n, _ in box.inputs) or 'none'}",
    )


def sandbox_from_env(
    env: Mapping[str, str], run_roots: list[str] | None = None, inputs: list[str] | None = None
) -> Sandbox:
    """The sandbox from the command line (``--run-root``, ``--input name=path``) and the
    environment (``PLANSMITH_BIO_RUN_ROOT``: paths joined by ``os.pathsep``;
    ``PLANSMITH_BIO_INPUTS``: a JSON object ``{"name": "path"}``). With no run root
    at all, ``./.plansmith`` under the working directory is the only one."""
    roots: list[str | Path] = list(run_roots or [])
    roots += [r for r in env.get(RUN_ROOT_ENV, "").split(os.pathsep) if r]
    named: dict[str, str | Path] = {}
    raw = env.get(INPUTS_ENV, "").strip()
    if raw:
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise InputError(
                f"{INPUTS_ENV} is not a JSON object of names to paths",
                hint='write e.g. {"gene": "/data/query.gb", "family": "/data/family.fasta"}',
            )
        named.update(value)
    for item in inputs or []:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise InputError(
                f"--input {item!r} is not NAME=PATH", hint="e.g. --input gene=query.gb"
            )
        named[name] = path
    if not roots:
        roots = [Path.cwd() / ".plansmith"]
    return Sandbox.of(roots, named)


def sha256_file(path: Path) -> str:
    """``sha256:<hex>`` of the file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def file_ref(path: Path) -> dict[str, str | int]:
    """A reference to a file: path, file URI, content hash and size."""
    return {
        "path": str(path),
        "uri": path.as_uri(),
        "sha256": sha256_file(path),
        "bytes": path.stat().st_size,
    }
