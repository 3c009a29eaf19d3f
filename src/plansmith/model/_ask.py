"""Ask actions: a person decides inside a plan.

An action of kind ``ask`` has a question, an answer schema (``enum``, ``boolean``,
``number`` or ``string``, with constraints and an optional default) and effects by
answer: ``common`` happen whatever the answer, ``branches`` (enum and boolean answers)
add the effects of the answer given. The planner does not know the answer: it plans
with the *assumed* answer (the declared default, else the first choice, else yes), and
once the person answers, the run's state gets the effects of the real answer and the
rest of the plan is planned again from there when the answer differs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from plansmith.errors import AnswerError, BindingError
from plansmith.model._canonical import JSONValue
from plansmith.model._logic import Literal

if TYPE_CHECKING:
    from plansmith.model._domain import ActionSchema

__all__ = [
    "ANSWER_TYPES",
    "AnswerValue",
    "AnswerSchema",
    "AskSpec",
    "answer_key",
    "check_answer",
    "answer_from_text",
    "answered_schema",
    "answer_schema_from_json",
    "answer_json_schema",
]

#: the types an answer may have
ANSWER_TYPES = ("enum", "boolean", "number", "string")

AnswerValue = str | bool | int | float

_YES = frozenset({"y", "yes", "true", "1", "on"})
_NO = frozenset({"n", "no", "false", "0", "off"})


@dataclass(frozen=True, slots=True)
class AnswerSchema:
    """What an answer may be. ``choices``: an enum's; ``minimum``/``maximum``/``integer``:
    a number's; ``min_length``/``max_length``/``pattern``: a string's; ``default``: the
    answer taken when the person declines (and the one the planner assumes)."""

    type: str
    choices: tuple[str, ...] = ()
    minimum: int | float | None = None
    maximum: int | float | None = None
    integer: bool = False
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    default: AnswerValue | None = None

    def to_json(self) -> dict[str, JSONValue]:
        """The schema as JSON: its type and the constraints it sets (none left at null)."""
        out: dict[str, JSONValue] = {"type": self.type}
        if self.choices:
            out["choices"] = list(self.choices)
        if self.integer:
            out["integer"] = True
        for key in ("minimum", "maximum", "min_length", "max_length", "pattern", "default"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    def describe(self) -> str:
        """The schema as people read it: ``one of: all, top5``, ``yes or no``, ..."""
        if self.type == "enum":
            return "one of: " + ", ".join(self.choices)
        if self.type == "boolean":
            return "yes or no"
        if self.type == "number":
            kind = "a whole number" if self.integer else "a number"
            bounds = []
            if self.minimum is not None:
                bounds.append(f">= {self.minimum}")
            if self.maximum is not None:
                bounds.append(f"<= {self.maximum}")
            return kind + (f" ({', '.join(bounds)})" if bounds else "")
        parts = []
        if self.min_length is not None:
            parts.append(f"at least {self.min_length} characters")
        if self.max_length is not None:
            parts.append(f"at most {self.max_length} characters")
        if self.pattern is not None:
            parts.append(f"matching {self.pattern}")
        return "text" + (f" ({', '.join(parts)})" if parts else "")


@dataclass(frozen=True, slots=True)
class AskSpec:
    """An ask action's question (``{param}`` placeholders name its parameters), its
    answer schema, and its effects by answer (``branches``: answer key -> literals)."""

    question: str
    answer: AnswerSchema
    common: tuple[Literal, ...] = ()
    branches: tuple[tuple[str, tuple[Literal, ...]], ...] = ()

    @property
    def assumed(self) -> AnswerValue | None:
        """The answer the planner plans with until the person gives theirs."""
        if self.answer.default is not None:
            return self.answer.default
        if self.answer.type == "enum":
            return self.answer.choices[0]
        if self.answer.type == "boolean":
            return True
        return None

    def effects_of(self, value: AnswerValue | None) -> tuple[Literal, ...]:
        """The effects of answering ``value``: the common ones, then its branch's."""
        if value is None:
            return self.common
        key = answer_key(value)
        for branch, literals in self.branches:
            if branch == key:
                return (*self.common, *literals)
        return self.common


def answer_key(value: AnswerValue) -> str:
    """The key of ``value`` among an ask's branches (``true``/``false`` for yes/no)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def check_answer(schema: AnswerSchema, value: object, *, where: str = "the answer") -> AnswerValue:
    """``value`` if ``schema`` allows it (AnswerError with the schema's reason if not)."""
    hint = f"answer {schema.describe()}"
    if schema.type == "enum":
        if isinstance(value, str) and value in schema.choices:
            return value
        raise AnswerError(f"{where}: {value!r} is not one of the choices", hint=hint)
    if schema.type == "boolean":
        if isinstance(value, bool):
            return value
        raise AnswerError(f"{where}: {value!r} is not yes or no", hint=hint)
    if schema.type == "number":
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise AnswerError(f"{where}: {value!r} is not a number", hint=hint)
        if schema.integer and not float(value).is_integer():
            raise AnswerError(f"{where}: {value!r} is not a whole number", hint=hint)
        if schema.minimum is not None and value < schema.minimum:
            raise AnswerError(
                f"{where}: {value!r} is below the minimum {schema.minimum}", hint=hint
            )
        if schema.maximum is not None and value > schema.maximum:
            raise AnswerError(
                f"{where}: {value!r} is above the maximum {schema.maximum}", hint=hint
            )
        return int(value) if schema.integer else value
    if not isinstance(value, str):
        raise AnswerError(f"{where}: {value!r} is not text", hint=hint)
    if schema.min_length is not None and len(value) < schema.min_length:
        raise AnswerError(f"{where}: shorter than {schema.min_length} characters", hint=hint)
    if schema.max_length is not None and len(value) > schema.max_length:
        raise AnswerError(f"{where}: longer than {schema.max_length} characters", hint=hint)
    if schema.pattern is not None and re.fullmatch(schema.pattern, value) is None:
        raise AnswerError(f"{where}: {value!r} does not match {schema.pattern}", hint=hint)
    return value


def answer_from_text(schema: AnswerSchema, text: str, *, where: str = "the answer") -> AnswerValue:
    """An answer typed as text (the terminal, ``plansmith answer``), checked."""
    raw = text.strip()
    if schema.type == "boolean":
        low = raw.lower()
        if low in _YES:
            return True
        if low in _NO:
            return False
        raise AnswerError(f"{where}: {raw!r} is not yes or no", hint="answer yes or no")
    if schema.type == "number":
        try:
            number: int | float = int(raw)
        except ValueError:
            try:
                number = float(raw)
            except ValueError:
                raise AnswerError(
                    f"{where}: {raw!r} is not a number", hint=f"answer {schema.describe()}"
                ) from None
        return check_answer(schema, number, where=where)
    return check_answer(schema, raw if schema.type == "enum" else text, where=where)


def answered_schema(schema: ActionSchema, value: AnswerValue | None) -> ActionSchema:
    """``schema`` (an ask action) with the effects of the answer ``value``."""
    if schema.ask is None:
        return schema
    return replace(schema, effect=schema.ask.effects_of(value))


def answer_json_schema(schema: AnswerSchema) -> dict[str, object]:
    """The answer as a JSON Schema property (what MCP elicitation and the web form ask)."""
    out: dict[str, object]
    if schema.type == "enum":
        out = {"type": "string", "enum": list(schema.choices)}
    elif schema.type == "boolean":
        out = {"type": "boolean"}
    elif schema.type == "number":
        out = {"type": "integer" if schema.integer else "number"}
        if schema.minimum is not None:
            out["minimum"] = schema.minimum
        if schema.maximum is not None:
            out["maximum"] = schema.maximum
    else:
        out = {"type": "string"}
        if schema.min_length is not None:
            out["minLength"] = schema.min_length
        if schema.max_length is not None:
            out["maxLength"] = schema.max_length
        if schema.pattern is not None:
            out["pattern"] = schema.pattern
    if schema.default is not None:
        out["default"] = schema.default
    return out


def answer_schema_from_json(value: JSONValue) -> AnswerSchema:
    """The answer schema an ask step's arguments hold (``AnswerSchema.to_json``)."""
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise BindingError("an ask step's arguments hold no answer schema")
    choices = value.get("choices", [])
    default = value.get("default")
    return AnswerSchema(
        str(value["type"]),
        choices=tuple(str(c) for c in choices) if isinstance(choices, list) else (),
        minimum=_num(value.get("minimum")),
        maximum=_num(value.get("maximum")),
        integer=value.get("integer") is True,
        min_length=_int(value.get("min_length")),
        max_length=_int(value.get("max_length")),
        pattern=_text(value.get("pattern")),
        default=default if isinstance(default, str | bool | int | float) else None,
    )


def _num(value: JSONValue) -> int | float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(value: JSONValue) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: JSONValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
