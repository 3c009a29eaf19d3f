"""Read a bindings file (YAML or JSON) into :class:`Bindings`, with a location per field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from plansmith.binding._model import Binding, Bindings, StepPolicy
from plansmith.errors import BindingError, Location, ParseError, PlansmithError
from plansmith.model import JSONValue, Tier

__all__ = ["load_bindings", "parse_bindings"]

_FIELDS = {"server", "tool", "arguments", "outputs", "timeout", "retries", "idempotent", "tier"}


def load_bindings(path: str | Path) -> Bindings:
    """Read the bindings file at ``path``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as error:
        raise BindingError(
            f"cannot read bindings file: {error.strerror}", location=Location(str(p))
        ) from None
    return parse_bindings(text, source=str(p))


def _loc(node: yaml.Node, source: str | None) -> Location:
    return Location(source, node.start_mark.line + 1, node.start_mark.column + 1)


def _value(node: yaml.Node, source: str | None) -> JSONValue:
    """A YAML node as plain JSON (scalars resolved by YAML's safe rules)."""
    if isinstance(node, yaml.MappingNode):
        out: dict[str, JSONValue] = {}
        for k, v in node.value:
            out[str(_value(k, source))] = _value(v, source)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_value(v, source) for v in node.value]
    loader = yaml.SafeLoader("")
    value: Any = loader.construct_object(node, deep=True)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def parse_bindings(text: str, *, source: str | None = None) -> Bindings:
    """Parse bindings text; every problem is reported at once in one ``BindingError``."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        loc = Location(source, mark.line + 1, mark.column + 1) if mark else Location(source)
        raise ParseError(
            f"not valid YAML/JSON: {getattr(error, 'problem', error)}", location=loc
        ) from None
    top = _mapping_items(root)
    table = {str(_value(k, source)): (k, v) for k, v in top}
    if "bindings" not in table:
        raise BindingError(
            "a bindings file needs a top-level 'bindings' mapping",
            location=Location(source, 1),
            hint="write `bindings:` then one entry per action name",
        )
    problems: list[PlansmithError] = []
    bindings: list[Binding] = []
    _, body = table["bindings"]
    if not isinstance(body, yaml.MappingNode):
        raise BindingError(
            "'bindings' must be a mapping of action names", location=_loc(body, source)
        )
    for key_node, entry in body.value:
        action = str(_value(key_node, source))
        try:
            bindings.append(_binding(action, key_node, entry, source))
        except BindingError as error:
            problems.extend(error.problems or (error,))
    if problems:
        raise BindingError(
            f"{len(problems)} problem(s) in bindings",
            location=Location(source),
            problems=tuple(problems),
        )
    return Bindings(tuple(bindings), source)


def _mapping_items(node: yaml.Node | None) -> list[tuple[yaml.Node, yaml.Node]]:
    if not isinstance(node, yaml.MappingNode):
        return []
    return list(node.value)


def _binding(action: str, key_node: yaml.Node, node: yaml.Node, source: str | None) -> Binding:
    loc = _loc(key_node, source)
    if not isinstance(node, yaml.MappingNode):
        raise BindingError(f"binding of {action!r} must be a mapping", location=loc)
    fields: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    problems: list[PlansmithError] = []
    for k, v in node.value:
        name = str(_value(k, source))
        if name not in _FIELDS:
            problems.append(
                BindingError(
                    f"unknown field {name!r} in the binding of {action!r}",
                    location=_loc(k, source),
                    hint=f"fields are: {', '.join(sorted(_FIELDS))}",
                )
            )
        fields[name] = (k, v)
    problems.extend(
        BindingError(f"binding of {action!r} has no {required!r}", location=loc)
        for required in ("server", "tool")
        if required not in fields
    )
    locations: list[tuple[str, Location]] = [(n, _loc(v, source)) for n, (_, v) in fields.items()]

    def get(name: str) -> JSONValue:
        return _value(fields[name][1], source) if name in fields else None

    outputs: list[tuple[str, str]] = []
    if "outputs" in fields:
        out_node = fields["outputs"][1]
        if isinstance(out_node, yaml.MappingNode):
            for k, v in out_node.value:
                oname, path = str(_value(k, source)), _value(v, source)
                if not isinstance(path, str):
                    problems.append(
                        BindingError(
                            f"output {oname!r} must be a JSONPath string", location=_loc(v, source)
                        )
                    )
                    continue
                outputs.append((oname, path))
                locations.append((f"outputs.{oname}", _loc(v, source)))
        else:
            problems.append(
                BindingError(
                    "'outputs' must map names to JSONPaths", location=_loc(out_node, source)
                )
            )
    policy = _policy(action, fields, get, source, problems)
    if problems:
        raise BindingError(
            f"binding of {action!r} is malformed", location=loc, problems=tuple(problems)
        )
    arguments = get("arguments")
    return Binding(
        action=action,
        server=str(get("server")),
        tool=str(get("tool")),
        arguments=arguments if arguments is not None else {},
        outputs=tuple(outputs),
        policy=policy,
        loc=loc,
        locations=tuple(locations),
    )


def _policy(
    action: str,
    fields: dict[str, tuple[yaml.Node, yaml.Node]],
    get: Any,
    source: str | None,
    problems: list[PlansmithError],
) -> StepPolicy:
    def bad(name: str, what: str) -> None:
        problems.append(
            BindingError(
                f"{name!r} of {action!r} must be {what}", location=_loc(fields[name][1], source)
            )
        )

    timeout, retries, idempotent, tier = (
        get("timeout"),
        get("retries"),
        get("idempotent"),
        get("tier"),
    )
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        bad("timeout", "a positive number of seconds")
        timeout = None
    if retries is not None and (
        isinstance(retries, bool) or not isinstance(retries, int) or retries < 0
    ):
        bad("retries", "a whole number >= 0")
        retries = None
    if idempotent is not None and not isinstance(idempotent, bool):
        bad("idempotent", "true or false")
        idempotent = None
    tier_value: Tier | None = None
    if tier is not None:
        try:
            tier_value = Tier(str(tier))
        except ValueError:
            bad("tier", "read, write or execute")
    return StepPolicy(
        timeout=float(timeout) if isinstance(timeout, int | float) else None,
        retries=retries if isinstance(retries, int) else 0,
        idempotent=bool(idempotent),
        tier=tier_value,
    )
