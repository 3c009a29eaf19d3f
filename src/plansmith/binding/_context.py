"""``${context.NAME}``: GTPyhop's placeholder, in a plan step's arguments, for the
result of an earlier step.

GTPyhop's MCP-orchestration domains return subtasks such as
``("a_get_disease_targets", "${context.disease_id}")``: the value is not known when the
plan is made, only once an earlier step's tool has answered. The plan keeps the
placeholder as its argument (and its hash is unchanged); ``bind`` and the runner give
it its value:

- A step argument that is a string holding ``${context.NAME}`` or
  ``${context.NAME[I]}`` (``[I]`` any number of times, each ``I`` an integer, negative
  from the end) stands for the output ``NAME`` of the last step before it in the plan's
  order whose binding declares an output ``NAME`` (failing that, the last step of the
  run that did, before a replan), indexed. ``${context`` written otherwise is an error.
  Other ``${...}`` (and ``$${``) in a step's argument are its text, as before.
- Only a parameter that the step's binding sends (``${p}`` in its ``arguments``) is
  resolved: ``bind`` finds the producer, checks it exists (else
  ``ContextProducerMissingError``, at that ``${p}``), records it in
  ``BoundStep.producers`` as ``context.NAME`` and adds the data edge to ``after``.
- An argument that is one placeholder takes the output's JSON value (a list stays a
  list), so ``${p}`` written alone sends it with its type; a placeholder inside longer
  text is written into it as text (``as_text``), as references are in bindings.
- At run time (``resolve_context``), an index past the end of a list, or into a value
  that is not a list, fails the step with ``ContextValueError`` (``extraction_error``,
  not retried), naming the step, the placeholder and its producer.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from plansmith.binding._fact import Producer
from plansmith.binding._model import Binding, Bindings
from plansmith.binding._refs import REF_RE, TOKEN_RE, ParamRef, find_refs_at
from plansmith.binding._render import as_text
from plansmith.binding._types import TypeCheck, _declared, _schema_at
from plansmith.errors import BindingError, Location, PlansmithError, ToolCallError
from plansmith.model import JSONValue, StepArg

__all__ = [
    "ContextRef",
    "ContextReferenceError",
    "ContextSyntaxError",
    "ContextProducerMissingError",
    "ContextValueError",
    "ContextProducers",
    "CONTEXT_FORMS",
    "context_key",
    "parse_context",
    "context_placeholders",
    "holds_context",
    "bind_time_param",
    "context_type_checks",
    "resolve_context",
]

CONTEXT_FORMS = "${context.NAME} or ${context.NAME[INDEX]} (INDEX an integer, -1 the last)"
_NAME = r"[A-Za-z_][A-Za-z0-9_\-]*"
#: the text of a ``${...}`` that is meant as a context placeholder, well written or not
_LOOKS_LIKE = re.compile(r"^\s*context\s*[.\[]")
_CONTEXT_RE = re.compile(rf"^\s*context\s*\.\s*({_NAME})\s*((?:\[\s*-?[0-9]{{1,9}}\s*\]\s*)*)$")
_INDEX_RE = re.compile(r"\[\s*(-?[0-9]+)\s*\]")


@dataclass(frozen=True, slots=True)
class ContextRef:
    """``${context.NAME[I]...}``: the output ``name`` of an earlier step, then each index."""

    name: str
    indexes: tuple[int, ...] = ()

    def __str__(self) -> str:
        return "${context." + self.name + "".join(f"[{i}]" for i in self.indexes) + "}"


def context_key(name: str) -> str:
    """The key of ``BoundStep.producers`` for the placeholders that read output ``name``."""
    return f"context.{name}"


class ContextReferenceError(BindingError):
    """A ``${context...}`` placeholder of a step's argument that cannot be bound.

    ``consumer`` is the step (``consumer_action`` its ground action, as text),
    ``parameter`` the action's parameter that holds the placeholder, ``placeholder``
    the placeholder as written, ``output`` the output it reads (None when it does not
    parse); a subclass says what is wrong.
    """

    def __init__(
        self,
        message: str,
        *,
        location: Location | None = None,
        hint: str | None = None,
        problems: tuple[PlansmithError, ...] = (),
        consumer: str | None = None,
        consumer_action: str | None = None,
        parameter: str | None = None,
        placeholder: str | None = None,
        output: str | None = None,
    ) -> None:
        super().__init__(message, location=location, hint=hint, problems=problems)
        self.consumer = consumer
        self.consumer_action = consumer_action
        self.parameter = parameter
        self.placeholder = placeholder
        self.output = output


class ContextSyntaxError(ContextReferenceError):
    """A ``${context...}`` that is not one of ``CONTEXT_FORMS``."""


class ContextProducerMissingError(ContextReferenceError):
    """No step before the consumer (in the plan, or earlier in the run) has a binding
    that declares the output the placeholder reads."""


class ContextValueError(ToolCallError):
    """At run time: a placeholder's output cannot be read as written (an index past the
    end of its list, or into a value that is not a list; the output missing). An
    ``extraction_error``: not retried. ``step`` is the step that reads it, ``producer``
    the step whose output it reads. ``absent``: the value is not there (the output
    missing, or the index past the end), which a binding with ``when_absent: skip``
    turns into a skipped step; reading into a value that is not a list is not that."""

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        step: str,
        placeholder: str,
        producer: str | None,
        absent: bool = False,
    ) -> None:
        super().__init__("extraction_error", message, location=Location(step=step), hint=hint)
        self.step = step
        self.placeholder = placeholder
        self.producer = producer
        self.absent = absent


def parse_context(inner: str) -> ContextRef | None:
    """The placeholder written ``${inner}``, or None if it is not one."""
    m = _CONTEXT_RE.match(inner)
    if m is None:
        return None
    return ContextRef(m.group(1), tuple(int(i) for i in _INDEX_RE.findall(m.group(2))))


def _tokens(text: str) -> Iterator[tuple[re.Match[str], ContextRef | None]]:
    """Each ``${...}`` of ``text`` meant as a context placeholder, with its parse."""
    if "${" not in text:
        return
    for m in TOKEN_RE.finditer(text):
        inner = m.group(1)
        if inner is not None and _LOOKS_LIKE.match(inner):
            yield m, parse_context(inner)


def holds_context(value: object) -> bool:
    """Whether ``value`` (a step's argument) holds a ``${context...}``, well written or not."""
    return isinstance(value, str) and next(_tokens(value), None) is not None


def context_placeholders(text: str) -> tuple[ContextRef, ...]:
    """Every context placeholder of ``text``, in order. Raises ``ContextSyntaxError``
    for a ``${context...}`` that is not one of ``CONTEXT_FORMS``."""
    found: list[ContextRef] = []
    for m, ref in _tokens(text):
        if ref is None:
            raise ContextSyntaxError(
                f"not a context placeholder: {m.group(0)}",
                hint=f"GTPyhop's placeholders are written {CONTEXT_FORMS}",
                placeholder=m.group(0),
            )
        found.append(ref)
    return tuple(found)


def _substitute(text: str, value: Callable[[ContextRef], JSONValue]) -> JSONValue:
    """``text`` with each placeholder replaced by ``value`` of it: the value itself when
    ``text`` is one placeholder, else as text. ``text`` holds none that does not parse."""
    whole = REF_RE.fullmatch(text)
    if whole is not None:
        ref = parse_context(whole.group(1))
        if ref is not None:
            return value(ref)

    def one(m: re.Match[str]) -> str:
        inner = m.group(1)
        ref = parse_context(inner) if inner is not None and _LOOKS_LIKE.match(inner) else None
        return m.group(0) if ref is None else as_text(value(ref))

    return TOKEN_RE.sub(one, text)


# ----------------------------------------------------------------------------- bind time


class ContextProducers:
    """Which step last had an output of a given name before a given step of a plan.

    ``earlier`` are the steps the run already carried out (``(action, args as text)``
    with their ids, in the order they ran), ``steps`` the plan's (the same, in plan
    order); a step has the outputs its action's binding declares. The index is made at
    the first question (a plan without a placeholder never pays for it).
    """

    def __init__(
        self,
        bindings: Bindings,
        earlier: Iterable[tuple[tuple[str, tuple[str, ...]], str]],
        steps: Iterable[tuple[tuple[str, tuple[str, ...]], str]],
    ) -> None:
        self._bindings = bindings
        self._earlier_keys = earlier
        self._step_keys = steps
        self._steps: list[Producer] = []
        self._index: dict[str, int] = {}
        self._positions: dict[str, list[int]] = {}  # output name -> plan positions, increasing
        self._earlier: dict[str, Producer] = {}  # output name -> the last earlier step
        self._built = False

    def _outputs(self, action: str, known: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
        names = known.get(action)
        if names is None:
            binding = self._bindings.get(action)
            names = known[action] = binding.output_names() if binding is not None else ()
        return names

    def _build(self) -> None:
        known: dict[str, tuple[str, ...]] = {}
        for (action, args), step_id in self._earlier_keys:
            producer = Producer(step_id, f"{action}({', '.join(args)})", action)
            for name in self._outputs(action, known):
                self._earlier[name] = producer
        for position, ((action, args), step_id) in enumerate(self._step_keys):
            self._steps.append(Producer(step_id, f"{action}({', '.join(args)})", action))
            self._index.setdefault(step_id, position)
            for name in self._outputs(action, known):
                self._positions.setdefault(name, []).append(position)
        self._built = True

    def latest(self, name: str, before: str) -> Producer | None:
        """The last step before the plan's step ``before`` with an output ``name``."""
        if not self._built:
            self._build()
        end = self._index.get(before, len(self._steps))
        positions = self._positions.get(name, [])
        at = bisect.bisect_left(positions, end) - 1
        if at >= 0:
            return self._steps[positions[at]]
        return self._earlier.get(name)

    def declared_by(self, name: str) -> tuple[Binding, ...]:
        """The bindings that declare an output ``name``, in the file's order."""
        return tuple(b for b in self._bindings.bindings if name in b.output_names())


@dataclass(frozen=True, slots=True)
class ContextEdge:
    """A placeholder ``bind`` found a producer for: ``BoundStep.producers``' key, the
    producer's id, and where the binding sends the parameter that holds it."""

    key: str
    producer: str
    where: Location


def bind_context(
    *,
    step_id: str,
    consumer: str,
    binding: Binding,
    params: Mapping[str, StepArg],
    producers: ContextProducers,
    where: Callable[[str], Location],
    problems: list[PlansmithError],
) -> list[ContextEdge]:
    """The producers of the placeholders in the parameters ``binding`` sends (those of
    the step ``step_id``, whose ground action is ``consumer``); a problem for each that
    does not parse or has no producer, at the first ``${p}`` that sends it (``where``
    of its JSON Pointer)."""
    edges: list[ContextEdge] = []
    seen: set[str] = set()
    for pointer, inner, ref in find_refs_at(binding.arguments):
        if not isinstance(ref, ParamRef) or ref.name in seen:
            continue
        value = params.get(ref.name)
        if not holds_context(value):
            continue
        assert isinstance(value, str)
        seen.add(ref.name)
        loc = where(pointer)
        told = f"${{{inner}}}: the argument {ref.name} = {value!r} of step {step_id} {consumer}"
        try:
            refs = context_placeholders(value)
        except ContextSyntaxError as error:
            problems.append(
                ContextSyntaxError(
                    f"{told} holds {error.placeholder}, which is not a context placeholder",
                    location=loc,
                    hint=f"GTPyhop's placeholders are written {CONTEXT_FORMS}",
                    consumer=step_id,
                    consumer_action=consumer,
                    parameter=ref.name,
                    placeholder=error.placeholder,
                )
            )
            continue
        for name in dict.fromkeys(r.name for r in refs):
            producer = producers.latest(name, step_id)
            if producer is not None:
                edges.append(ContextEdge(context_key(name), producer.id, loc))
                continue
            declaring = producers.declared_by(name)
            if declaring:
                listed = ", ".join(
                    f"{b.action!r}" + (f" (at {b.loc})" if b.loc is not None else "")
                    for b in declaring
                )
                hint = (
                    f"the bindings that declare an output {name!r}: {listed}; a step of one"
                    f" of them must come before step {step_id} in the plan (or have run"
                    " earlier in the run)"
                )
            else:
                hint = (
                    f"no binding declares an output {name!r}: add `{name}: <JSONPath>` to the"
                    " `outputs` of the binding of the action whose result holds it"
                )
            problems.append(
                ContextProducerMissingError(
                    f"{told} reads the output {name!r} of an earlier step, but no step before"
                    f" step {step_id} has a binding that declares it",
                    location=loc,
                    hint=hint,
                    consumer=step_id,
                    consumer_action=consumer,
                    parameter=ref.name,
                    placeholder=next(str(r) for r in refs if r.name == name),
                    output=name,
                )
            )
    return edges


def bind_time_param(value: StepArg, placeholder: str) -> StepArg:
    """A step's argument as ``bind``'s schema check reads it: each placeholder replaced
    by ``placeholder`` (the value another step fills at run time); one that does not
    parse leaves the argument as it is (a problem of its own)."""
    if not holds_context(value):
        return value
    assert isinstance(value, str)
    try:
        context_placeholders(value)
    except ContextSyntaxError:
        return value
    filled = _substitute(value, lambda _: placeholder)
    return filled if isinstance(filled, str) else value


def context_type_checks(
    arguments: JSONValue, input_schema: Mapping[str, JSONValue], params: Mapping[str, StepArg]
) -> tuple[TypeCheck, ...]:
    """A ``TypeCheck`` for each argument of ``arguments`` (a binding's template) that is
    one ``${p}`` whose value is one placeholder (so its type is that of an output), where
    ``input_schema`` declares a plain ``type``."""
    checks: list[TypeCheck] = []
    for keys, name in _whole_params(arguments, ()):
        value = params.get(name)
        if not isinstance(value, str):
            continue
        whole = REF_RE.fullmatch(value)
        ref = parse_context(whole.group(1)) if whole is not None else None
        if ref is None:
            continue
        types = _declared(_schema_at(input_schema, keys))
        if types is not None:
            checks.append(TypeCheck(keys, types, f"${{{name}}} = {ref}"))
    return tuple(checks)


def _whole_params(
    template: JSONValue, keys: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    if isinstance(template, str):
        whole = REF_RE.fullmatch(template)
        if whole is not None and _PARAM_RE.match(whole.group(1)):
            yield keys, whole.group(1).strip()
    elif isinstance(template, list):
        for i, item in enumerate(template):
            yield from _whole_params(item, (*keys, i))
    elif isinstance(template, dict):
        for key, item in template.items():  # a key holds no reference: only $${ to undo
            yield from _whole_params(item, (*keys, key.replace("$${", "${")))


_PARAM_RE = re.compile(rf"^\s*{_NAME}\s*$")


# ------------------------------------------------------------------------------ run time


def resolve_context(
    value: str,
    step: str,
    producers: Iterable[tuple[str, str]],
    outputs_of: Callable[[str], object],
    *,
    null_is_absent: bool = False,
) -> JSONValue:
    """``value`` (the argument of ``step``) with its placeholders replaced by the outputs
    they read: ``producers`` are the step's (``BoundStep.producers``), ``outputs_of`` gives
    a step's outputs by its id. Raises ``ContextValueError`` when one cannot be read;
    with ``null_is_absent`` (a binding's ``when_absent: skip``), a null value read is
    absent too (an optional output that matched nothing is null)."""
    if not holds_context(value):
        return value
    found = dict(producers)

    def read(ref: ContextRef) -> JSONValue:
        producer = found.get(context_key(ref.name))
        outputs = outputs_of(producer) if producer is not None else None
        if producer is None or not isinstance(outputs, Mapping) or ref.name not in outputs:
            source = f"step {producer}" if producer is not None else "no step (not bound)"
            raise ContextValueError(
                f"step {step}: {ref}: no output {ref.name!r} from {source}",
                hint="bind the plan again (`plansmith check`): the step that declares the"
                " output must come before this one; an optional output, or a skipped step's,"
                " may be absent: `when_absent: skip` in the binding skips the step then",
                step=step,
                placeholder=str(ref),
                producer=producer,
                absent=producer is not None,
            )
        got: object = outputs[ref.name]
        for depth, index in enumerate(ref.indexes):
            read_so_far = str(ContextRef(ref.name, ref.indexes[:depth]))
            if not isinstance(got, list | tuple):
                raise ContextValueError(
                    f"step {step}: {ref}: {read_so_far} (output {ref.name!r} of step"
                    f" {producer}) is {_kind(got)}, not a list: it has no [{index}]",
                    hint="check the step's outputs with `plansmith show RUN_ID`; write"
                    f" {read_so_far} to read the value as it is",
                    step=step,
                    placeholder=str(ref),
                    producer=producer,
                )
            if not -len(got) <= index < len(got):
                raise ContextValueError(
                    f"step {step}: {ref}: index {index} is out of range: {read_so_far} (output"
                    f" {ref.name!r} of step {producer}) is a list of {len(got)} item(s)",
                    hint="the producing step found fewer items than the plan expects; check"
                    " its outputs with `plansmith show RUN_ID` (`when_absent: skip` in the"
                    " binding skips the step then)",
                    step=step,
                    placeholder=str(ref),
                    producer=producer,
                    absent=True,
                )
            got = got[index]
        if got is None and null_is_absent:
            raise ContextValueError(
                f"step {step}: {ref}: output {ref.name!r} of step {producer} is null (an"
                " optional output that matched nothing)",
                hint="the producing step did not find the value; check its outputs with"
                " `plansmith show RUN_ID`",
                step=step,
                placeholder=str(ref),
                producer=producer,
                absent=True,
            )
        return got  # type: ignore[return-value]

    return _substitute(value, read)


def _kind(value: object) -> str:
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else "a value"
