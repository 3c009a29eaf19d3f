"""Pieces shared by the PDDL domain and problem readers: names, typed lists, headers.

Also the policy on requirement flags: every flag of PDDL 1.2 to 3.1 is
accepted when declared, and only the *use* of an unsupported feature is
refused (see :mod:`plansmith.formats._pddl_logic`). Many domains declare
``:adl`` and use only STRIPS; refusing the flag alone would refuse them. A flag
that is no PDDL flag at all is a typo, and is refused with a suggestion.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import lru_cache

from plansmith.errors import InputError, Location, ParseError, UnsupportedFeatureError
from plansmith.formats._pddl_lexer import Node, SList, Sym
from plansmith.model import ROOT_TYPE, either_type

__all__ = [
    "SUPPORTED",
    "KNOWN_REQUIREMENTS",
    "did_you_mean",
    "check_type",
    "check_arity",
    "expect_list",
    "expect_name",
    "number_of",
    "parse_typed_list",
    "parse_define",
    "group_sections",
    "parse_requirements",
    "unsupported",
]

SUPPORTED = (
    ":strips, :typing, :negative-preconditions, :equality, :action-costs, :adl "
    "(quantifiers, disjunctions, conditional effects) and :derived-predicates"
)

KNOWN_REQUIREMENTS = frozenset(
    {
        ":strips", ":typing", ":negative-preconditions", ":equality", ":action-costs",
        ":disjunctive-preconditions", ":existential-preconditions",
        ":universal-preconditions", ":quantified-preconditions", ":conditional-effects",
        ":adl", ":fluents", ":numeric-fluents", ":object-fluents", ":durative-actions",
        ":duration-inequalities", ":continuous-effects", ":derived-predicates",
        ":timed-initial-literals", ":preferences", ":constraints", ":domain-axioms",
        ":safety-constraints", ":expression-evaluation", ":open-world", ":true-negation",
        ":ucpop", ":subgoals-through-axioms", ":time", ":non-deterministic",
    }
)  # fmt: skip

_NAME = re.compile(r"[^\W\d][\w\-.]*\Z")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)\Z")


def did_you_mean(name: str, candidates: Iterable[str], fallback: str) -> str:
    """``did you mean 'x'?`` for the closest candidate, else ``fallback``."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else fallback


def check_type(
    name: str, declared: Collection[str], loc: Location, error: type[InputError]
) -> None:
    """Raise ``error`` with a suggestion if the type ``name`` is not declared.

    An ``(either a b)`` type is declared when its members are; when ``declared``
    is an ancestor table (type to ancestors), it is added to it: it becomes an
    ancestor of every type below one of its members.
    """
    if name.startswith("(either "):
        members = name[len("(either ") : -1].split()
        for member in members:
            check_type(member, declared, loc, error)
        if isinstance(declared, dict) and name not in declared:
            for typ, above in list(declared.items()):
                if not above.isdisjoint(members):
                    declared[typ] = above | {name}
            declared[name] = frozenset({name, ROOT_TYPE})
        return
    if name not in declared:
        raise error(
            f"unknown type '{name}'",
            location=loc,
            hint=did_you_mean(name, declared, "declare it in the domain's (:types ...)"),
        )


def unsupported(feature: str, flag: str | None, where: Node) -> UnsupportedFeatureError:
    """The error for a PDDL feature plansmith refuses to plan with."""
    needs = f" (requirement {flag})" if flag else ""
    return UnsupportedFeatureError(
        f"unsupported PDDL feature: {feature}{needs}",
        location=where.loc,
        hint=f"plansmith plans with {SUPPORTED}; rewrite this part without it",
    )


def expect_list(node: Node, what: str) -> SList:
    """``node`` as a list, or a :class:`ParseError` that says a ``what`` was expected."""
    if isinstance(node, SList):
        return node
    raise ParseError(
        f"expected {what} in parentheses, found '{node.text}'",
        location=node.loc,
        hint=f"write {what} as '( ... )'",
    )


def check_arity(node: SList, operands: int, takes: str, hint: str, *, counted: str = "") -> None:
    """A :class:`ParseError` unless ``node`` has ``operands`` items after its head:
    ``'HEAD' takes TAKES, got N`` (``counted``: what follows N, e.g. `` argument(s)``)."""
    got = len(node.items) - 1
    if got != operands:
        head = node.items[0]
        word = head.text if isinstance(head, Sym) else ""
        raise ParseError(
            f"'{word}' takes {takes}, got {got}{counted}", location=node.loc, hint=hint
        )


def expect_name(node: Node, what: str, *, variable: bool = False) -> Sym:
    """``node`` as a valid name (``?name`` if ``variable``), or a :class:`ParseError`."""
    if isinstance(node, SList):
        raise ParseError(
            f"expected {what}, found a list",
            location=node.loc,
            hint=f"{what} is a single word here, not '( ... )'",
        )
    text = node.text
    if _valid(text, variable=variable):
        return node
    if variable:
        if not text.startswith("?") or not _NAME.match(text, 1):
            raise ParseError(
                f"expected {what} (a variable like '?x'), found '{text}'",
                location=node.loc,
                hint="variables start with '?' followed by a letter",
            )
    elif not _NAME.match(text):
        hint = "names start with a letter and hold letters, digits, '-' and '_'"
        if text.startswith("?"):
            hint = "a variable is not allowed here; write an object or constant name"
        raise ParseError(f"expected {what}, found '{text}'", location=node.loc, hint=hint)
    return node


@lru_cache(maxsize=4096)
def _valid(text: str, *, variable: bool) -> bool:
    if variable:
        return text.startswith("?") and _NAME.match(text, 1) is not None
    return _NAME.match(text) is not None


def number_of(node: Node) -> int | float | None:
    """The number ``node`` spells, or None (lists and words are not numbers)."""
    if isinstance(node, Sym) and _NUMBER.match(node.text):
        text = node.text
        return float(text) if "." in text else int(text)
    return None


def parse_typed_list(
    items: Sequence[Node], what: str, *, variable: bool
) -> list[tuple[Sym, str, Location]]:
    """``a b - t c`` as ``[(a, t, loc), (b, t, loc), (c, object, loc)]``.

    The location is the type's, or the name's where the type is implied.
    """
    out: list[tuple[Sym, str, Location]] = []
    pending: list[Sym] = []
    i = 0
    while i < len(items):
        item = items[i]
        if isinstance(item, Sym) and item.text == "-":
            if not pending:
                raise ParseError(
                    f"'-' with no {what} before it",
                    location=item.loc,
                    hint=f"write '{what} - type', e.g. '?x - block'",
                )
            if i + 1 >= len(items):
                raise ParseError(
                    "'-' at the end of the list: expected a type after it",
                    location=item.loc,
                    hint="write the type name after '-', e.g. '- block'",
                )
            typ = items[i + 1]
            if isinstance(typ, SList):
                name = _either(typ)
                out.extend((p, name, typ.loc) for p in pending)
                pending = []
                i += 2
                continue
            tsym = expect_name(typ, "a type name")
            out.extend((p, tsym.text, tsym.loc) for p in pending)
            pending = []
            i += 2
            continue
        pending.append(expect_name(item, what, variable=variable))
        i += 1
    out.extend((p, ROOT_TYPE, p.loc) for p in pending)
    return out


def _either(node: SList) -> str:
    """The type name of ``(either a b ...)`` (see :func:`plansmith.model.either_type`)."""
    head = node.items[0] if node.items else None
    if not (isinstance(head, Sym) and head.text == "either") or len(node.items) < 2:
        raise ParseError(
            "expected a type name or '(either TYPE ...)'",
            location=node.loc,
            hint="write '- type' or '- (either type1 type2)'",
        )
    members = tuple(expect_name(m, "a type name").text for m in node.items[1:])
    return either_type(members)


def parse_define(root: SList, kind: str) -> tuple[Sym, list[SList]]:
    """The name and the sections of ``(define (KIND NAME) (:section ...) ...)``."""
    items = root.items
    if not items or not isinstance(items[0], Sym) or items[0].text != "define":
        raise ParseError(
            "expected '(define ...)'",
            location=(items[0] if items else root).loc,
            hint=f"a PDDL {kind} file starts with '(define ({kind} NAME)'",
        )
    if len(items) < 2:
        raise ParseError(
            f"'(define' has no '({kind} NAME)'",
            location=root.loc,
            hint=f"write '(define ({kind} NAME) ...)'",
        )
    header = expect_list(items[1], f"'({kind} NAME)'")
    other = "problem" if kind == "domain" else "domain"
    head = header.items[0] if header.items else None
    if isinstance(head, Sym) and head.text == other:
        raise ParseError(
            f"this is a {other} file, not a {kind} file",
            location=header.loc,
            hint=f"pass the {other} file and the {kind} file in the right order",
        )
    if len(header.items) != 2 or not isinstance(head, Sym) or head.text != kind:
        raise ParseError(
            f"expected '({kind} NAME)' after 'define'",
            location=header.loc,
            hint=f"write '(define ({kind} NAME) ...)'",
        )
    name = expect_name(header.items[1], f"a {kind} name")
    sections: list[SList] = []
    for node in items[2:]:
        section = expect_list(node, "a section like '(:predicates ...)'")
        first = section.items[0] if section.items else None
        if not isinstance(first, Sym) or not first.text.startswith(":"):
            raise ParseError(
                "expected a section keyword like ':predicates' or ':init'",
                location=(first or section).loc,
                hint="each part of a definition starts with a ':keyword'",
            )
        sections.append(section)
    return name, sections


def group_sections(
    sections: list[SList],
    kind: str,
    allowed: Sequence[str],
    refused: Mapping[str, tuple[str, str | None]],
    error: type[InputError],
) -> dict[str, list[SList]]:
    """The sections ``parse_define`` read, by keyword (every one of ``allowed``); a
    ``refused`` one is unsupported, another one unknown (``error``)."""
    by_key: dict[str, list[SList]] = {k: [] for k in allowed}
    for section in sections:
        key = section.items[0]
        assert isinstance(key, Sym)  # parse_define checked it
        if key.text in refused:
            raise unsupported(*refused[key.text], section)
        if key.text not in by_key:
            raise error(
                f"unknown {kind} section '{key.text}'",
                location=key.loc,
                hint=did_you_mean(key.text, allowed, f"a {kind} has {', '.join(allowed)}"),
            )
        by_key[key.text].append(section)
    return by_key


def parse_requirements(section: SList, error: type[InputError]) -> list[str]:
    """The flags of ``(:requirements ...)``; an unknown flag raises ``error``."""
    flags: list[str] = []
    for node in section.items[1:]:
        if isinstance(node, SList) or not node.text.startswith(":"):
            raise ParseError(
                "expected a requirement flag like ':strips'",
                location=node.loc,
                hint="requirement flags start with ':'",
            )
        if node.text not in KNOWN_REQUIREMENTS:
            raise error(
                f"unknown requirement '{node.text}'",
                location=node.loc,
                hint=did_you_mean(node.text, KNOWN_REQUIREMENTS, f"plansmith supports {SUPPORTED}"),
            )
        if node.text not in flags:
            flags.append(node.text)
    return flags
