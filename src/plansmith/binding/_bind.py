"""``bind()``: attach a live tool to every plan step and check it all before anything runs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace

import jsonschema

from plansmith.binding._extract import check_jsonpath
from plansmith.binding._model import Binding, Bindings, BoundPlan, BoundStep, ToolCatalog
from plansmith.binding._refs import EnvRef, OutputRef, ParamRef, Ref, RunRef, find_refs
from plansmith.binding._render import as_text, render
from plansmith.errors import BindingError, Location, PlansmithError
from plansmith.model import Domain, JSONValue, Plan, Step, StepArg

__all__ = ["bind", "step_key", "StepKey", "PLACEHOLDER"]

PLACEHOLDER = "\x00plansmith:runtime-value\x00"
#: A step as output references name it: the action and its arguments as text
#: (``${move(a, 3).out}``): strings as they are, other arguments as JSON.
StepKey = tuple[str, tuple[str, ...]]


def step_key(step: Step) -> StepKey:
    """The key of ``step`` among the producers output references can name."""
    return step.action, tuple(as_text(a) for a in step.args)


def bind(
    plan: Plan,
    domain: Domain,
    bindings: Bindings,
    catalog: ToolCatalog,
    *,
    env: Mapping[str, str] | None = None,
    available: Mapping[StepKey, str] | None = None,
) -> BoundPlan:
    """Bind every step of ``plan`` to its tool; raise one ``BindingError`` with every problem.

    ``available`` names steps outside ``plan`` (from earlier in the run) whose
    outputs references may use: ``step_key(step) -> step id``. A parameter
    referenced as the whole argument string keeps its JSON type (a number stays a
    number); inside a longer string it is rendered as text.
    """
    env = env or {}
    producers_by_key: dict[StepKey, str] = dict(available or {})
    for s in plan.steps:
        producers_by_key.setdefault(step_key(s), s.id)
    problems: list[PlansmithError] = []
    reported_actions: set[str] = set()
    bound: list[BoundStep] = []
    for step in plan.steps:
        binding = bindings.get(step.action)
        if binding is None:
            if step.action not in reported_actions:
                reported_actions.add(step.action)
                problems.append(
                    BindingError(
                        f"action {step.action!r} has no binding",
                        location=Location(bindings.source, step=step.id),
                        hint=f"add `{step.action}:` with a server and a tool under `bindings:`",
                    )
                )
            continue
        result = _bind_step(
            step,
            domain=domain,
            binding=binding,
            bindings=bindings,
            catalog=catalog,
            env=env,
            producers_by_key=producers_by_key,
            plan=plan,
            problems=problems,
        )
        if result is not None:
            bound.append(result)
    _check_output_paths(plan, bindings, problems)
    if problems:
        merged = _merge_across_steps(problems)
        raise BindingError(
            f"{len(merged)} binding problem(s)",
            location=Location(bindings.source),
            hint="fix every listed problem; `plansmith check` lists them without running",
            problems=merged,
        )
    return BoundPlan(plan.hash, tuple(bound))


_STEPS_SHOWN = 5  # the steps a problem met in many names, then how many more


def _merge_across_steps(problems: list[PlansmithError]) -> tuple[PlansmithError, ...]:
    """One problem for each thing to fix: a binding's fault that every step of its
    action meets is listed once, with the steps it stops (first seen first)."""
    groups: dict[tuple[object, ...], list[PlansmithError]] = {}
    for problem in problems:
        loc = problem.location
        where = (loc.file, loc.line, loc.column) if loc is not None else None
        key = (type(problem), problem.message, problem.hint, where)
        groups.setdefault(key, []).append(problem)
    merged: list[PlansmithError] = []
    for group in groups.values():
        first = group[0]
        steps = [p.location.step for p in group if p.location is not None and p.location.step]
        if len(group) == 1 or len(steps) != len(group):
            merged.extend(group)
            continue
        shown = ", ".join(steps[:_STEPS_SHOWN])
        more = len(steps) - _STEPS_SHOWN
        shown += f" and {more} more" if more > 0 else ""
        assert first.location is not None
        merged.append(
            type(first)(
                f"{first.message} (in {len(steps)} steps: {shown})",
                location=replace(first.location, step=None),
                hint=first.hint,
            )
        )
    return tuple(merged)


def _here(binding: Binding, key: str, step: Step) -> Location:
    loc = binding.where(key) or Location()
    return replace(loc, step=step.id)


def _bind_step(
    step: Step,
    *,
    domain: Domain,
    binding: Binding,
    bindings: Bindings,
    catalog: ToolCatalog,
    env: Mapping[str, str],
    producers_by_key: Mapping[StepKey, str],
    plan: Plan,
    problems: list[PlansmithError],
) -> BoundStep | None:
    schema = domain.action(step.action)
    names = tuple(p.name for p in schema.parameters) if schema else ()
    params: dict[str, StepArg] = dict(zip(names, step.args, strict=False))
    start = len(problems)
    if not catalog.has_server(binding.server):
        problems.append(
            BindingError(
                f"unknown server {binding.server!r} for action {step.action!r}",
                location=_here(binding, "server", step),
                hint=f"servers are: {', '.join(n for n, _ in catalog.servers) or 'none'}",
            )
        )
    elif catalog.tool(binding.server, binding.tool) is None:
        problems.append(
            BindingError(
                f"server {binding.server!r} has no tool {binding.tool!r}",
                location=_here(binding, "tool", step),
                hint=f"its tools are: {', '.join(catalog.tool_names(binding.server)) or 'none'}",
            )
        )
    producers: dict[str, str] = {}
    for inner, ref in find_refs(binding.arguments):
        where = _here(binding, "arguments", step)
        if ref is None:
            problems.append(BindingError(f"not a reference: ${{{inner}}}", location=where))
        elif isinstance(ref, ParamRef) and ref.name not in params:
            problems.append(
                BindingError(
                    f"${{{inner}}}: {step.action!r} has no parameter {ref.name!r}",
                    location=where,
                    hint=f"its parameters are: {', '.join(names) or 'none'}",
                )
            )
        elif isinstance(ref, EnvRef) and ref.name not in env:
            problems.append(
                BindingError(f"${{{inner}}}: environment variable not set", location=where)
            )
        elif isinstance(ref, OutputRef):
            args = tuple(as_text(params[a]) if a in params else a for a in ref.args)
            producer = producers_by_key.get((ref.action, args))
            if producer is None or producer == step.id:
                problems.append(
                    BindingError(
                        f"${{{inner}}}: no step {ref.action}({', '.join(args)}) in the plan",
                        location=where,
                        hint="a reference must name an earlier step of the same plan",
                    )
                )
            else:
                producers[inner] = producer
                _check_output_name(inner, ref, bindings, where, problems)
    if len(problems) > start:
        return None
    tool = catalog.tool(binding.server, binding.tool)
    if tool is not None and tool.input_schema:
        args_value = render(binding.arguments, lambda r: _bind_time_value(r, params, env))
        _check_schema(args_value, tool.input_schema, binding, step, problems)
    in_plan = {s.id for s in plan.steps}
    data_edges = tuple(p for p in producers.values() if p in in_plan and p not in step.after)
    return BoundStep(
        step=step,
        server=binding.server,
        tool=binding.tool,
        arguments=binding.arguments,
        params=tuple(params.items()),
        producers=tuple(sorted(producers.items())),
        outputs=binding.outputs,
        policy=binding.policy,
        tier=binding.policy.tier or step.tier,
        after=tuple(dict.fromkeys(step.after + data_edges)),
    )


def _bind_time_value(ref: Ref, params: Mapping[str, StepArg], env: Mapping[str, str]) -> JSONValue:
    if isinstance(ref, ParamRef):
        return params[ref.name]
    if isinstance(ref, EnvRef):
        return env[ref.name]
    if isinstance(ref, RunRef):
        return f"<run.{ref.field}>"
    return PLACEHOLDER


def _check_schema(
    value: JSONValue,
    schema: dict[str, JSONValue],
    binding: Binding,
    step: Step,
    problems: list[PlansmithError],
) -> None:
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        validator = cls(schema)
        errors = list(validator.iter_errors(value))
    except jsonschema.SchemaError as error:
        problems.append(
            BindingError(f"tool {binding.tool!r} has an invalid inputSchema: {error.message}")
        )
        return
    for err in errors:
        if err.instance == PLACEHOLDER or PLACEHOLDER in str(err.instance):
            continue  # filled at run time by another step's output
        path = "/".join(str(p) for p in err.absolute_path) or "(arguments)"
        problems.append(
            BindingError(
                f"argument {path} of {binding.tool!r} fails its inputSchema: {err.message}",
                location=_here(binding, "arguments", step),
                hint=_schema_hint(binding.tool, path, err.schema),
            )
        )


def _schema_hint(tool: str, path: str, schema: object) -> str:
    """The part of ``tool``'s inputSchema that an argument failed, as compact JSON."""
    text = json.dumps(schema, separators=(",", ":"), ensure_ascii=False, default=str)
    if len(text) > 240:
        text = text[:239] + "…"
    return f"{tool}'s inputSchema at {path}: {text}"


def _check_output_name(
    inner: str,
    ref: OutputRef,
    bindings: Bindings,
    where: Location,
    problems: list[PlansmithError],
) -> None:
    """A reference to an output its producer's binding does not extract (checked
    whether or not either step has other problems)."""
    producer = bindings.get(ref.action)
    if producer is None:
        return  # that action has no binding: said once, where its steps are bound
    outputs = dict(producer.outputs)
    if ref.output not in outputs:
        problems.append(
            BindingError(
                f"${{{inner}}}: {ref.action!r} has no output {ref.output!r}",
                location=where,
                hint="its outputs are: " + (", ".join(outputs) or "none"),
            )
        )


def _check_output_paths(plan: Plan, bindings: Bindings, problems: list[PlansmithError]) -> None:
    """The JSONPath of every output of every action in the plan."""
    for action in dict.fromkeys(s.action for s in plan.steps):
        binding = bindings.get(action)
        if binding is None:
            continue
        for name, path in binding.outputs:
            message = check_jsonpath(path)
            if message is not None:
                problems.append(
                    BindingError(
                        f"output {name!r} of {action!r}: bad JSONPath: {message.splitlines()[0]}",
                        location=binding.where(f"outputs.{name}"),
                    )
                )
