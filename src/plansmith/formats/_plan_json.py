"""The plan artifact as JSON: the canonical writer and a strict reader.

``plan_to_json`` writes ``Plan.to_dict()`` with sorted keys and two-space
indentation. The ``hash`` in it is always the sha256 of the *compact*
canonical JSON of the plan without ``hash`` (``Plan.hash``), so re-indenting
a file does not change it.

``parse_plan_json`` accepts exactly what the writer writes (see
``schemas/plan.schema.json``): the format name and version, every key, the
right types, unique step ids, ``after`` ids that exist, a total cost that is
the sum of the step costs and a hash that matches the content. Syntax errors
raise ParseError, everything else PlanFormatError, both with file:line (the
line of the JSON object at fault) and a hint.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, NoReturn

from plansmith.errors import Location, ParseError, PlanFormatError
from plansmith.formats._load import decode_utf8
from plansmith.model import (
    PLAN_FORMAT,
    PLAN_FORMAT_VERSION,
    DecompositionNode,
    Number,
    Plan,
    SettingValue,
    Step,
    StepArg,
    Tier,
    canonical_value,
)

__all__ = ["plan_to_json", "parse_plan_json"]

_HASH = re.compile(r"sha256:[0-9a-f]{64}")
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[{}]', re.DOTALL)
_TOP = ("format", "version", "domain", "problem", "planner", "cost", "steps", "hash")
_STEP = ("id", "action", "args", "cost", "after", "tier")
_NODE = ("task", "args", "method", "step", "children")
_TIERS = tuple(t.value for t in Tier)
_SCHEMA = "see schemas/plan.schema.json for the plan format"


def plan_to_json(plan: Plan) -> str:
    """The plan's canonical JSON object, sorted, indented by two spaces, with a final newline."""
    return json.dumps(plan.to_dict(), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def parse_plan_json(text: str | bytes, file: str | None = None) -> Plan:
    """Read a plan written by ``plan_to_json``; ParseError or PlanFormatError if it is not one.

    Bytes are read as UTF-8: a byte that is not is a ParseError at its line and column.
    """
    if isinstance(text, bytes):
        text = decode_utf8(
            text,
            file,
            "plan",
            bom=False,
            hint="a plan file is the UTF-8 JSON that `plansmith plan --format json` writes",
        )
    created: list[dict[str, Any]] = []  # every object, in the order its '}' closes
    duplicates: list[tuple[dict[str, Any], str]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                duplicates.append((out, key))
            out[key] = value
        created.append(out)
        return out

    def constant(name: str) -> NoReturn:
        raise ValueError(f"{name} is not a JSON number")

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"not valid JSON: {exc.msg}",
            location=Location(file, exc.lineno, exc.colno),
            hint="a plan file is the JSON that `plansmith plan --format json` writes",
        ) from None
    except (ValueError, RecursionError) as exc:
        message = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ParseError(
            f"not valid JSON: {message}",
            location=Location(file),
            hint="a plan file is the JSON that `plansmith plan --format json` writes",
        ) from None
    reader = _Reader(text, file, created)
    for obj, key in duplicates:
        reader.fail(f"key {key!r} appears twice in one object", obj, "keep one of them")
    try:
        return reader.plan(data)
    except RecursionError:
        raise PlanFormatError(
            "the plan is nested too deeply", location=Location(file), hint=_SCHEMA
        ) from None


class _Reader:
    """Checks the parsed JSON, reporting the line of the object at fault."""

    def __init__(self, text: str, file: str | None, created: list[dict[str, Any]]) -> None:
        self.file = file
        self.created = created  # keeps every object alive, so no id() is reused
        opens: list[int] = []
        closing: list[int] = []  # for the k-th '}' outside strings: where its '{' is
        for m in _TOKENS.finditer(text):
            if m.group() == "{":
                opens.append(m.start())
            elif m.group() == "}":
                closing.append(opens.pop())
        # The parser builds the k-th object when it reads the k-th '}'.
        self.lines = {
            id(o): text.count("\n", 0, pos) + 1 for o, pos in zip(created, closing, strict=False)
        }

    def fail(self, message: str, obj: object, hint: str = _SCHEMA) -> NoReturn:
        line = self.lines.get(id(obj))
        raise PlanFormatError(message, location=Location(self.file, line), hint=hint)

    def keys(
        self,
        obj: Any,
        where: str,
        keys: tuple[str, ...],
        *,
        parent: object,
        optional: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        if not isinstance(obj, dict):
            self.fail(f"{where} must be a JSON object, not {_kind(obj)}", parent)
        for key in keys:
            if key not in obj:
                self.fail(f"{where} has no {key!r}", obj, f"{where} needs {', '.join(keys)}")
        for key in obj:
            if key not in keys and key not in optional:
                allowed = ", ".join(keys + optional)
                self.fail(f"{where} has an unknown key {key!r}", obj, f"allowed keys: {allowed}")
        return obj

    def string(self, obj: dict[str, Any], key: str, where: str) -> str:
        value = obj[key]
        if not isinstance(value, str) or not value:
            self.fail(f"{where}: {key!r} must be a non-empty string, not {_kind(value)}", obj)
        return value

    def strings(self, obj: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
        value = obj[key]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.fail(f"{where}: {key!r} must be a list of non-empty strings", obj)
        return tuple(value)

    def scalars(self, obj: dict[str, Any], key: str, where: str) -> tuple[StepArg, ...]:
        value = obj[key]
        if not isinstance(value, list):
            self.fail(f"{where}: {key!r} must be a list, not {_kind(value)}", obj)
        for n, v in enumerate(value, start=1):
            if isinstance(v, float) and not math.isfinite(v):
                self.fail(f"{where}: argument {n} of {key!r} must be finite", obj)
            if not (v is None or isinstance(v, str | int | float)):
                self.fail(
                    f"{where}: argument {n} of {key!r} is {_kind(v)}, not a JSON scalar",
                    obj,
                    "step arguments are strings, numbers, booleans or null",
                )
        return tuple(value)

    def number(self, obj: dict[str, Any], key: str, where: str) -> Number:
        value = obj[key]
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            self.fail(f"{where}: {key!r} must be a finite number, not {_kind(value)}", obj)
        return value

    def plan(self, data: Any) -> Plan:
        top = self.keys(data, "the plan", _TOP, parent=None, optional=("decomposition",))
        if top["format"] != PLAN_FORMAT:
            self.fail(
                f"format is {top['format']!r}, not {PLAN_FORMAT!r}",
                top,
                "is this a plansmith plan file?",
            )
        version = top["version"]
        if type(version) is not int or version != PLAN_FORMAT_VERSION:
            self.fail(
                f"plan format version {version!r} is not supported",
                top,
                f"this plansmith reads version {PLAN_FORMAT_VERSION}; plan again with it",
            )
        domain = self.keys(top["domain"], "domain", ("name", "hash"), parent=top)
        problem = self.keys(top["problem"], "problem", ("name", "hash"), parent=top)
        for part, where in ((domain, "domain"), (problem, "problem")):
            self.string(part, "name", where)
            if not isinstance(part["hash"], str) or not _HASH.fullmatch(part["hash"]):
                self.fail(f"{where}: 'hash' must be 'sha256:' and 64 hex digits", part)
        steps = self.steps(top["steps"], top)
        plan = Plan(
            domain=domain["name"],
            problem=problem["name"],
            domain_hash=domain["hash"],
            problem_hash=problem["hash"],
            steps=steps,
            settings=self.settings(top["planner"], top),
            decomposition=self.nodes(top.get("decomposition", []), top, "decomposition"),
            version=version,
        )
        cost = self.number(top, "cost", "the plan")
        if canonical_value(cost) != canonical_value(plan.cost):
            self.fail(
                f"the plan's cost {cost} is not the sum of its step costs ({plan.cost})",
                top,
                "the file was edited by hand; plan again",
            )
        if not isinstance(top["hash"], str) or top["hash"] != plan.hash:
            self.fail(
                f"the plan's hash {top['hash']!r} does not match its content ({plan.hash})",
                top,
                "the file was changed after it was written; plan again rather than edit a plan",
            )
        return plan

    def settings(self, obj: Any, top: object) -> tuple[tuple[str, SettingValue], ...]:
        if not isinstance(obj, dict):
            self.fail(f"'planner' must be an object, not {_kind(obj)}", top)
        for key, value in obj.items():
            if not (value is None or isinstance(value, str | int | float)):
                self.fail(f"planner: {key!r} must be a string, number, boolean or null", obj)
            if isinstance(value, float) and not math.isfinite(value):
                self.fail(f"planner: {key!r} must be finite", obj)
        return tuple(sorted(obj.items()))

    def steps(self, value: Any, top: dict[str, Any]) -> tuple[Step, ...]:
        if not isinstance(value, list):
            self.fail(f"'steps' must be a list, not {_kind(value)}", top)
        out: list[Step] = []
        seen: set[str] = set()
        for n, raw in enumerate(value, start=1):
            where = f"step {n}"
            obj = self.keys(raw, where, _STEP, parent=top)
            sid = self.string(obj, "id", where)
            where = f"step {sid}"
            if sid in seen:
                self.fail(
                    f"step id {sid} is used more than once", obj, "give every step its own id"
                )
            seen.add(sid)
            tier = obj["tier"]
            if tier not in _TIERS:
                self.fail(f"{where}: tier {tier!r} is not read, write or execute", obj)
            out.append(
                Step(
                    id=sid,
                    action=self.string(obj, "action", where),
                    args=self.scalars(obj, "args", where),
                    cost=self.number(obj, "cost", where),
                    after=self.strings(obj, "after", where),
                    tier=Tier(tier),
                )
            )
        for raw, step in zip(value, out, strict=True):
            for a in step.after:
                if a not in seen:
                    self.fail(
                        f"step {step.id} depends on unknown step {a!r}",
                        raw,
                        "`after` lists ids of steps in the plan",
                    )
        return tuple(out)

    def nodes(self, value: Any, parent: object, where: str) -> tuple[DecompositionNode, ...]:
        if not isinstance(value, list):
            self.fail(f"{where!r} must be a list, not {_kind(value)}", parent)
        out: list[DecompositionNode] = []
        for raw in value:
            obj = self.keys(raw, "a decomposition node", _NODE, parent=parent)
            for key in ("method", "step"):
                if obj[key] is not None:
                    self.string(obj, key, "a decomposition node")
            out.append(
                DecompositionNode(
                    task=self.string(obj, "task", "a decomposition node"),
                    args=self.strings(obj, "args", "a decomposition node"),
                    method=obj["method"],
                    step=obj["step"],
                    children=self.nodes(obj["children"], obj, "children"),
                )
            )
        return tuple(out)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return "a string" if isinstance(value, str) else "a number"
