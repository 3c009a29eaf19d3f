"""``bind()``: attach a live tool to every plan step and check it all before anything runs."""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

from plansmith.binding._ask import is_ask_step, with_ask_bindings
from plansmith.binding._context import (
    ContextProducers,
    bind_context,
    bind_time_param,
    context_type_checks,
)
from plansmith.binding._extract import check_jsonpath
from plansmith.binding._fact import (
    FactOutputMissingError,
    FactProducerMissingError,
    FactProducers,
)
from plansmith.binding._located import here, here_argument
from plansmith.binding._model import Binding, Bindings, BoundPlan, BoundStep, ToolCatalog
from plansmith.binding._refs import (
    KEY_HINT,
    EnvRef,
    FactRef,
    OutputRef,
    ParamRef,
    find_refs_at,
    keys_with_refs,
)
from plansmith.binding._render import as_text
from plansmith.binding._schema_check import PLACEHOLDER, bind_time_arguments, check_schema
from plansmith.binding._types import TypeCheck, type_checks
from plansmith.errors import BindingError, Location, PlansmithError
from plansmith.formats.yaml_nodes import did_you_mean
from plansmith.model import Domain, JSONValue, Plan, Step, StepArg

__all__ = ["bind", "merge_across_steps", "step_key", "StepKey", "PLACEHOLDER"]

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
    configured: Sequence[str] | None = None,
    unavailable: Collection[str] = (),
) -> BoundPlan:
    """Bind every step of ``plan`` to its tool; raise one ``BindingError`` with every problem.

    ``available`` names steps outside ``plan`` (from earlier in the run) whose
    outputs references may use: ``step_key(step) -> step id``, in the order they ran
    (a ``${fact(p(x)).out}`` reads the last step before its own, in ``plan`` or else
    among these, that makes ``p(x)`` true: see ``_fact``). A parameter
    referenced as the whole argument string keeps its JSON type (a number stays a
    number); inside a longer string it is rendered as text. ``configured`` names every
    server of the servers file (the catalog holds those started), for the hint of an
    unknown server. A binding of an action the domain does not have is a problem too
    (a misspelt action name would otherwise go unnoticed). The tools of the servers in
    ``unavailable`` (configured, but they did not start) are not checked; everything
    else about their steps is, so that ``plansmith check`` lists it all at once.
    """
    env = env or {}
    producers_by_key: dict[StepKey, str] = dict(available or {})
    for s in plan.steps:
        producers_by_key.setdefault(step_key(s), s.id)
    facts = FactProducers(
        domain, (available or {}).items(), ((step_key(s), s.id) for s in plan.steps)
    )
    contexts = ContextProducers(
        bindings, (available or {}).items(), ((step_key(s), s.id) for s in plan.steps)
    )
    bound: list[BoundStep] = []
    references: dict[tuple[str, str], Location] = {}  # (step, producer) -> where named
    known_types: dict[int, tuple[Binding, dict[str, JSONValue], tuple[TypeCheck, ...]]] = {}
    bindings, problems = with_ask_bindings(bindings, domain)
    for step in plan.steps:
        binding = bindings.get(step.action)
        if binding is None:  # one problem a step: listed once, with its steps (below)
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
            facts=facts,
            contexts=contexts,
            plan=plan,
            problems=problems,
            references=references,
            configured=configured,
            unavailable=unavailable,
            known_types=known_types,
        )
        if result is not None:
            bound.append(result)
    _check_actions(bindings, domain, problems)
    _check_output_paths(plan, bindings, problems)
    _check_cycles(bound, references, problems)
    if problems:
        merged = merge_across_steps(problems)
        raise BindingError(
            f"{len(merged)} binding problem(s)",
            location=Location(bindings.source),
            hint="fix every listed problem; `plansmith check` lists them without running",
            problems=merged,
        )
    return BoundPlan(plan.hash, tuple(bound))


_STEPS_SHOWN = 5  # the steps a problem met in many names, then how many more


def merge_across_steps(problems: Sequence[PlansmithError]) -> tuple[PlansmithError, ...]:
    """One problem for each thing to fix: a binding's fault that every step of its
    action meets is listed once, with the steps it stops (first seen first). ``bind``
    reports its problems so, and the engine those of a resume (an unset ``${env.X}``)."""
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


def _unknown_server_hint(
    server: str, catalog: ToolCatalog, configured: Sequence[str] | None
) -> str:
    names = list(configured) if configured is not None else [n for n, _ in catalog.servers]
    guess = did_you_mean(server, names)
    listed = f"the servers file names: {', '.join(names) or 'none'}"
    return f"{guess} {listed}" if guess else listed


def _check_actions(bindings: Bindings, domain: Domain, problems: list[PlansmithError]) -> None:
    """A binding of an action the domain does not have (a misspelt name, most often)."""
    actions = [a.name for a in domain.actions]
    for binding in bindings.bindings:
        if domain.action(binding.action) is None:
            guess = did_you_mean(binding.action, actions)
            problems.append(
                BindingError(
                    f"binding {binding.action!r}: the domain {domain.name!r} has no such action",
                    location=binding.loc,
                    hint=f"{guess + ' ' if guess else ''}its actions are: "
                    + (", ".join(actions) or "none"),
                )
            )


_REF_FORMS = (
    "${param}, ${action(args).output}, ${env.NAME}, ${run.id}, ${run.dir}"
    " or ${fact(predicate(args)).output}"
)
_FACT_FORM_HINT = (
    "; a reference to a fact writes the atom with its parentheses: ${fact(predicate(args)).output}"
)


def _not_a_ref_hint(inner: str) -> str:
    """What the text of a ``${...}`` that is not a reference was likely meant to be."""
    text = inner.strip()
    if "${" in text:
        return f"references do not nest; a reference is one of {_REF_FORMS}"
    if text.startswith("env:") or text.lower().startswith("env."):
        return f"an environment variable is written ${{env.{text[4:].strip()}}} in bindings"
    if text.startswith("run."):
        return "the run's fields are ${run.id} and ${run.dir}"
    if text.startswith("context."):
        return (
            "GTPyhop's ${context.NAME} belongs in a plan step's argument, not in bindings:"
            " send the parameter that holds it (${param}); it is then resolved to the"
            " output NAME of an earlier step"
        )
    return f"a reference is one of {_REF_FORMS}; for the text ${{{inner}}}, write $${{{inner}}}"


def _bind_step(
    step: Step,
    *,
    domain: Domain,
    binding: Binding,
    bindings: Bindings,
    catalog: ToolCatalog,
    env: Mapping[str, str],
    producers_by_key: Mapping[StepKey, str],
    facts: FactProducers,
    contexts: ContextProducers,
    plan: Plan,
    problems: list[PlansmithError],
    references: dict[tuple[str, str], Location],
    configured: Sequence[str] | None,
    unavailable: Collection[str],
    known_types: dict[int, tuple[Binding, dict[str, JSONValue], tuple[TypeCheck, ...]]],
) -> BoundStep | None:
    schema = domain.action(step.action)
    names = tuple(p.name for p in schema.parameters) if schema else ()
    params: dict[str, StepArg] = dict(zip(names, step.args, strict=False))
    start = len(problems)
    if is_ask_step(binding.server, binding.tool):
        pass  # a person answers it: no tool to check
    elif binding.server in unavailable:
        pass  # it did not start: said once, by whoever started the servers
    elif not catalog.has_server(binding.server):
        problems.append(
            BindingError(
                f"unknown server {binding.server!r} for action {step.action!r}",
                location=here(binding, "server", step),
                hint=_unknown_server_hint(binding.server, catalog, configured),
            )
        )
    elif catalog.tool(binding.server, binding.tool) is None:
        problems.append(
            BindingError(
                f"server {binding.server!r} has no tool {binding.tool!r}",
                location=here(binding, "tool", step),
                hint=f"its tools are: {', '.join(catalog.tool_names(binding.server)) or 'none'}",
            )
        )
    producers: dict[str, str] = {}
    for pointer, inner, ref in find_refs_at(binding.arguments):
        where = here_argument(binding, pointer, step)
        wrong: tuple[str, str] | None = None  # the reference's problem and its hint
        if ref is None:
            wrong = f"not a reference: ${{{inner}}}", _not_a_ref_hint(inner)
        elif isinstance(ref, ParamRef) and ref.name not in params:
            wrong = (
                f"${{{inner}}}: {step.action!r} has no parameter {ref.name!r}",
                f"its parameters are: {', '.join(names) or 'none'}",
            )
        elif isinstance(ref, EnvRef) and ref.name not in env:
            wrong = (
                f"${{{inner}}}: environment variable {ref.name} is not set",
                f"export {ref.name}=... before running plansmith",
            )
        elif isinstance(ref, OutputRef):
            args = tuple(as_text(params[a]) if a in params else a for a in ref.args)
            producer = producers_by_key.get((ref.action, args))
            if producer == step.id:
                wrong = (
                    f"${{{inner}}}: step {step.id} cannot use its own output",
                    "a reference names another step of the plan, whose output"
                    " this step then waits for",
                )
            elif producer is None:
                wrong = (
                    f"${{{inner}}}: no step {ref.action}({', '.join(args)}) in the plan",
                    "a reference must name another step of the same plan"
                    + (_FACT_FORM_HINT if ref.action == "fact" else ""),
                )
            else:
                producers[inner] = producer
                references.setdefault((step.id, producer), where)
                _check_output_name(inner, ref, bindings, where, problems)
        elif isinstance(ref, FactRef):
            found = _bind_fact(
                inner,
                ref,
                step,
                params=params,
                bindings=bindings,
                facts=facts,
                where=where,
                problems=problems,
            )
            if found is not None:
                producers[inner] = found
                references.setdefault((step.id, found), where)
        if wrong is not None:
            problems.append(BindingError(wrong[0], location=where, hint=wrong[1]))
    if any(isinstance(v, str) and "${" in v for v in params.values()):  # GTPyhop's ${context.X}
        for edge in bind_context(
            step_id=step.id,
            consumer=f"{step.action}({', '.join(as_text(a) for a in step.args)})",
            binding=binding,
            params=params,
            producers=contexts,
            where=lambda pointer: here_argument(binding, pointer, step),
            problems=problems,
        ):
            producers[edge.key] = edge.producer
            references.setdefault((step.id, edge.producer), edge.where)
        schema_params: Mapping[str, StepArg] = {
            k: bind_time_param(v, PLACEHOLDER) for k, v in params.items()
        }
    else:
        schema_params = params
    for pointer, key in keys_with_refs(binding.arguments):
        problems.append(
            BindingError(
                f"the argument key {key!r} holds a reference",
                location=here_argument(binding, pointer, step),
                hint=KEY_HINT,
            )
        )
    tool = catalog.tool(binding.server, binding.tool)
    checks: tuple[TypeCheck, ...] = ()
    if tool is not None and tool.input_schema:  # checked whatever else is wrong: all at once
        try:
            args_value = bind_time_arguments(binding.arguments, schema_params, env)
        except BindingError:  # a text that is not a reference (said above)
            pass
        else:
            check_schema(args_value, tool.input_schema, binding, step, problems)
        checks = _type_checks(binding, tool.input_schema, known_types)
        if schema_params is not params:
            checks += context_type_checks(binding.arguments, tool.input_schema, params)
    if len(problems) > start:
        return None
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
        type_checks=checks,
        defaults=binding.defaults,
    )


def _type_checks(
    binding: Binding,
    schema: dict[str, JSONValue],
    known: dict[int, tuple[Binding, dict[str, JSONValue], tuple[TypeCheck, ...]]],
) -> tuple[TypeCheck, ...]:
    """``type_checks`` of ``binding``'s arguments, worked out once for all its steps."""
    seen = known.get(id(binding))
    if seen is not None and seen[0] is binding and seen[1] is schema:
        return seen[2]
    checks = type_checks(binding.arguments, schema)
    known[id(binding)] = (binding, schema, checks)
    return checks


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


def _bind_fact(
    inner: str,
    ref: FactRef,
    step: Step,
    *,
    params: Mapping[str, StepArg],
    bindings: Bindings,
    facts: FactProducers,
    where: Location,
    problems: list[PlansmithError],
) -> str | None:
    """The step whose output ``${fact(...)}`` reads (the last one before ``step`` that
    makes the fact true), or None and a problem: no such step, or its binding does not
    declare the output (a problem naming both steps, at the reference)."""
    args = tuple(as_text(params[a]) if a in params else a for a in ref.args)
    fact = ref.fact(args)
    consumer = f"{step.action}({', '.join(as_text(a) for a in step.args)})"
    producer = facts.latest((ref.predicate, args), step.id)
    if producer is None:
        problems.append(
            FactProducerMissingError(
                f"${{{inner}}}: no step before step {step.id} {consumer} makes {fact} true",
                location=where,
                hint="a reference to a fact reads the output of the last step before this"
                f" one whose action's effect adds {fact} (in the plan, or earlier in the run);"
                " check the predicate and its arguments",
                consumer=step.id,
                consumer_action=consumer,
                fact=fact,
                output=ref.output,
            )
        )
        return None
    binding = bindings.get(producer.action)
    if binding is None:
        return producer.id  # that action has no binding: said once, where its steps are bound
    outputs = binding.output_names()
    if ref.output not in outputs:
        at = binding.where("outputs") or binding.loc
        problems.append(
            FactOutputMissingError(
                f"${{{inner}}}: step {step.id} {consumer} reads the output {ref.output!r} of"
                f" step {producer.id} {producer.shown}, which makes {fact} true, but the"
                f" binding of {producer.action!r} has no output {ref.output!r}",
                location=where,
                hint=f"its outputs are: {', '.join(outputs) or 'none'}; every action that"
                f" can make {fact} true needs the output {ref.output!r}"
                + (f" (the binding of {producer.action!r} is at {at})" if at else ""),
                consumer=step.id,
                consumer_action=consumer,
                fact=fact,
                output=ref.output,
                producer=producer.id,
                producer_action=producer.shown,
            )
        )
    return producer.id


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
                        hint="a JSONPath starts at $, the result document:"
                        " $.structured.NAME, $.text, $.json.NAME, $.is_error",
                    )
                )


def _check_cycles(
    bound: list[BoundStep],
    references: Mapping[tuple[str, str], Location],
    problems: list[PlansmithError],
) -> None:
    """A step that waits, through references and the plan's order, for itself could
    never start: one problem for each such group of steps, at a reference among them."""
    waits = {s.id: list(s.after) for s in bound}
    for group in _cycles(waits):
        path = _cycle_path(group, waits)
        edges = list(itertools.pairwise(path))
        where = next((references[e] for e in edges if e in references), Location())
        problems.append(
            BindingError(
                f"steps {', '.join(sorted(group))} wait on each other, so none can start:"
                f" {' waits for '.join(path)}",
                location=where,
                hint="a reference makes its step wait for the step it names; name a step"
                " that does not itself wait (by a reference or the plan's order) for this one",
            )
        )


def _cycles(waits: Mapping[str, list[str]]) -> list[set[str]]:
    """The strongly connected groups of more than one step (Tarjan, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for root in waits:
        if root in index:
            continue
        work = [(root, iter(waits[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in waits:
                    continue  # a step outside this plan (earlier in the run)
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(waits[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group: set[str] = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(group)
    return groups


def _cycle_path(group: set[str], waits: Mapping[str, list[str]]) -> list[str]:
    """One way round ``group``: from its first step (in plan order) back to it."""
    start = next(s for s in waits if s in group)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for nxt in waits[node]:
                if nxt == start:
                    path = [start]
                    back = node
                    while back != start:
                        path.append(back)
                        back = came_from[back]
                    return [start, *reversed(path[1:]), start]
                if nxt in group and nxt not in came_from:
                    came_from[nxt] = node
                    following.append(nxt)
        frontier = following
    raise AssertionError("a strongly connected group has a way round")  # pragma: no cover
