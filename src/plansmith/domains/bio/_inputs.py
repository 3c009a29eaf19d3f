"""The bio domain's request inputs (stdlib only): ``gene`` (one sequence, FASTA or
GenBank) and ``family`` (a FASTA of several); a file of the wrong kind is refused with
the input's name. The runs' server is confined to the request's files and a run root
of its own (``server_config``), so no environment variable is needed."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from plansmith.domains.bio._problem import GOALS, detect_tools, server_config
from plansmith.domains.requests import InputSpec, PreparedRequest
from plansmith.errors import InputError, Location

__all__ = ["BIO_INPUTS", "BioInputs"]

_NAMES = ("gene", "family")
#: goal predicate -> the inputs its goal needs
_NEEDS = {atom.split("(")[0]: g.needs for g in GOALS for atom in g.goal}
_RESIDUES = re.compile(r"^[A-Za-z*\-.\s]*$")
_MAX_BYTES = 200 * 1024 * 1024


def _kind(name: str, path: Path) -> tuple[str, int]:
    """``("fasta", records)`` or ``("genbank", records)``; else an InputError naming
    the input and what it expected."""
    where = Location(str(path))
    if not path.is_file():
        raise InputError(
            f"input {name}: no file {path}",
            location=where,
            hint="check the path (relative to the server's folder)",
        )
    if path.stat().st_size > _MAX_BYTES:
        raise InputError(
            f"input {name}: {path.name} is over 200 MB", location=where, hint="give a smaller file"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(
            f"input {name}: {path.name} cannot be read as text ({error})",
            location=where,
            hint="a FASTA or GenBank file is plain text",
        ) from None
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines and lines[0].startswith("LOCUS") and any(ln.startswith("ORIGIN") for ln in lines):
        return "genbank", sum(ln.startswith("LOCUS") for ln in lines)
    if lines and lines[0].startswith(">"):
        bad = next(
            (i for i, ln in enumerate(lines) if not ln.startswith(">") and not _RESIDUES.match(ln)),
            None,
        )
        if bad is None and any(not ln.startswith(">") for ln in lines):
            return "fasta", sum(ln.startswith(">") for ln in lines)
    raise InputError(
        f"input {name}: {path.name} is neither FASTA nor GenBank",
        location=where,
        hint="a FASTA file starts with '>' and holds sequence lines; GenBank starts with LOCUS",
    )


class BioInputs:
    """``gene`` and ``family``, the files the bio domain's goals read."""

    makes_servers: bool = True
    inputs: tuple[InputSpec, ...] = (
        InputSpec(
            "gene",
            "one gene, a FASTA file of one sequence or a GenBank file",
            ("fasta", "genbank"),
            tuple(g.name for g in GOALS if "gene" in g.needs),
            "seqset",
        ),
        InputSpec(
            "family",
            "the family database, a FASTA file of several sequences",
            ("fasta",),
            tuple(g.name for g in GOALS if "family" in g.needs),
            "seqset",
        ),
    )

    def assign(self, paths: Sequence[Path]) -> dict[str, Path]:
        named: dict[str, Path] = {}
        for path in paths:
            kind, records = _kind("file", path)
            name = "gene" if kind == "genbank" or records == 1 else "family"
            if name in named:
                raise InputError(
                    f"the request names two files for {name}: {named[name].name} and {path.name}",
                    hint="name one gene (one sequence) and one family (several sequences)",
                )
            named[name] = path
        return named

    def needed(self, goal: Sequence[str]) -> tuple[str, ...]:
        wanted = {n for atom in goal for n in _NEEDS.get(atom.split("(")[0].strip(), ())}
        return tuple(n for n in _NAMES if n in wanted)

    def values_in_text(self, text: str) -> dict[str, str]:
        return {}  # every input is a file or folder

    def prepare(
        self, given: Mapping[str, Path], workdir: Path, values: Mapping[str, str]
    ) -> PreparedRequest:
        unknown = sorted((set(given) | set(values)) - set(_NAMES))
        if unknown:
            raise InputError(
                f"the bio domain has no input {unknown[0]!r}", hint="its inputs: gene, family"
            )
        for name, path in given.items():
            kind, records = _kind(name, path)
            if name == "family" and kind != "fasta":
                raise InputError(
                    f"input family: {path.name} is GenBank, not FASTA",
                    location=Location(str(path)),
                    hint="give the family as one FASTA file of several sequences",
                )
            if name == "gene" and records != 1:
                raise InputError(
                    f"input gene: {path.name} holds {records} sequences, not one",
                    location=Location(str(path)),
                    hint="give one gene; several sequences are a family",
                )
        objects = {n: "seqset" for n in _NAMES if n in given}
        init = [f"input({n})" for n in objects]
        init += [f"available({t})" for t in sorted(detect_tools())]
        if len(objects) == len(_NAMES):
            objects["homologues"] = "seqset"
            init.append("homologue_set(homologues, gene, family)")
        files = {n: str(p.resolve()) for n, p in given.items()}
        servers = server_config(files, workdir)  # the run home: each run writes in its dir
        return PreparedRequest(objects, tuple(init), servers, files)


BIO_INPUTS = BioInputs()
