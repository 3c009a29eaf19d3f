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

An ``${env.NAME}`` is checked with its value, which may be a secret (an API token): the
message of an argument that holds one is made from the error's keyword and the
schema's value for it, never from jsonschema's message, which quotes the value. A key
holding a reference is checked as written (it is a problem of its own).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

import jsonschema
from jsonschema.exceptions import ValidationError

from plansmith.binding._located import here, here_argument
from plansmith.binding._model import Binding
from plansmith.binding._refs import (
    REF_RE,
    EnvRef,
    ParamRef,
    Ref,
    RunRef,
    env_refs,
    key_as_checked,
    pointer_part,
    template_at,
)
from plansmith.binding._render import render
from plansmith.errors import BindingError, PlansmithError
from plansmith.model import JSONValue, Step, StepArg

__all__ = ["PLACEHOLDER", "bind_time_arguments", "bind_time_value", "check_schema"]

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
#: keywords whose message quotes no value: the schema's names, or keys (checked as written)
_VALUE_UNQUOTED = frozenset(
    {"required", "dependentRequired", "additionalProperties", "unevaluatedProperties"}
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


def bind_time_arguments(
    arguments: JSONValue, params: Mapping[str, StepArg], env: Mapping[str, str]
) -> JSONValue:
    """``arguments`` (a binding's template) as the schema check reads them: each value
    rendered with ``bind_time_value``, each key as ``key_as_checked`` writes it."""
    if isinstance(arguments, dict):
        return {
            key_as_checked(k): bind_time_arguments(v, params, env) for k, v in arguments.items()
        }
    if isinstance(arguments, list):
        return [bind_time_arguments(item, params, env) for item in arguments]
    return render(arguments, lambda r: bind_time_value(r, params, env))


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
        written, followed = template_at(binding.arguments, err.absolute_path)
        secrets = env_refs(written)
        if secrets and err.validator not in _VALUE_UNQUOTED:
            message = f"{_unshown(written, secrets)} {_failed(err)}"
        elif isinstance(err.instance, str) and PLACEHOLDER in err.instance:
            shown = repr(written) if followed and isinstance(written, str) else None
            message = (
                message.replace(repr(err.instance), shown)
                if shown is not None
                else message.replace(_SHOWN_PLACEHOLDER, "${...}")
            )
        if isinstance(err.instance, str) and PLACEHOLDER in err.instance:
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


def _unshown(written: JSONValue, secrets: tuple[str, ...]) -> str:
    """What failed, told by the template that holds ``secrets`` (its value not shown)."""
    if isinstance(written, str):
        told = written if REF_RE.fullmatch(written) else repr(written)
        return f"{told} (its value, not shown)"
    kind = "object" if isinstance(written, dict) else "array"
    return f"the {kind} that holds {', '.join(secrets)} (its value, not shown)"


def _failed(error: ValidationError) -> str:
    """What ``error`` says of its instance, from its keyword and the schema's value for it
    (never from its message, which quotes the instance)."""
    keyword, wanted = error.validator, error.validator_value
    if keyword == "type":
        types = wanted if isinstance(wanted, list) else [wanted]
        return f"is not of type {', '.join(repr(t) for t in types)}"
    said = {
        "pattern": f"does not match {wanted!r}",
        "maxLength": f"is longer than {wanted} characters",
        "minLength": f"is shorter than {wanted} characters",
        "maxItems": f"has more than {wanted} items",
        "minItems": f"has fewer than {wanted} items",
        "maxProperties": f"has more than {wanted} properties",
        "minProperties": f"has fewer than {wanted} properties",
        "enum": f"is not one of {wanted!r}",
        "const": f"is not {wanted!r}",
        "format": f"is not a {wanted!r}",
        "uniqueItems": "has non-unique elements",
        "not": f"should not be valid under {_compact(wanted)}",
        "anyOf": "is not valid under any of the given schemas",
    }.get(str(keyword))
    if said is not None:
        return said
    if keyword == "oneOf":
        return (
            "is not valid under any of the given schemas"
            if error.context
            else "is valid under more than one of the given schemas"
        )
    if not isinstance(keyword, str):  # a ``false`` schema: jsonschema may give its parent's path
        return "is or holds a value where the schema is false"
    return f"fails the schema's {keyword!r}"


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


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
    text = _compact(schema)
    if len(text) > 240:
        text = text[:239] + "…"
    return f"{tool}'s inputSchema at {path}: {text}"
