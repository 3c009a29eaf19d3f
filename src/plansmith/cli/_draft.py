"""``plansmith init``'s drafting (pure): live tool schemas in, a draft domain, bindings
and problem out, as commented YAML text (docs/own-servers.md).

- One action per tool, named ``SERVER_TOOL`` (made a valid name, unique).
- Its parameters are the tool's required inputs of type ``string``, each an object of a
  type named after the input: ``${p}`` passes the object's name, which is a string, so a
  required number, integer or boolean gets a literal placeholder to decide instead, as do
  required arrays and objects (a value that fits the schema where one can be made).
- Its tier comes from the tool's annotations: ``readOnlyHint`` true is ``read``; any
  other annotated tool is ``write`` (``destructiveHint`` true, or false: additive); a
  tool without ``readOnlyHint`` and ``destructiveHint`` is ``execute``, to be confirmed.
- Its effect is ``did_ACTION(params)``; its precondition holds only the data-flow facts.
- Data flow, conservative (``links``): an output property of tool A (in A's
  ``outputSchema``, and required there) with the same name and the same JSON type
  (arrays: of the same item type) as a required input of another tool B becomes the fact
  ``has_NAME(x)``: A's effect, B's precondition, and B's argument ``${A(x).NAME}``. A
  reference names A's step by all its arguments: when A takes other parameters too, B
  takes them as well and requires ``did_A(...)`` of that step instead (``has_NAME(x)``
  would not say which step made x). Drafted only when A is the only chosen tool with
  that output and no link feeds A (no chains); otherwise a ``decide:`` comment at B
  names the candidates. No schema, no link.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import jsonschema

from plansmith.binding import ToolSpec
from plansmith.model import JSONValue

__all__ = ["Draft", "DraftAction", "Link", "draft", "links", "tier_of", "json_type"]

_SCALARS = ("string", "number", "integer", "boolean")
_RESERVED = frozenset({"object", "not", "and", "or"})
_SIMPLE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OBJECT_NAME = re.compile(r"[A-Za-z_][\w-]*")

LINK_RULE = """\
# Data flow, conservative: an output property of tool A (declared in A's outputSchema
# and required there) with the same name and JSON type (arrays: of the same item type)
# as a required input of another tool B is the fact has_NAME(x): an effect of A's
# action, a precondition of B's, and B's argument ${A(x).NAME}. When A takes other
# parameters too, B takes them as well (to name A's step) and requires did_A(...) of
# that step instead. Drafted only when A is the only tool here with that output and no
# link feeds A; otherwise a "decide:" comment at B names the candidates. No link is
# claimed without both schemas."""


def name_of(text: str) -> str:
    """``text`` as a name of the domain and a reference: ``[A-Za-z_][A-Za-z0-9_]*``."""
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", text) or "_"
    if cleaned[0].isdigit():
        cleaned = "_" + cleaned
    return cleaned + "_" if cleaned in _RESERVED else cleaned


def _unique(name: str, taken: set[str]) -> str:
    found, n = name, 2
    while found in taken:
        found, n = f"{name}_{n}", n + 1
    taken.add(found)
    return found


def _properties(schema: Mapping[str, JSONValue] | None) -> dict[str, JSONValue]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return dict(props) if isinstance(props, dict) else {}


def _required(schema: Mapping[str, JSONValue] | None) -> list[str]:
    req = schema.get("required") if isinstance(schema, Mapping) else None
    props = _properties(schema)
    return [r for r in req if isinstance(r, str) and r in props] if isinstance(req, list) else []


def json_type(schema: JSONValue) -> str | None:
    """A property's JSON type as the schema declares it (``string``, ``array of object``),
    or None when it declares none or several: such a property is never linked."""
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if not isinstance(kind, str):
        return None
    if kind == "array":
        inner = json_type(schema.get("items"))
        return None if inner is None else f"array of {inner}"
    return kind


def tier_of(annotations: Mapping[str, JSONValue] | None) -> tuple[str, str]:
    """The tier of a tool with these annotations, and the comment that says why."""
    notes = annotations or {}
    read_only, destructive = notes.get("readOnlyHint"), notes.get("destructiveHint")
    if read_only is True:
        return "read", "readOnlyHint: true"
    if destructive is True:
        return "write", "destructiveHint: true"
    if destructive is False:
        return "write", "destructiveHint: false (additive); decide: read, write or execute"
    if read_only is False:
        return "write", "readOnlyHint: false; decide: read, write or execute"
    return "execute", "decide: the tool gives no annotations; confirm read, write or execute"


@dataclass(frozen=True, slots=True)
class Link:
    """Tool ``producer``'s output ``prop`` feeds tool ``consumer``'s required input."""

    prop: str
    producer: str  # action names
    consumer: str


@dataclass(slots=True)
class DraftAction:
    """One drafted action: its tool, parameters (name, type, input), tier, facts and the
    lines of its binding."""

    name: str
    server: str
    tool: ToolSpec
    tier: str
    tier_note: str
    params: list[tuple[str, str]] = field(default_factory=list)  # (name, type)
    taken_from: list[str] = field(default_factory=list)  # where a producer's come from
    arguments: list[tuple[str, str, str]] = field(default_factory=list)  # key, YAML, note
    notes: list[str] = field(default_factory=list)  # comments of the binding's arguments
    precondition: list[str] = field(default_factory=list)
    effect: list[str] = field(default_factory=list)
    outputs: list[tuple[str, str, bool]] = field(default_factory=list)  # name, path, opt

    @property
    def done(self) -> str:
        return f"did_{self.name}({', '.join(p for p, _ in self.params)})"


@dataclass(frozen=True, slots=True)
class Draft:
    """What ``plansmith init`` writes: three YAML texts, and what they were made of."""

    domain_yaml: str
    bindings_yaml: str
    problem_yaml: str
    actions: tuple[DraftAction, ...]
    links: tuple[Link, ...]
    goal_action: str


def _action_names(tools: Sequence[tuple[str, ToolSpec]]) -> list[str]:
    taken: set[str] = set()
    return [_unique(name_of(f"{server}_{tool.name}"), taken) for server, tool in tools]


def links(
    tools: Sequence[tuple[str, ToolSpec]],
) -> tuple[list[Link], dict[tuple[str, str], list[str]]]:
    """The data-flow links between ``tools`` (``(server, tool)`` pairs, action names as
    ``draft`` makes them), and for each (consumer, input) that matches the outputs of
    tools but is not linked, the candidate producers (a person decides)."""
    names = _action_names(tools)
    outputs: dict[tuple[str, str], list[str]] = {}  # (prop, type) -> producers
    for name, (_, tool) in zip(names, tools, strict=True):
        props = _properties(tool.output_schema)
        for prop in _required(tool.output_schema):
            kind = json_type(props[prop])
            if kind is not None:
                outputs.setdefault((prop, kind), []).append(name)
    found: list[Link] = []
    undecided: dict[tuple[str, str], list[str]] = {}
    for name, (_, tool) in zip(names, tools, strict=True):
        props = _properties(tool.input_schema)
        for prop in _required(tool.input_schema):
            kind = json_type(props[prop])
            producers = [p for p in outputs.get((prop, kind), []) if p != name] if kind else []
            if not producers:
                continue
            if len(producers) == 1:
                found.append(Link(prop, producers[0], name))
            else:
                undecided[(name, prop)] = producers
    # a reference names the producer's step by all its arguments, which its consumer
    # takes as parameters of its own: a producer that is itself fed by a link would pass
    # its producer's on, and so on down a chain; such links are left to a person
    consumers = {link.consumer for link in found}
    kept = []
    for link in found:
        if link.producer not in consumers:
            kept.append(link)
        else:
            undecided[(link.consumer, link.prop)] = [link.producer]
    return kept, undecided


def placeholder(schema: JSONValue, root: JSONValue, depth: int = 0) -> JSONValue:
    """A value for ``schema`` for a person to replace: its ``default``, ``const``, first
    ``enum`` value or example, else the least value of its type (arrays hold one item,
    to show its shape; objects their required properties)."""
    if not isinstance(schema, dict) or depth > 8:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: JSONValue = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        return placeholder(target, root, depth + 1)
    for key in ("default", "const"):
        if key in schema:
            return schema[key]
    for key in ("enum", "examples"):
        values = schema.get(key)
        if isinstance(values, list) and values:
            return values[0]
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            return placeholder(branches[0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "string":
        return "TODO"
    if kind in ("number", "integer"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        return low if isinstance(low, int | float) and not isinstance(low, bool) else 0
    if kind == "boolean":
        return False
    if kind == "array":
        most = schema.get("maxItems")
        if most == 0:
            return []
        least = schema.get("minItems")
        count = least if isinstance(least, int) and least > 1 else 1
        return [placeholder(schema.get("items"), root, depth + 1) for _ in range(count)]
    if kind == "object" or "properties" in schema:
        props = _properties(schema)
        return {p: placeholder(props[p], root, depth + 1) for p in _required(schema)}
    return None


def _fits(value: JSONValue, schema: JSONValue, root: JSONValue) -> bool:
    if not isinstance(schema, dict) or not isinstance(root, dict):
        return False
    whole = {**root, "type": "object", "properties": {"v": schema}, "required": ["v"]}
    whole.pop("additionalProperties", None)
    try:
        cls = jsonschema.validators.validator_for(whole, default=jsonschema.Draft202012Validator)
        return cls(whole).is_valid({"v": value})
    except Exception:
        return False


def _yaml(value: JSONValue) -> str:
    """``value`` as YAML: JSON in flow style, which YAML reads as it is."""
    return json.dumps(value, ensure_ascii=True)


def _path(prop: str) -> str:
    if _SIMPLE_KEY.fullmatch(prop):
        return f"$.structured.{prop}"
    return f"$.structured[{json.dumps(prop, ensure_ascii=True)}]"


#: plain YAML scalars that a YAML reader may take for null, a boolean or a number
_YAML_WORDS = frozenset({"null", "true", "false", "yes", "no", "on", "off", "y", "n", "~"})


def _key(text: str) -> str:
    """``text`` as a YAML key or scalar that reads back as the same string."""
    if _SIMPLE_KEY.fullmatch(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text, ensure_ascii=True)


def _one_line(text: str) -> str:
    """``text`` fit for a YAML comment: one line, printable ASCII kept as it is."""
    flat = " ".join(text.split())
    return "".join(c if c.isprintable() else "?" for c in flat)[:300]


def _output_names(tool: ToolSpec) -> dict[str, str]:
    """Each property of the tool's ``outputSchema`` -> its output's name in the binding."""
    taken: set[str] = set()
    return {prop: _unique(name_of(prop), taken) for prop in _properties(tool.output_schema)}


def draft(
    tools: Sequence[tuple[str, ToolSpec]],
    *,
    domain: str = "draft",
    servers_file: str = "servers.json",
    skipped: Iterable[str] = (),
) -> Draft:
    """Draft a domain, its bindings and a problem from ``tools`` (``(server, tool)`` pairs,
    in the order given). ``skipped`` names the servers left out (they did not start)."""
    if not tools:
        raise ValueError("no tools to draft from")
    names = _action_names(tools)
    found, undecided = links(tools)
    producer_of = {(link.consumer, link.prop): link.producer for link in found}
    produced: dict[str, list[str]] = {}
    for link in found:
        if link.prop not in produced.setdefault(link.producer, []):
            produced[link.producer].append(link.prop)
    facts: set[str] = set()
    has = {p: _unique(f"has_{name_of(p)}", facts) for p in dict.fromkeys(k.prop for k in found)}
    types: dict[str, str] = {}  # type -> the input it is named after
    type_names: set[str] = set()

    def type_for(prop: str) -> str:
        for existing, source in types.items():
            if source == prop:
                return existing
        made = _unique(name_of(prop), type_names)
        types[made] = prop
        return made

    out_names = {name: _output_names(tool) for name, (_, tool) in zip(names, tools, strict=True)}
    actions: dict[str, DraftAction] = {}
    param_of: dict[str, dict[str, str]] = {}  # action -> input or output -> parameter
    taken: dict[str, set[str]] = {}
    # the parameters of each action: its string inputs, its linked inputs, and the
    # objects it produces for a link
    for name, (server, tool) in zip(names, tools, strict=True):
        tier, why = tier_of(tool.annotations)
        action = actions[name] = DraftAction(name, server, tool, tier, why)
        own = param_of[name] = {}
        used = taken[name] = set()
        inputs = _properties(tool.input_schema)
        for prop in _required(tool.input_schema):
            if json_type(inputs[prop]) == "string" or (name, prop) in producer_of:
                own[prop] = _unique(name_of(prop), used)
                action.params.append((own[prop], type_for(prop)))
        for prop in produced.get(name, []):
            if prop not in own:
                own[prop] = _unique(name_of(prop), used)
                action.params.append((own[prop], type_for(prop)))
            action.effect.append(f"{has[prop]}({own[prop]})")
    # a consumer takes its producer's other parameters too, bound by did_PRODUCER(...):
    # its reference names the producer's step by all of them
    step_of: dict[tuple[str, str], str] = {}  # (consumer, producer) -> "producer(args)"
    for link in found:
        eater, maker = actions[link.consumer], actions[link.producer]
        if (eater.name, maker.name) not in step_of:
            props = [k.prop for k in found if (k.consumer, k.producer) == (eater.name, maker.name)]
            fed = {param_of[maker.name][p]: param_of[eater.name][p] for p in props}
            args = []
            for param, kind in maker.params:
                if param not in fed:
                    fed[param] = _unique(param, taken[eater.name])
                    eater.params.append((fed[param], kind))
                    eater.taken_from.append(f"{fed[param]}: {maker.name}'s {param}")
                args.append(fed[param])
            step = f"{maker.name}({', '.join(args)})"
            step_of[(eater.name, maker.name)] = step
            if len(maker.params) > 1:  # has_NAME(x) would not say which step made x
                eater.precondition.append(f"did_{step}")
        if len(maker.params) == 1:
            x = param_of[eater.name][link.prop]
            eater.precondition.append(f"{has[link.prop]}({x})")
    for name, (_, tool) in zip(names, tools, strict=True):
        action = actions[name]
        own = param_of[name]
        inputs = _properties(tool.input_schema)
        required = _required(tool.input_schema)
        root = tool.input_schema
        for prop in required:
            schema = inputs[prop]
            kind = json_type(schema) or "any"
            producer = producer_of.get((name, prop))
            if producer is not None:
                step = step_of[(name, producer)]
                ref = _yaml(f"${{{step}.{out_names[producer][prop]}}}")
                action.arguments.append((_key(prop), ref, f"data flow: {step}"))
                continue
            if prop in own:
                note = ""
                if (name, prop) in undecided:
                    note = _candidates(prop, kind, undecided[(name, prop)])
                action.arguments.append((_key(prop), _yaml(f"${{{own[prop]}}}"), note))
                continue
            value = placeholder(schema, root)
            fits = _fits(value, schema, root)
            note = f"decide: {kind}, required" + (
                "; this placeholder fits the schema"
                if fits
                else "; no value fitting the schema could be made: write one"
            )
            if kind in _SCALARS[1:]:
                note += " (a parameter would pass an object's name, a string)"
            if (name, prop) in undecided:
                note += "; " + _candidates(prop, kind, undecided[(name, prop)])
            action.arguments.append((_key(prop), _yaml(value), note))
        optional = [p for p in inputs if p not in required]
        if optional:
            listed = ", ".join(f"{p} ({json_type(inputs[p]) or 'any'})" for p in optional)
            action.notes.append(_one_line(f"optional inputs: {listed}"))
        out_props = _properties(tool.output_schema)
        out_required = set(_required(tool.output_schema))
        for prop in out_props:
            out = out_names[name][prop]
            action.outputs.append((_key(out), _path(prop), prop not in out_required))
        action.effect.insert(0, action.done)
    drafted = list(actions.values())
    goal = _goal_action(drafted)
    domain_name = re.sub(r"[^\w.+-]", "-", domain).strip("-") or "draft"
    if not re.match(r"[\w.]", domain_name):
        domain_name = "draft"
    servers = sorted({server for server, _ in tools})
    return Draft(
        _domain_yaml(domain_name, drafted, types, servers, servers_file, skipped),
        _bindings_yaml(drafted, servers_file),
        _problem_yaml(domain_name, goal),
        tuple(drafted),
        tuple(found),
        goal.name,
    )


def _candidates(prop: str, kind: str, producers: list[str]) -> str:
    shown = ", ".join(producers[:3])
    if len(producers) > 3:
        shown += f" and {len(producers) - 3} more"
    why = "several tools give it" if len(producers) > 1 else "its producer is fed by a link"
    return f"decide: {prop} ({kind}) is an output of {shown}; not linked: {why}"


def _goal_action(actions: list[DraftAction]) -> DraftAction:
    """The action whose effect the draft problem asks for: one with no precondition,
    read-only and without parameters if there is one."""

    def rank(action: DraftAction) -> tuple[bool, bool, bool, int]:
        undecided = any(note.startswith("decide:") for _, _, note in action.arguments)
        return (bool(action.precondition), action.tier != "read", undecided, len(action.params))

    return min(actions, key=rank)


def _comment_lines(text: str, indent: str = "") -> list[str]:
    return [f"{indent}# {line}".rstrip() for line in text.splitlines()]


def _domain_yaml(
    name: str,
    actions: list[DraftAction],
    types: dict[str, str],
    servers: list[str],
    servers_file: str,
    skipped: Iterable[str],
) -> str:
    lines = [
        _one_line(f"# DRAFT drafted by `plansmith init` from the live tools of {servers_file}"),
        _one_line(f'# (servers: {", ".join(servers)}). Lines marked "decide:" need a person.'),
    ]
    left = list(skipped)
    if left:
        said = ", ".join(left)
        lines.append(_one_line(f"# decide: not drafted, the server(s) did not start: {said}"))
    lines += [
        "#",
        "# One action per tool, named SERVER_TOOL. Its parameters are the tool's required",
        "# string inputs, each of a type named after the input. Its tier is from the tool's",
        "# annotations: readOnlyHint true -> read; destructiveHint true -> write; annotated",
        "# otherwise -> write, to confirm; none -> execute, to confirm (annotations are hints",
        "# the server gives, not guarantees). Its effect is did_ACTION(parameters):",
        "# add what it really makes true, and the preconditions it needs.",
        "#",
        *LINK_RULE.splitlines(),
        f"domain: {name}",
    ]
    if types:
        lines.append("types:    # one per string input or linked output: decide what it stands for")
        lines += [f"  {t}: object" for t in types]
    else:
        lines.append("types: {}")
    lines.append("predicates:")
    seen: set[str] = set()
    for action in actions:
        lines.append(f"  did_{action.name}: [{', '.join(t for _, t in action.params)}]")
        for fact in action.effect[1:]:
            pred = fact.split("(", 1)[0]
            if pred not in seen:
                seen.add(pred)
                kind = dict(action.params)[fact.split("(", 1)[1].rstrip(")")]
                lines.append(f"  {pred}: [{kind}]")
    lines.append("actions:")
    for action in actions:
        title = f": {action.tool.title}" if action.tool.title else ""
        said = _one_line(f"{action.server}.{action.tool.name}{title}")
        lines.append(f"  {action.name}:{' ' * 4}# {said}")
        params = ", ".join(f"{p}: {t}" for p, t in action.params)
        came = f"    # {_one_line('; '.join(action.taken_from))}" if action.taken_from else ""
        lines.append(f"    parameters: {{{params}}}{came}")
        lines.append(f"    precondition: [{', '.join(action.precondition)}]")
        lines.append(f"    effect: [{', '.join(action.effect)}]")
        lines.append(f"    tier: {action.tier}{' ' * 4}# {action.tier_note}")
    return "\n".join(lines) + "\n"


def _bindings_yaml(actions: list[DraftAction], servers_file: str) -> str:
    lines = [
        "# DRAFT drafted by `plansmith init`: each action of domain.yaml as a call on a",
        _one_line(f"# server of {servers_file}. Arguments: ${{p}} is the object passed for the"),
        "# action's parameter p (its name, a string); ${A(x).out} is the output of the step",
        "# A(x). Outputs: one per property of the tool's outputSchema, optional where the",
        '# schema does not require it. Lines marked "decide:" need a person.',
        "bindings:",
    ]
    for action in actions:
        lines += [
            f"  {action.name}:",
            f"    server: {_key(action.server)}",
            f"    tool: {_key(action.tool.name)}",
        ]
        if action.arguments or action.notes:
            lines.append("    arguments:" if action.arguments else "    arguments: {}")
            for key, value, note in action.arguments:
                said = _one_line(note)
                if len(said) > 60:  # a long note goes above its argument
                    lines += [f"      # {line}" for line in textwrap.wrap(said, 80)]
                    said = ""
                comment = f"    # {said}" if said else ""
                lines.append(f"      {key}: {value}{comment}")
            lines += _comment_lines("\n".join(action.notes), "      ")
        else:
            lines.append("    arguments: {}")
        if action.outputs:
            lines.append("    outputs:")
            for out, path, optional in action.outputs:
                if optional:
                    lines.append(f"      {out}: {{path: {_yaml(path)}, optional: true}}")
                else:
                    lines.append(f"      {out}: {_yaml(path)}")
        else:
            lines += [
                "    outputs:                   # no outputSchema: the result's text",
                '      text: "$.text"',
            ]
        if (action.tool.annotations or {}).get("idempotentHint") is True:
            lines.append("    idempotent: true           # idempotentHint: true")
    return "\n".join(lines) + "\n"


def _problem_yaml(domain: str, goal: DraftAction) -> str:
    objects: dict[str, str] = {}
    args = []
    for param, kind in goal.params:
        obj = param if _OBJECT_NAME.fullmatch(param) else f"{kind}_1"
        objects[obj] = kind
        args.append(obj)
    written = ", ".join(f"{o}: {t}" for o, t in objects.items())
    lines = [
        "# DRAFT drafted by `plansmith init`, so that `plansmith check` has a plan to bind.",
        f"# Its goal is the effect of {goal.name} (tier {goal.tier}), chosen read-only,",
        "# without preconditions and with no argument to decide where there is one.",
        "# decide: change goal to what must be done (the did_... and has_... facts of",
        "# domain.yaml), objects to the things the actions work on (one per parameter",
        "# value, of its type) and init to what is true at the start.",
        "problem: draft-check",
        f"domain: {domain}",
        f"objects: {{{written}}}",
        "init: []",
        f"goal: [did_{goal.name}({', '.join(args)})]",
    ]
    return "\n".join(lines) + "\n"
