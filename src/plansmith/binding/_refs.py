"""``${...}`` references in argument templates (formats.md, Bindings).

``$${`` stands for a literal ``${`` (a shell's ``${HOME:-/tmp}``, a JS template
literal): it is no reference, and ``render`` writes it as ``${``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from plansmith.model import JSONValue

__all__ = [
    "ParamRef",
    "OutputRef",
    "FactRef",
    "EnvRef",
    "RunRef",
    "Ref",
    "parse_ref",
    "ref_text",
    "find_refs",
    "holds_reference",
    "env_refs",
    "key_as_checked",
    "template_at",
    "REF_RE",
    "TOKEN_RE",
    "KEY_HINT",
]

REF_RE = re.compile(r"\$\{([^}]*)\}")
#: a reference (its inner text in group 1) or the escape ``$${`` (group 1 None)
TOKEN_RE = re.compile(r"\$\$\{|\$\{([^}]*)\}")
KEY_HINT = (
    "keys are names the tool's inputSchema declares, written as they are: put what"
    " varies in a value (`$${` writes a literal `${`)"
)
_NAME = r"[A-Za-z_][A-Za-z0-9_\-]*"
_OUTPUT_RE = re.compile(rf"^\s*({_NAME})\s*\(([^)]*)\)\s*\.\s*({_NAME})\s*$")
#: ``fact(pred(x, y)).out``: checked before ``_OUTPUT_RE`` (which it never matches: the
#: fact's own parentheses stop ``_OUTPUT_RE``'s argument list before the ``.``)
_FACT_RE = re.compile(rf"^\s*fact\s*\(\s*({_NAME})\s*\(([^()]*)\)\s*\)\s*\.\s*({_NAME})\s*$")
_PARAM_RE = re.compile(rf"^\s*({_NAME})\s*$")
_ENV_RE = re.compile(r"^\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*$")
_RUN_RE = re.compile(r"^\s*run\.(id|dir)\s*$")


@dataclass(frozen=True, slots=True)
class ParamRef:
    """``${p}``: the object bound to the action's parameter ``p``."""

    name: str


@dataclass(frozen=True, slots=True)
class OutputRef:
    """``${act(x, y).out}``: output ``out`` of the step ``act(x, y)``."""

    action: str
    args: tuple[str, ...]
    output: str


@dataclass(frozen=True, slots=True)
class FactRef:
    """``${fact(pred(x, y)).out}``: output ``out`` of the step that last made the ground
    atom ``pred(x, y)`` true before the step that reads it (an add effect of its action),
    whichever action that is."""

    predicate: str
    args: tuple[str, ...]
    output: str

    def fact(self, args: tuple[str, ...] | None = None) -> str:
        """The atom as written (``note_read(n)``), or with ``args`` in its place."""
        return f"{self.predicate}({', '.join(self.args if args is None else args)})"


@dataclass(frozen=True, slots=True)
class EnvRef:
    """``${env.NAME}``: an environment variable."""

    name: str


@dataclass(frozen=True, slots=True)
class RunRef:
    """``${run.id}`` or ``${run.dir}``."""

    field: str


Ref = ParamRef | OutputRef | FactRef | EnvRef | RunRef


def parse_ref(inner: str) -> Ref | None:
    """The reference written as ``${inner}``, or None if it is not one."""
    if m := _ENV_RE.match(inner):
        return EnvRef(m.group(1))
    if m := _RUN_RE.match(inner):
        return RunRef(m.group(1))
    if m := _FACT_RE.match(inner):
        return FactRef(m.group(1), _args(m.group(2)), m.group(3))
    if m := _OUTPUT_RE.match(inner):
        return OutputRef(m.group(1), _args(m.group(2)), m.group(3))
    if m := _PARAM_RE.match(inner):
        return ParamRef(m.group(1))
    return None


def _args(text: str) -> tuple[str, ...]:
    return tuple(a.strip() for a in text.split(",") if a.strip())


def ref_text(ref: OutputRef | FactRef) -> str:
    """A reference to another step's output as ``bind`` keys it in
    ``BoundStep.producers`` when written without spaces: ``act(x,y).out``,
    ``fact(pred(x,y)).out``."""
    if isinstance(ref, FactRef):
        return f"fact({ref.predicate}({','.join(ref.args)})).{ref.output}"
    return f"{ref.action}({','.join(ref.args)}).{ref.output}"


def _inners(text: str) -> Iterator[str]:
    """The inner text of every ``${...}`` of ``text`` (not those escaped as ``$${``)."""
    if "${" in text:
        for m in TOKEN_RE.finditer(text):
            if m.group(1) is not None:
                yield m.group(1)


def holds_reference(text: str) -> bool:
    """Whether ``text`` holds a ``${...}`` that ``render`` would replace."""
    return next(_inners(text), None) is not None


def find_refs(template: JSONValue) -> Iterator[tuple[str, Ref | None]]:
    """Every ``${...}`` in the strings of ``template``: its inner text and its parse."""
    if isinstance(template, str):
        for inner in _inners(template):
            yield inner, parse_ref(inner)
    elif isinstance(template, list):
        for item in template:
            yield from find_refs(item)
    elif isinstance(template, dict):
        for key, item in template.items():
            yield from find_refs(key)
            yield from find_refs(item)


def env_refs(template: JSONValue) -> tuple[str, ...]:
    """Every ``${env.NAME}`` in ``template`` (its keys too), each once: what renders a
    secret into it."""
    found = (f"${{env.{ref.name}}}" for _, ref in find_refs(template) if isinstance(ref, EnvRef))
    return tuple(dict.fromkeys(found))


def key_as_checked(key: str) -> str:
    """An argument key as ``bind`` checks it: its ``$${`` written ``${`` (as ``render``
    writes it), a reference left as written (a key holding one is a problem anyway, and
    so no value, a secret among them, is rendered into a key's place in a message)."""
    if "${" not in key:
        return key
    return TOKEN_RE.sub(lambda m: "${" if m.group(1) is None else m.group(0), key)


def template_at(template: JSONValue, keys: Iterable[object]) -> tuple[JSONValue, bool]:
    """The part of ``template`` that rendered to the value at ``keys`` (keys and indexes
    of the rendered arguments), and True; where a key cannot be followed (one rendered
    from a reference), the part it was followed to, which holds the value, and False."""
    part = template
    for key in keys:
        if isinstance(part, dict) and isinstance(key, str):
            written = {key_as_checked(k): k for k in part}.get(key)
            if written is None:
                return part, False
            part = part[written]
        elif isinstance(part, list) and isinstance(key, int) and 0 <= key < len(part):
            part = part[key]
        else:
            return part, False
    return part, True


def pointer_part(key: str | int) -> str:
    """One segment of a JSON Pointer (RFC 6901): ``~`` as ``~0``, ``/`` as ``~1``."""
    return str(key).replace("~", "~0").replace("/", "~1")


def find_refs_at(template: JSONValue, at: str = "") -> Iterator[tuple[str, str, Ref | None]]:
    """``find_refs`` with where each reference is: the JSON Pointer of the value that
    holds it, ``""`` for the whole. Keys are not searched (see ``keys_with_refs``)."""
    if isinstance(template, str):
        for inner in _inners(template):
            yield at, inner, parse_ref(inner)
    elif isinstance(template, list):
        for i, item in enumerate(template):
            yield from find_refs_at(item, f"{at}/{i}")
    elif isinstance(template, dict):
        for key, item in template.items():
            yield from find_refs_at(item, f"{at}/{pointer_part(key)}")


def keys_with_refs(template: JSONValue, at: str = "") -> Iterator[tuple[str, str]]:
    """Every mapping key of ``template`` that holds a reference: the JSON Pointer of its
    value, and the key (keys are names a tool's schema declares, not templates)."""
    if isinstance(template, list):
        for i, item in enumerate(template):
            yield from keys_with_refs(item, f"{at}/{i}")
    elif isinstance(template, dict):
        for key, item in template.items():
            here = f"{at}/{pointer_part(key)}"
            if isinstance(key, str) and holds_reference(key):
                yield here, key
            yield from keys_with_refs(item, here)
