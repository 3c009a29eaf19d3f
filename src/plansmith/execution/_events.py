"""The events of a run: the one contract between the runner and every view.

Each event is frozen. The runner appends it to the run log (write-ahead) before
it acts on it; the CLI, the SSE stream, the audit log and replay all read the
same objects. ``to_dict`` gives the ``--json`` line (formats.md, Events).
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

from plansmith.errors import ExecutionError
from plansmith.model import JSONValue, Step, StepArg

__all__ = [
    "Event",
    "StepEvent",
    "RunCreated",
    "PlanReady",
    "AwaitingApproval",
    "PlanApproved",
    "RunStarted",
    "StepStarted",
    "StepProgress",
    "StepSucceeded",
    "StepFailed",
    "StepSkipped",
    "StepRetrying",
    "Replanned",
    "AwaitingAnswer",
    "AnswerRecorded",
    "RunFinished",
    "RunCancelled",
    "RunRetried",
    "EVENT_TYPES",
    "event_from_dict",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Base of every event: the run, the sequence number in the run, the UTC time."""

    type: ClassVar[str] = "Event"
    run_id: str
    seq: int = 0
    time: str = ""

    def to_dict(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {"type": self.type}
        for name in _field_names(type(self)):
            value = getattr(self, name)
            out[name] = _json(value) if type(value) is tuple else value
        return out


_FIELD_NAMES: dict[type[Event], tuple[str, ...]] = {}


def _field_names(cls: type[Event]) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


def _json(value: Any) -> JSONValue:
    if isinstance(value, tuple):
        return [_json(v) for v in value]
    return value  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCreated(Event):
    type: ClassVar[str] = "RunCreated"
    inputs: dict[str, JSONValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanReady(Event):
    """The bound plan the run executes (``bound``: its JSON form, see ``_codec``)."""

    type: ClassVar[str] = "PlanReady"
    plan_hash: str
    plan: dict[str, JSONValue] = field(default_factory=dict)
    bound: dict[str, JSONValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class AwaitingApproval(Event):
    type: ClassVar[str] = "AwaitingApproval"
    plan_hash: str
    tiers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanApproved(Event):
    """``by``: ``person`` or ``policy``; ``approver``: who the person was, as the face
    that took the approval names them (e.g. ``cli:alice``, ``web:127.0.0.1``,
    ``mcp:OWNER``; empty when not known)."""

    type: ClassVar[str] = "PlanApproved"
    plan_hash: str
    by: str = ""
    approver: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted(Event):
    type: ClassVar[str] = "RunStarted"
    resumed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class StepEvent(Event):
    """What every step event carries."""

    step: str
    action: str
    args: tuple[StepArg, ...] = ()
    server: str = ""
    tool: str = ""
    attempt: int = 1

    @property
    def call(self) -> str:
        """``action(args)`` as people read it (what ``Step`` prints)."""
        return str(Step(self.step, self.action, self.args))


@dataclass(frozen=True, slots=True, kw_only=True)
class StepStarted(StepEvent):
    type: ClassVar[str] = "StepStarted"
    key: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class StepProgress(StepEvent):
    type: ClassVar[str] = "StepProgress"
    progress: float = 0.0
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StepSucceeded(StepEvent):
    """``result`` is the tool's result (for replay); both may be ``{"$blob": ...}``."""

    type: ClassVar[str] = "StepSucceeded"
    duration_ms: float = 0.0
    outputs: JSONValue = None
    result: JSONValue = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StepFailed(StepEvent):
    type: ClassVar[str] = "StepFailed"
    duration_ms: float = 0.0
    error_class: str = ""
    message: str = ""
    retryable: bool = False
    result: JSONValue = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StepSkipped(StepEvent):
    """The step ended without calling its tool: an argument reads a value an earlier
    step did not give, and its binding says ``when_absent: skip``. ``reason`` says which
    value; the step has no outputs, so a step that reads them is skipped in turn (or
    fails, if its binding does not say skip). A skipped step does not fail the run."""

    type: ClassVar[str] = "StepSkipped"
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class StepRetrying(StepEvent):
    """The attempt ``attempt`` failed and the step is tried again after ``delay_s``.

    ``retryable`` is the tool's own word: a tool error the server marked as worth
    retrying (false for the other classes, which are retried by their class's rule)."""

    type: ClassVar[str] = "StepRetrying"
    error_class: str = ""
    message: str = ""
    retryable: bool = False
    delay_s: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Replanned(Event):
    """The steps in ``failed`` are given up; ``bound`` replaces every step not yet run."""

    type: ClassVar[str] = "Replanned"
    failed: tuple[str, ...] = ()
    reason: str = ""
    plan_hash: str = ""
    bound: dict[str, JSONValue] = field(default_factory=dict)

    @property
    def step_count(self) -> int:
        """How many steps the new plan has (the list ``bound`` gives)."""
        steps = self.bound.get("steps") if isinstance(self.bound, dict) else None
        return len(steps) if isinstance(steps, list) else 0


@dataclass(frozen=True, slots=True, kw_only=True)
class AwaitingAnswer(Event):
    """Ask step ``step`` waits for a person's answer to ``question`` (rendered), which
    ``answer`` (an answer schema's JSON: ``type``, ``choices``, ...) constrains; the plan
    was made assuming ``assumed``. The run waits in ``awaiting answer`` until an
    ``AnswerRecorded`` for the step (a face asked, or ``plansmith answer`` was given)."""

    type: ClassVar[str] = "AwaitingAnswer"
    step: str
    action: str = ""
    question: str = ""
    answer: dict[str, JSONValue] = field(default_factory=dict)
    assumed: JSONValue = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerRecorded(Event):
    """The answer to ask step ``step``: ``answer`` (null when there is none), ``by`` who
    gave it (``cli:alice``, ``mcp:HOST``, ``web:127.0.0.1``, ``default`` for the
    domain's default), ``declined``: ``declined`` or ``cancelled`` when the person
    declined to answer (then ``answer`` is the domain's default, or null and the step
    fails)."""

    type: ClassVar[str] = "AnswerRecorded"
    step: str
    answer: JSONValue = None
    by: str = ""
    declined: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished(Event):
    type: ClassVar[str] = "RunFinished"
    state: str = "succeeded"
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCancelled(Event):
    type: ClassVar[str] = "RunCancelled"
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRetried(Event):
    """A failed or cancelled run goes on (``Engine.retry``): it is no longer finished, its
    steps that failed since the last replan, or were cancelled in flight, are pending
    again, and its succeeded steps stay done. ``by``: who asked (as ``approver``)."""

    type: ClassVar[str] = "RunRetried"
    by: str = ""


EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        RunCreated,
        PlanReady,
        AwaitingApproval,
        PlanApproved,
        RunStarted,
        StepStarted,
        StepProgress,
        StepSucceeded,
        StepFailed,
        StepSkipped,
        StepRetrying,
        Replanned,
        AwaitingAnswer,
        AnswerRecorded,
        RunFinished,
        RunCancelled,
        RunRetried,
    )
}

_TUPLE_FIELDS = {"args", "tiers", "failed"}
_FIELD_SETS: dict[type[Event], frozenset[str]] = {}
#: what a field's JSON may be, by the field's annotation (``_checks``)
_ANY: tuple[type, ...] = ()
_NONE = type(None)
_KINDS: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "str | None": (str, _NONE),
    "int": (int,),
    "float": (int, float),
    "float | None": (int, float, _NONE),
    "bool": (bool,),
    "tuple[str, ...]": (list, tuple),
    "tuple[StepArg, ...]": (list, tuple),
    "dict[str, JSONValue]": (dict,),
    "JSONValue": _ANY,
}
_SCALARS = (str, int, float, bool, _NONE)
_CHECKS: dict[type[Event], dict[str, tuple[type, ...]]] = {}


def _checks(cls: type[Event]) -> dict[str, tuple[type, ...]]:
    """The JSON types each field of ``cls`` may hold, read from its annotations once."""
    checks = _CHECKS.get(cls)
    if checks is None:
        checks = _CHECKS[cls] = {f.name: _KINDS[str(f.type)] for f in fields(cls)}
    return checks


def _bad(data: dict[str, JSONValue], why: str) -> ExecutionError:
    kind = data.get("type")
    return ExecutionError(
        f"not a plansmith event ({kind!r}): {why}" if isinstance(kind, str) else why,
        hint="the event was not written by plansmith as it is now, or was damaged since",
    )


def _wrong(value: object, allowed: tuple[type, ...]) -> bool:
    """Whether ``value`` is not one of ``allowed`` (a bool is no number here)."""
    if type(value) is bool:
        return bool not in allowed
    return not isinstance(value, allowed)


def event_from_dict(data: dict[str, JSONValue]) -> Event:
    """The event a ``to_dict`` object stands for (unknown keys are ignored).

    Raises ``ExecutionError`` when ``data`` is not such an object: no known ``type``, a
    field missing, or a field's value of the wrong JSON type.
    """
    if not isinstance(data, dict):
        raise _bad({}, f"an event is a JSON object, not {type(data).__name__}")
    cls = EVENT_TYPES.get(data.get("type"))  # type: ignore[arg-type]
    if cls is None:
        raise _bad({}, f"unknown event type {data.get('type')!r}")
    names = _FIELD_SETS.get(cls)
    if names is None:
        names = _FIELD_SETS[cls] = frozenset(_field_names(cls))
    checks = _checks(cls)
    kwargs: dict[str, Any] = {}
    for k, v in data.items():
        if k in names:
            allowed = checks[k]
            if allowed and _wrong(v, allowed):
                raise _bad(data, f"{k} is {_what(v)}")
            kwargs[k] = _items(data, k, v) if k in _TUPLE_FIELDS else v
    try:
        return cls(**kwargs)
    except TypeError as error:  # a required field missing
        missing = sorted(
            f.name
            for f in fields(cls)
            if f.name not in kwargs and f.default is MISSING and f.default_factory is MISSING
        )
        raise _bad(data, f"no {', '.join(missing)}" if missing else str(error)) from None


def _items(data: dict[str, JSONValue], name: str, value: Any) -> tuple[Any, ...]:
    """The array field ``name`` as a tuple: scalars for ``args``, strings otherwise."""
    items = tuple(value)
    allowed, what = (_SCALARS, "a scalar") if name == "args" else ((str,), "a string")
    for item in items:
        if _wrong(item, allowed):
            raise _bad(data, f"{name} holds {_what(item)}, not {what}")
    return items


def _what(value: object) -> str:
    return "null" if value is None else f"a {type(value).__name__} ({str(value)[:40]})"
