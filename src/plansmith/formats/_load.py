"""Loading domains and problems from files or text, whatever their syntax.

The syntax comes from the file name: ``.yaml``/``.yml`` (YAML), ``.json``
(JSON) or ``.pddl`` (PDDL). Files are read as UTF-8 (a byte-order mark is
allowed); a missing or unreadable file is an :class:`InputError`, text that is
not UTF-8 a :class:`ParseError` at the first bad byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from plansmith.errors import InputError, Location, ParseError
from plansmith.model import Domain, Problem

__all__ = [
    "Syntax",
    "SYNTAXES",
    "syntax_of",
    "load_domain",
    "load_problem",
    "parse_domain",
    "parse_problem",
]

Syntax = Literal["yaml", "json", "pddl"]
SYNTAXES: tuple[Syntax, ...] = ("yaml", "json", "pddl")

_SUFFIXES: dict[str, Syntax] = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".pddl": "pddl"}


def syntax_of(path: str | Path) -> Syntax:
    """The syntax of a file, from its suffix; InputError for any other suffix."""
    suffix = Path(path).suffix.lower()
    if suffix not in _SUFFIXES:
        raise InputError(
            f"cannot tell the syntax of {str(path)!r} from its name",
            location=Location(str(path)),
            hint="name the file .yaml, .yml, .json or .pddl",
        )
    return _SUFFIXES[suffix]


def _read(path: str | Path, what: str) -> str:
    file = str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(
            f"no such {what} file: {file}",
            location=Location(file),
            hint="check that the file is there"
            if Path(path).is_absolute()
            else f"check the path (it is relative to {Path.cwd()})",
        ) from None
    except IsADirectoryError:
        raise InputError(
            f"the {what} path {file} is a folder, not a file",
            location=Location(file),
            hint=f"name the {what} file inside it, e.g. {Path(file) / (what + '.yaml')}",
        ) from None
    except OSError as error:
        raise InputError(
            f"cannot read the {what} file {file}: {error.strerror or error}",
            location=Location(file),
            hint="check that the file exists and that you may read it",
        ) from None
    return decode_utf8(data, file, what)


def decode_utf8(
    data: bytes,
    file: str | None,
    what: str,
    *,
    bom: bool = True,
    hint: str = "save the file as UTF-8",
) -> str:
    """``data`` as UTF-8 text (a byte-order mark dropped if ``bom``), else a ParseError
    at the line and column (in bytes, from 1) of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - data.rfind(b"\n", 0, error.start)
        raise ParseError(
            f"the {what} file is not UTF-8 text (byte 0x{data[error.start]:02x})",
            location=Location(file, line, column),
            hint=hint,
        ) from None


def _check_syntax(syntax: str) -> Syntax:
    for known in SYNTAXES:
        if syntax == known:
            return known
    raise InputError(f"unknown syntax {syntax!r}", hint=f"use one of: {', '.join(SYNTAXES)}")


def parse_domain(text: str, *, file: str | None = None, syntax: Syntax = "yaml") -> Domain:
    """A domain from its text; ``file`` is only used in locations."""
    # Each reader is imported only when its syntax is read (PyYAML is not needed for PDDL).
    checked = _check_syntax(syntax)
    if checked == "pddl":
        from plansmith.formats._pddl import parse_pddl_domain  # noqa: PLC0415

        return parse_pddl_domain(text, file)
    from plansmith.formats._yaml_domain import read_yaml_domain  # noqa: PLC0415

    return read_yaml_domain(text, file=file, json_syntax=checked == "json")


def parse_problem(
    text: str, domain: Domain, *, file: str | None = None, syntax: Syntax = "yaml"
) -> Problem:
    """A problem over ``domain`` from its text; ``file`` is only used in locations."""
    checked = _check_syntax(syntax)
    if checked == "pddl":
        from plansmith.formats._pddl import parse_pddl_problem  # noqa: PLC0415

        return parse_pddl_problem(text, domain, file)
    from plansmith.formats._yaml_problem import read_yaml_problem  # noqa: PLC0415

    return read_yaml_problem(text, domain, file=file, json_syntax=checked == "json")


def load_domain(path: str | Path) -> Domain:
    """Read a domain file (``.yaml``, ``.yml``, ``.json`` or ``.pddl``)."""
    syntax = syntax_of(path)
    return parse_domain(_read(path, "domain"), file=str(path), syntax=syntax)


def load_problem(path: str | Path, domain: Domain) -> Problem:
    """Read a problem file over ``domain`` (``.yaml``, ``.yml``, ``.json`` or ``.pddl``)."""
    syntax = syntax_of(path)
    return parse_problem(_read(path, "problem"), domain, file=str(path), syntax=syntax)
