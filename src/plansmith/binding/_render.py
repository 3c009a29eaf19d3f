"""Fill an argument template: every ``${...}`` replaced by its value."""

from __future__ import annotations

import json
from collections.abc import Callable

from plansmith.binding._refs import REF_RE, TOKEN_RE, Ref, parse_ref
from plansmith.errors import BindingError
from plansmith.model import JSONValue

__all__ = ["render", "as_text"]

Resolver = Callable[[Ref], JSONValue]


def as_text(value: JSONValue) -> str:
    """A value as it appears inside a longer string: strings as-is, the rest as compact
    JSON with its characters as they are (no ASCII escapes)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def render(template: JSONValue, resolve: Resolver) -> JSONValue:
    """``template`` with its references resolved.

    A string that is exactly one reference keeps the value's JSON type; a
    reference inside a longer string is rendered as text; ``$${`` is a literal ``${``.
    """
    if isinstance(template, str):
        whole = REF_RE.fullmatch(template)
        if whole is not None:
            return resolve(_parsed(whole.group(1)))
        if "${" not in template:
            return template
        return TOKEN_RE.sub(
            lambda m: "${" if m.group(1) is None else as_text(resolve(_parsed(m.group(1)))),
            template,
        )
    if isinstance(template, list):
        return [render(item, resolve) for item in template]
    if isinstance(template, dict):
        return {as_text(render(k, resolve)): render(v, resolve) for k, v in template.items()}
    return template


def _parsed(inner: str) -> Ref:
    ref = parse_ref(inner)
    if ref is None:
        raise BindingError(
            f"not a reference: ${{{inner}}}",
            hint="use ${param}, ${action(args).output}, ${env.NAME}, ${run.id}, ${run.dir}"
            " or ${fact(predicate(args)).output}",
        )
    return ref
