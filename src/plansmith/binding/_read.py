"""Read a bindings file (YAML or JSON) into :class:`Bindings`, with a location per field.

The text is composed by the located node toolkit (:mod:`plansmith.formats._yaml_node`)
and read node by node. Syntax is a :class:`ParseError` (the first one stops the
reading; an unclosed quote or bracket is reported where it opens); every other
problem of the file is listed in one :class:`BindingError`, each located and with
a hint. A source named ``*.json`` is read as strict JSON. The rules (formats.md):

- Names (actions, ``server``, ``tool``, outputs) are the scalar's text, so
  ``tool: no`` names the tool ``no``; never null, a collection, empty or tagged.
  An output's name does not begin with ``$`` (the mark of a ``{"$blob": ...}``).
- ``arguments`` are JSON. A plain scalar is null (``null``, ``~``, nothing), a
  boolean (``true``, ``false``), a number if written as a JSON number (``1.5e3``
  too), and else its text as written (``yes``, ``2024-02-30``, ``0x1F``, ``.inf``).
  Only the tags ``!!str``, ``!!int``, ``!!float``, ``!!bool``, ``!!null``,
  ``!!map`` and ``!!seq`` are accepted. A key holds no ``${...}`` reference.
- Anchors, aliases and merge keys (``<<: *base``; explicit keys win) work. What
  they add is bounded (``_MAX_EXPANDED`` values per file, so a "billion laughs"
  fails at once), and a value may not contain itself. A duplicate key is an
  error at its second place.
- An output is a JSONPath string, or a mapping ``{path, default, optional}``: ``default``
  (JSON, read as ``arguments`` are, with no reference) or ``optional: true`` (a null
  default) make it optional (``Binding.defaults``); ``optional: false`` with a
  ``default`` is an error.
- ``timeout``: seconds, more than 0, at most a week; ``retries``: 0 to 100;
  ``idempotent`` and ``resend_on_transport_lost``: booleans (``yes``/``no`` too);
  ``when_absent``: ``fail`` or ``skip``; null means the default.
- Top-level keys other than ``bindings`` and ``$schema`` belong to the domain
  (the lab's ``flex_mapping``); one that looks like a misspelling is an error.

``Binding.locations`` maps ``"server"``, ``"tool"``, ``"arguments"``, ``"outputs.NAME"``
... and ``"arguments" + JSON Pointer`` of each value in the arguments
(``"arguments/items/0/name"``) to where it was written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar, cast

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from plansmith.binding._model import Binding, Bindings, StepPolicy
from plansmith.binding._refs import KEY_HINT, holds_reference
from plansmith.binding._scalars import (
    BOOL,
    FLOAT,
    INT,
    JSON_NUMBER,
    MAP,
    MAX_RETRIES,
    MAX_TIMEOUT,
    MERGE,
    NULL,
    SEQ,
    STR,
    as_attempts,
    as_seconds,
    as_tier,
    as_truth,
    is_int,
    json_number,
    kind,
    shown,
    tag_text,
    written_tag,
)
from plansmith.errors import BindingError, Location, ParseError, PlansmithError
from plansmith.formats.yaml_nodes import Source, compose, did_you_mean, is_null
from plansmith.model import JSONValue

__all__ = ["load_bindings", "parse_bindings"]

_FIELDS = (
    "server",
    "tool",
    "arguments",
    "outputs",
    "timeout",
    "retries",
    "idempotent",
    "tier",
    "resend_on_transport_lost",
    "when_absent",
)
_WHEN_ABSENT = ("fail", "skip")
_TOP_KEYS = ("bindings", "$schema")
_OUTPUT_FIELDS = ("path", "default", "optional")
_OUTPUT_HINT = (
    'a JSONPath starts with $, e.g. "$.json.name"; an optional output is written'
    ' {path: "$.json.name", default: VALUE} (or optional: true, for null)'
)
_MAX_EXPANDED = 100_000  # values that aliases and merge keys may add to one file
_MAX_MERGE_DEPTH = 32
_MAX_DEPTH = 100  # nesting of argument values

_NEEDS = "write `bindings:`, then one `ACTION: {server: S, tool: T}` a line"
_T = TypeVar("_T")


def load_bindings(path: str | Path) -> Bindings:
    """Read the bindings file at ``path`` (UTF-8, a byte-order mark allowed)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as error:
        raise BindingError(
            f"cannot read bindings file: {error.strerror or error}",
            location=Location(str(p)),
            hint=(
                "check that the file is there and that you may read it"
                if p.is_absolute()
                else f"check the path (relative to {Path.cwd()}) and that you may read it"
            ),
        ) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line_start = data.rfind(b"\n", 0, error.start) + 1
        column = len(data[line_start : error.start].decode("utf-8", "replace")) + 1
        raise ParseError(
            f"the bindings file is not UTF-8 text (byte 0x{data[error.start]:02x})",
            location=Location(str(p), data.count(b"\n", 0, error.start) + 1, column),
            hint="save the file as UTF-8",
        ) from None
    return parse_bindings(text, source=str(p))


def parse_bindings(text: str, *, source: str | None = None) -> Bindings:
    """Parse bindings text; every problem is reported at once in one ``BindingError``."""
    root = _compose(text, source)
    reader = _Reader(Source(source, BindingError))
    try:
        bindings = reader.read(root)
    except RecursionError:
        raise ParseError(
            "the bindings file is nested too deeply",
            location=Location(source),
            hint="flatten the arguments, or use fewer nested aliases",
        ) from None
    unique = {(str(p.location), p.message): p for p in reader.problems}.values()
    problems = tuple(sorted(unique, key=lambda p: p.location.line or 0 if p.location else 0))
    if problems:
        raise BindingError(
            f"{len(problems)} problem(s) in bindings",
            location=Location(source),
            hint="each problem is listed with its place and what to do",
            problems=problems,
        )
    return Bindings(tuple(bindings), source)


def _compose(text: str, source: str | None) -> Node | None:
    json_syntax = source is not None and source.lower().endswith(".json")
    try:
        return compose(text, source, json_syntax=json_syntax)
    except ParseError as error:
        if not json_syntax:  # json reports an unclosed string where it opens
            _raise_if_unclosed(text, source)
        error.hint = error.hint or "check the indentation, the colons and the brackets near here"
        raise


def _raise_if_unclosed(text: str, source: str | None) -> None:
    """A quote or bracket the text ends inside, reported where it opens (YAML says: at the end)."""
    try:
        yaml.compose(text.removeprefix("\ufeff"), Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        opened, ended, problem = error.context_mark, error.problem_mark, error.problem or ""
        if opened is None or ended is None or "stream" not in problem:
            return
        what = (error.context or "a value").removeprefix("while scanning ")
        raise ParseError(
            f"invalid YAML: {what.removeprefix('while parsing ')} starts here and is never"
            f" closed ({problem} at line {ended.line + 1}, column {ended.column + 1})",
            location=Location(source, opened.line + 1, opened.column + 1),
            hint="close the quote, ']' or '}' that opens here (the file ends first)",
        ) from None
    except (yaml.YAMLError, RecursionError):
        return


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(key: str) -> str:
    """``key`` as one step of a JSON Pointer (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")


class _Reader:
    """One file's reading: the problems found so far, and the alias-expansion budget."""

    def __init__(self, src: Source) -> None:
        self.src = src
        self.problems: list[PlansmithError] = []
        self.locations: list[tuple[str, Location]] = []  # of the binding being read
        self.expanded = 0
        self.seen: set[int] = set()  # collections read once (reading one again expands an alias)
        self.open: set[int] = set()  # collections being read (meeting one is a value in itself)

    def problem(self, where: Node, message: str, hint: str) -> None:
        self.problems.append(self.src.fail(where, message, hint))

    def spend(self, node: Node, count: int = 1) -> None:
        self.expanded += count
        if self.expanded > _MAX_EXPANDED:
            raise ParseError(
                f"aliases and merge keys expand the file to more than {_MAX_EXPANDED} values",
                location=self.src.loc(node),
                hint="write the repeated values out, or use fewer nested aliases (*name)",
            )

    def read(self, root: Node | None) -> list[Binding]:
        if root is not None and not is_null(root) and not isinstance(root, MappingNode):
            raise self.src.fail(
                root, f"a bindings file must be a mapping, not {kind(root)}", _NEEDS
            )
        body: Node | None = None
        misspelt = (Location(self.src.file, 1), _NEEDS)
        top = self.pairs(root, "the bindings file") if isinstance(root, MappingNode) else []
        for key, value in top:
            guess = did_you_mean(key.value, _TOP_KEYS) if key.value not in _TOP_KEYS else None
            if key.value == "bindings":
                body = value
            elif guess:
                hint = f"{guess} (other top-level keys belong to the domain that ships the file)"
                self.problem(key, f"unknown top-level key {key.value!r}", hint)
                misspelt = (self.src.loc(key), hint) if misspelt[1] == _NEEDS else misspelt
        if body is None:
            message = "a bindings file needs a top-level 'bindings' mapping"
            raise BindingError(message, location=misspelt[0], hint=misspelt[1])
        if not isinstance(body, MappingNode):
            message = f"'bindings' must be a mapping of action names, not {kind(body)}"
            raise self.src.fail(body, message, "write one `ACTION: {server: S, tool: T}` a line")
        out: list[Binding] = []
        for key, entry in self.pairs(body, "'bindings'"):
            action = self.name(key, "an action name", "write `ACTION: {server: S, tool: T}`")
            binding = self.binding(action, key, entry) if action is not None else None
            out.extend([binding] if binding is not None else [])
        return out

    def pairs(self, node: Node, what: str, depth: int = 0) -> list[tuple[ScalarNode, Node]]:
        """The (key, value) pairs of a mapping, merge keys applied (explicit keys win).

        A duplicate key, or a key that is not a name, is a problem that drops its entry.
        """
        merged: dict[str, tuple[ScalarNode, Node]] = {}
        explicit: dict[str, tuple[ScalarNode, Node]] = {}
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.tag == MERGE:
                for k, v in self.merged(node, value, what, depth):
                    merged.setdefault(k.value, (k, v))
            elif not isinstance(key, ScalarNode) or is_null(key):
                hint = "write each key as plain or quoted text"
                self.problem(key, f"a key of {what} must be a name, not {kind(key)}", hint)
            elif key.value in explicit:
                hint = f"it was first given at line {explicit[key.value][0].start_mark.line + 1}"
                self.problem(key, f"duplicate key {key.value!r} in {what}", hint + "; keep one")
            else:
                explicit[key.value] = (key, value)
        return list({**merged, **explicit}.values() if merged else explicit.values())

    def merged(
        self, into: Node, value: Node, what: str, depth: int
    ) -> list[tuple[ScalarNode, Node]]:
        """The pairs a merge key (``<<: *base`` or ``<<: [*a, *b]``) brings into ``into``."""
        out: list[tuple[ScalarNode, Node]] = []
        for source in value.value if isinstance(value, SequenceNode) else [value]:
            if not isinstance(source, MappingNode):
                hint = "write `<<: *name`, with `&name` on a mapping, or `<<: [*a, *b]`"
                self.problem(
                    source, f"a merge key in {what} takes mappings, not {kind(source)}", hint
                )
            elif source is into or depth >= _MAX_MERGE_DEPTH:
                hint = "a mapping cannot merge itself, directly or through others"
                self.problem(source, f"the merge keys of {what} nest too deeply", hint)
            else:
                self.spend(source, len(source.value))
                out.extend(self.pairs(source, what, depth + 1))
        return out

    def name(self, node: Node, what: str, hint: str) -> str | None:
        """A name: the scalar's text, whatever YAML would resolve it to (``no`` stays ``no``)."""
        if not isinstance(node, ScalarNode) or is_null(node):
            self.problem(node, f"{what} must be a name, not {kind(node)}", hint)
        elif (tag := written_tag(node)) not in (None, STR):
            self.problem(
                node, f"{what} has the tag {tag_text(str(tag))}", "drop the tag: a name is text"
            )
        elif not node.value.strip():
            self.problem(node, f"{what} is empty", hint)
        else:
            return str(node.value)
        return None

    def binding(self, action: str, key: ScalarNode, node: Node) -> Binding | None:
        start = len(self.problems)
        if not isinstance(node, MappingNode):
            hint = "give it `server:`, `tool:` and, if the tool takes any, `arguments:`"
            self.problem(
                node, f"the binding of {action!r} must be a mapping, not {kind(node)}", hint
            )
            return None
        fields: dict[str, Node] = {}
        for k, v in self.pairs(node, f"the binding of {action!r}"):
            if k.value in _FIELDS:
                fields[k.value] = v
            else:
                guess = did_you_mean(k.value, _FIELDS)
                hint = f"{guess + ' ' if guess else ''}fields are: {', '.join(_FIELDS)}"
                self.problem(k, f"unknown field {k.value!r} in the binding of {action!r}", hint)
        self.locations = [(n, self.src.loc(v)) for n, v in fields.items()]
        names: dict[str, str | None] = {}
        for field, what in (("server", "a key of the servers file"), ("tool", "its tool")):
            hint = f"write `{field}: NAME`, with NAME {what}"
            if field in fields:
                names[field] = self.name(fields[field], f"{field!r} of {action!r}", hint)
            else:
                self.problem(key, f"binding of {action!r} has no {field!r}", hint)
        outputs, defaults = self.outputs(action, fields.get("outputs"))
        policy = self.policy(action, fields)
        arguments = fields.get("arguments")
        value = {} if arguments is None or is_null(arguments) else self.value(arguments, "", False)
        server, tool = names.get("server"), names.get("tool")
        if server is None or tool is None or len(self.problems) > start:
            return None
        return Binding(
            action=action,
            server=server,
            tool=tool,
            arguments=value,
            outputs=outputs,
            policy=policy,
            loc=self.src.loc(key),
            locations=tuple(self.locations),
            defaults=defaults,
        )

    def outputs(
        self, action: str, node: Node | None
    ) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, JSONValue], ...]]:
        """The outputs (name, JSONPath) and, of the optional ones, their defaults."""
        example = 'write `outputs: {NAME: "$.json.field"}`'
        if node is not None and not isinstance(node, MappingNode):
            self.problem(node, f"'outputs' must map names to JSONPaths, not {kind(node)}", example)
            return (), ()
        out: list[tuple[str, str]] = []
        defaults: list[tuple[str, JSONValue]] = []
        for key, value in (
            self.pairs(node, f"the outputs of {action!r}") if node is not None else ()
        ):
            output = self.name(key, "an output name", example)
            if output is None:
                continue
            if output.startswith("$"):
                message = f"output name {output!r} begins with '$'"
                hint = (
                    "'$' marks a stored value's reference ({\"$blob\": ...}) in events and"
                    f" results; name the output without it, e.g. {output.lstrip('$') or 'value'!r}"
                )
                self.problem(key, message, hint)
                continue
            if isinstance(value, MappingNode):
                read = self.output_entry(action, output, value)
                if read is not None:
                    out.append((output, read[0]))
                    defaults.extend([(output, read[1][0])] if read[1] else [])
            elif not isinstance(value, ScalarNode) or value.tag != STR:
                message = (
                    f"output {output!r} must be a JSONPath string, or a mapping with"
                    f" `path:`, not {kind(value)}"
                )
                self.problem(value, message, _OUTPUT_HINT)
            else:
                out.append((output, str(value.value)))
                self.locations.append((f"outputs.{output}", self.src.loc(value)))
        return tuple(out), tuple(defaults)

    def output_entry(
        self, action: str, output: str, node: MappingNode
    ) -> tuple[str, tuple[JSONValue, ...]] | None:
        """An output written as a mapping: its path, and ``(default,)`` when optional."""
        what = f"output {output!r} of {action!r}"
        start = len(self.problems)
        fields: dict[str, Node] = {}
        misspelt = False  # a key meant as `path`: its absence is not said again
        for k, v in self.pairs(node, what):
            if k.value in _OUTPUT_FIELDS:
                fields[k.value] = v
            else:
                guess = did_you_mean(k.value, _OUTPUT_FIELDS)
                misspelt = misspelt or (guess is not None and "'path'" in guess)
                hint = f"{guess + ' ' if guess else ''}an output's fields are: " + ", ".join(
                    _OUTPUT_FIELDS
                )
                self.problem(k, f"unknown field {k.value!r} in {what}", hint)
        path: str | None = None
        if "path" not in fields:
            if not misspelt:
                self.problem(node, f"{what} has no 'path'", _OUTPUT_HINT)
        elif not isinstance(fields["path"], ScalarNode) or fields["path"].tag != STR:
            message = f"the path of {what} must be a JSONPath string, not {kind(fields['path'])}"
            self.problem(fields["path"], message, _OUTPUT_HINT)
        else:
            path = str(fields["path"].value)
            self.locations.append((f"outputs.{output}", self.src.loc(fields["path"])))
        optional: bool | None = None
        if "optional" in fields:
            optional = as_truth(fields["optional"])
            if optional is None:
                wrong = kind(fields["optional"])
                message = f"'optional' of {what} must be true or false, not {wrong}"
                self.problem(fields["optional"], message, "write `optional: true`")
        default: tuple[JSONValue, ...] = ()
        if "default" in fields:
            if optional is False:
                self.problem(
                    fields["optional"],
                    f"{what} has a default but says `optional: false`",
                    "an output with a default is optional: drop `optional: false`, or the"
                    " default to make it required",
                )
            kept = len(self.locations)  # a default's values have no place of their own
            default = (self.value(fields["default"], "", False),)
            del self.locations[kept:]
        elif optional:
            default = (None,)
        if path is None or len(self.problems) > start:
            return None
        return path, default

    def policy(self, action: str, fields: dict[str, Node]) -> StepPolicy:
        def given(field: str, read: Callable[[Node], _T | None], what: str, hint: str) -> _T | None:
            node = fields.get(field)
            value = None if node is None or is_null(node) else read(node)
            if node is not None and not is_null(node) and value is None:
                self.problem(
                    node, f"{field!r} of {action!r} must be {what}, not {kind(node)}", hint
                )
            return value

        seconds = f"a number of seconds, more than 0 and at most {MAX_TIMEOUT} (a week)"
        timeout = given("timeout", as_seconds, seconds, "write e.g. `timeout: 30`")
        whole = f"a whole number from 0 to {MAX_RETRIES}"
        retries = given(
            "retries", as_attempts, whole, "write the extra attempts, e.g. `retries: 2`"
        )
        idempotent = given("idempotent", as_truth, "true or false", "write `true` or `false`")
        tier = given("tier", as_tier, "read, write or execute", "write e.g. `tier: read`")
        resend = given(
            "resend_on_transport_lost",
            as_truth,
            "true or false",
            "write `false` to leave a lost transport to `retries` alone",
        )
        when_absent = given(
            "when_absent",
            _as_when_absent,
            "fail or skip",
            "write `when_absent: skip` to skip the step when a value it reads is absent",
        )
        return StepPolicy(
            timeout=timeout,
            retries=retries or 0,
            idempotent=bool(idempotent),
            tier=tier,
            resend_on_transport_lost=resend is not False,
            skip_when_absent=when_absent == "skip",
        )

    def value(self, node: Node, pointer: str, expanding: bool, depth: int = 0) -> JSONValue:
        """``node`` as JSON; each value inside is located under ``"arguments" + pointer``."""
        if isinstance(node, ScalarNode):
            if expanding:
                self.spend(node)
            if depth:
                self.locations.append(("arguments" + pointer, self.src.loc(node)))
            return self.scalar(node)
        ident = id(node)
        if ident in self.open:
            hint = "an alias (*name) cannot stand inside the value its anchor (&name) marks"
            self.problem(node, "this value contains itself through an alias", hint)
            return None
        expanding = expanding or ident in self.seen
        self.seen.add(ident)
        if expanding:
            self.spend(node)
        if depth:
            self.locations.append(("arguments" + pointer, self.src.loc(node)))
        if depth >= _MAX_DEPTH or node.tag != (SEQ if isinstance(node, SequenceNode) else MAP):
            if depth >= _MAX_DEPTH:
                message = f"the arguments nest more than {_MAX_DEPTH} levels deep"
                self.problem(node, message, "flatten the arguments")
            else:
                self.unsupported(node)
            return None
        self.open.add(ident)
        try:
            if isinstance(node, SequenceNode):
                return [
                    self.value(item, f"{pointer}/{i}", expanding, depth + 1)
                    for i, item in enumerate(node.value)
                ]
            pairs = self.pairs(node, "the arguments")
            for k, _ in pairs:
                if holds_reference(k.value):
                    self.problem(
                        k, f"the argument key {shown(k.value)} holds a reference", KEY_HINT
                    )
            return {
                k.value: self.value(v, f"{pointer}/{_escape(k.value)}", expanding, depth + 1)
                for k, v in pairs
            }
        finally:
            self.open.discard(ident)

    def scalar(self, node: ScalarNode) -> JSONValue:
        tag, text = node.tag, str(node.value)
        if not text.isascii() and _LONE_SURROGATE.search(text):  # "\ud800" in quotes
            hint = "write the character whole (a pair \\ud83d\\ude00, or the character itself)"
            message = f"{shown(text)} holds a lone surrogate: no tool can be sent it"
            self.problem(node, message, hint)
            return None
        if node.style:  # quoted, or a block: text, unless tagged (!!int "3")
            return text if tag == STR else self.tagged(node)
        if tag == NULL:
            return None
        if tag == BOOL and text.lower() in ("true", "false"):
            return text.lower() == "true"
        if JSON_NUMBER.fullmatch(text) and (
            tag == FLOAT or (tag == INT and is_int(text)) or written_tag(node) is None
        ):
            value = json_number(text, tag)
            if value is None:
                hint = "write a smaller number, or quote it to pass it as text"
                self.problem(node, f"the number {shown(text)} is out of range", hint)
            return value
        if tag == STR or written_tag(node) is None:
            return text  # what YAML 1.1 reads and JSON does not: yes, 0x1F, 2024-01-01, .inf
        return self.tagged(node)

    def tagged(self, node: ScalarNode) -> JSONValue:
        """A scalar with a written tag: JSON's types only."""
        if node.tag not in (INT, FLOAT, BOOL):
            self.unsupported(node)
            return None
        try:
            value: object = yaml.SafeLoader("").construct_object(node)
        except (yaml.YAMLError, ValueError, KeyError, OverflowError):
            value = None
        if (
            (node.tag == BOOL and isinstance(value, bool))
            or (node.tag == INT and type(value) is int)
            or (node.tag == FLOAT and isinstance(value, float) and math.isfinite(value))
        ):
            return cast(JSONValue, value)
        hint = "write it as JSON (1, 2.5, true), or quote it without the tag for text"
        self.problem(node, f"{kind(node)} is not a valid {tag_text(node.tag)}", hint)
        return None

    def unsupported(self, node: Node) -> None:
        hint = "arguments are JSON: drop the tag, or quote the value to pass it as text"
        self.problem(node, f"the tag {tag_text(node.tag)} is not supported in arguments", hint)


def _as_when_absent(node: Node) -> str | None:
    """``when_absent``'s value: ``fail`` or ``skip``, else None."""
    if isinstance(node, ScalarNode) and node.tag == STR and node.value in _WHEN_ABSENT:
        return str(node.value)
    return None
