"""``bind()``'s check of a step's arguments against its tool's ``inputSchema``.

What another step fills at run time is ``PLACEHOLDER`` while the arguments are checked,
and a schema error is a problem only if it holds whatever that value turns out to be:

- a string that is one reference can be any JSON value: nothing about it is known;
- text around a reference is a string: its type is known, not its content (a
  ``pattern``, ``maxLength`` or ``enum`` is left to the tool);
- a mapping or list that holds such a value has the keys and the length it is
  written with (``required``, ``additionalProperties: false``, ``minItems``).

An error under ``anyOf``/``oneOf`` holds when every branch fails for a known reason;
one under a ``then``/``else`` is left alone (its ``if`` may have read the placeholder).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

import jsonschema
from jsonschema.exceptions import ValidationError

from plansmith.binding._located import here, here_argument
from plansmith.binding._model import Binding
from plansmith.binding._refs import EnvRef, ParamRef, Ref, RunRef, pointer_part
from plansmith.errors import BindingError, PlansmithError
from plansmith.model import JSONValue, Step, StepArg

__all__ = ["PLACEHOLDER", "bind_time_value", "check_schema"]

PLACEHOLDER = "\x00plansmith:runtime-value\x00"
_SHOWN_PLACEHOLDER = repr(PLACEHOLDER)[1:-1]  # as it appears inside a repr
#: what a mapping's keys or a list's length decide, whatever the values inside
_SHAPE = frozenset(
    {
        "type",
        "required",
        "additionalProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "minItems",
        "maxItems",
    }
)
_TEXT_HINT = (
    "text around a reference is a string; write the reference alone"
    ' ("${act(x).out}") to pass its value with its JSON type'
)


def bind_time_value(ref: Ref, params: Mapping[str, StepArg], env: Mapping[str, str]) -> JSONValue:
    """A reference's value for the schema check; what is not known (another step's
    output, a parameter or variable already reported missing) is the placeholder."""
    if isinstance(ref, ParamRef):
        return params.get(ref.name, PLACEHOLDER)
    if isinstance(ref, EnvRef):
        return env.get(ref.name, PLACEHOLDER)
    if isinstance(ref, RunRef):
        return f"<run.{ref.field}>"
    return PLACEHOLDER


def check_schema(
    value: JSONValue,
    schema: dict[str, JSONValue],
    binding: Binding,
    step: Step,
    problems: list[PlansmithError],
) -> None:
    """Each error of ``value`` (the arguments, rendered at bind time) against ``schema``
    that holds at run time too, located at the argument at fault."""
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        errors = list(cls(schema).iter_errors(value))
    except jsonschema.SchemaError as error:
        problems.append(_bad_schema(binding, step, error.message))
        return
    except Exception as error:  # the schema breaks the validator: a bad $ref, pattern, ...
        problems.append(_bad_schema(binding, step, f"{type(error).__name__}: {error}"))
        return
    for err in errors:
        if not _holds_anyway(err):
            continue  # it depends on a value another step fills at run time
        path = "/".join(str(p) for p in err.absolute_path) or "(arguments)"
        pointer = "".join("/" + pointer_part(p) for p in err.absolute_path)
        message, hint = err.message, _schema_hint(binding.tool, path, err.schema)
        if isinstance(err.instance, str) and PLACEHOLDER in err.instance:
            written = _written(binding.arguments, err.absolute_path)
            shown = repr(written) if isinstance(written, str) else None
            message = (
                message.replace(repr(err.instance), shown)
                if shown is not None
                else message.replace(_SHOWN_PLACEHOLDER, "${...}")
            )
            hint = f"{hint}; {_TEXT_HINT}"
        problems.append(
            BindingError(
                f"argument {path} of {binding.tool!r} fails its inputSchema: {message}",
                location=here_argument(binding, pointer, step),
                hint=hint,
            )
        )


def _holds_anyway(error: ValidationError) -> bool:
    """Whether ``error`` holds whatever values the placeholders stand for."""
    instance = error.instance
    if not _holds_placeholder(instance):
        return True
    if instance == PLACEHOLDER or _conditional(error.absolute_schema_path):
        return False
    if error.context:  # anyOf, oneOf: no branch matched; each must fail for sure
        branches: dict[object, list[ValidationError]] = {}
        for sub in error.context:
            first = sub.relative_schema_path[0] if sub.relative_schema_path else None
            branches.setdefault(first, []).append(sub)
        return all(any(_holds_anyway(sub) for sub in subs) for subs in branches.values())
    if isinstance(instance, str):
        return error.validator == "type"
    return error.validator in _SHAPE


def _conditional(schema_path: Iterable[object]) -> bool:
    return any(part in ("then", "else") for part in schema_path)


def _holds_placeholder(value: object) -> bool:
    if isinstance(value, str):
        return PLACEHOLDER in value
    if isinstance(value, dict):
        return any(_holds_placeholder(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_placeholder(v) for v in value)
    return False


def _written(arguments: JSONValue, path: Iterable[object]) -> JSONValue:
    """The template's value at ``path`` of the rendered arguments, or None."""
    value = arguments
    for part in path:
        if isinstance(value, dict) and isinstance(part, str):
            value = value.get(part)
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            value = value[part]
        else:
            return None
    return value


def _bad_schema(binding: Binding, step: Step, message: str) -> BindingError:
    first = message.splitlines()[0] if message else "invalid"
    if len(first) > 200:
        first = first[:199] + "…"
    return BindingError(
        f"tool {binding.tool!r} of server {binding.server!r} lists an invalid inputSchema: {first}",
        location=here(binding, "tool", step),
        hint="the server's tool description is at fault, not the binding: its arguments"
        " cannot be checked until the server lists a valid JSON Schema",
    )


def _schema_hint(tool: str, path: str, schema: object) -> str:
    """The part of ``tool``'s inputSchema that an argument failed, as compact JSON."""
    text = json.dumps(schema, separators=(",", ":"), ensure_ascii=False, default=str)
    if len(text) > 240:
        text = text[:239] + "…"
    return f"{tool}'s inputSchema at {path}: {text}"
