"""Fast paths for the runner and the log, each the same as the plain one (tests check).

``step_started`` and ``step_succeeded`` make the two events of every step, and
``tool_call`` its call, without the frozen dataclass ``__init__`` (which parses keywords
and calls ``object.__setattr__`` per field). ``event_json`` writes the JSON of
``event.to_dict()`` with orjson (a base dependency): a step's start and end from a dict
written out for them, any other event from the dataclass itself. The text may spell a
float (``0.000015`` for ``1.5e-05``) or a character past ASCII otherwise than
``json.dumps`` does; the values, their types and the order of the keys are the same.
Where orjson would write other values (a float that is not finite, a key that is not a
string, an integer past 64 bits, a lone surrogate), or without orjson, the text is
``json.dumps``'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any

from plansmith.execution._events import (
    Event,
    StepStarted,
    StepSucceeded,
    _field_names,
)
from plansmith.execution._invoker import ProgressFn, ToolCall
from plansmith.model import JSONValue, StepArg

__all__ = ["event_json", "step_started", "step_succeeded", "tool_call"]

_Setter = Callable[[Any, Any], None]


def _setters(cls: type[Event], *names: str) -> tuple[_Setter, ...]:
    assert names == _field_names(cls), f"{cls.__name__}: the fast constructor misses fields"
    return tuple(getattr(cls, name).__set__ for name in names)


_NEW = object.__new__
_STARTED = _setters(
    StepStarted,
    "run_id",
    "seq",
    "time",
    "step",
    "action",
    "args",
    "server",
    "tool",
    "attempt",
    "key",
)
_SUCCEEDED = _setters(
    StepSucceeded,
    *("run_id", "seq", "time", "step", "action", "args", "server", "tool", "attempt"),
    *("duration_ms", "outputs", "result"),
)


def step_started(  # noqa: PLR0917 - the runner's hot path; keywords would cost time
    run_id: str,
    seq: int,
    time: str,
    step: str,
    action: str,
    args: tuple[StepArg, ...],
    server: str,
    tool: str,
    attempt: int,
    key: str,
) -> StepStarted:
    """``StepStarted(...)`` with every field given, made without the frozen ``__init__``
    (which parses keywords and calls ``object.__setattr__`` per field): the runner
    makes one per step. The event is as frozen as any other once returned."""
    event = _NEW(StepStarted)
    s = _STARTED
    s[0](event, run_id)
    s[1](event, seq)
    s[2](event, time)
    s[3](event, step)
    s[4](event, action)
    s[5](event, args)
    s[6](event, server)
    s[7](event, tool)
    s[8](event, attempt)
    s[9](event, key)
    return event


def step_succeeded(  # noqa: PLR0917 - the runner's hot path; keywords would cost time
    run_id: str,
    seq: int,
    time: str,
    step: str,
    action: str,
    args: tuple[StepArg, ...],
    server: str,
    tool: str,
    attempt: int,
    duration_ms: float,
    outputs: Any,  # JSONValue, or what the event's field takes (see ``_emit.JSONish``)
    result: Any,
) -> StepSucceeded:
    """``StepSucceeded(...)`` with every field given, made as ``step_started`` makes its event."""
    event = _NEW(StepSucceeded)
    s = _SUCCEEDED
    s[0](event, run_id)
    s[1](event, seq)
    s[2](event, time)
    s[3](event, step)
    s[4](event, action)
    s[5](event, args)
    s[6](event, server)
    s[7](event, tool)
    s[8](event, attempt)
    s[9](event, duration_ms)
    s[10](event, outputs)
    s[11](event, result)
    return event


_CALL = tuple(getattr(ToolCall, f.name).__set__ for f in fields(ToolCall))
assert tuple(f.name for f in fields(ToolCall)) == (
    *("server", "tool", "arguments", "key", "step", "attempt", "timeout", "on_progress"),
    "meta",
), "ToolCall: the fast constructor misses fields"


def tool_call(  # noqa: PLR0917 - the runner's hot path; keywords would cost time
    server: str,
    tool: str,
    arguments: dict[str, JSONValue],
    key: str,
    step: str,
    attempt: int,
    timeout: float | None,
    on_progress: ProgressFn | None,
    meta: Mapping[str, str],
) -> ToolCall:
    """``ToolCall(...)`` with every field given, made as ``step_started`` makes its event."""
    call = _NEW(ToolCall)
    s = _CALL
    s[0](call, server)
    s[1](call, tool)
    s[2](call, arguments)
    s[3](call, key)
    s[4](call, step)
    s[5](call, attempt)
    s[6](call, timeout)
    s[7](call, on_progress)
    s[8](call, meta)
    return call


_ESCAPE: Callable[[str], str] = json.encoder.encode_basestring_ascii


def _not_json(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


try:  # a base dependency; the module works without it (the standard library's encoder)
    import orjson

    _ORJSON: Callable[..., bytes] | None = orjson.dumps
    # types orjson writes and ``json.dumps`` refuses are handed to ``default`` (none):
    # TypeError, and the standard library's encoder says what it says of them
    _ORJSON_OPTIONS = (
        orjson.OPT_PASSTHROUGH_DATACLASS
        | orjson.OPT_PASSTHROUGH_DATETIME
        | orjson.OPT_PASSTHROUGH_SUBCLASS
    )
    # an event is a dataclass: orjson writes it (and would write one inside it)
    _ORJSON_EVENT_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
except ImportError:  # pragma: no cover - orjson is installed with plansmith
    _ORJSON = None
    _ORJSON_OPTIONS = _ORJSON_EVENT_OPTIONS = 0

# ``json.dumps`` makes a new C encoder on every call (about 1.5 µs before it writes
# anything); this one is made once, with the same settings but no cycle check
# (an event's values come from JSON).
_make_c_encoder = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODE: Callable[[Any, int], Any] | None = (
    None
    if _make_c_encoder is None
    else _make_c_encoder(None, _not_json, _ESCAPE, None, ":", ",", False, False, True)
)
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


def _stdlib_json(value: Any) -> str:
    """``json.dumps(value, separators=(",", ":"))``'s text."""
    if _C_ENCODE is None:  # pragma: no cover - CPython has the C encoder
        return _ENCODE(value)
    return "".join(_C_ENCODE(value, 0))


def _holds_non_finite(value: Any) -> bool:
    """Whether a float in ``value`` is infinite or not a number."""
    if type(value) is float:
        return value - value != 0.0
    if isinstance(value, dict):
        return any(_holds_non_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_non_finite(v) for v in value)
    return False


def _fields_of(event: Event) -> tuple[Any, ...]:
    return tuple(getattr(event, name) for name in _field_names(type(event)))


def _orjson_checked(value: object, event: Event, option: int) -> bytes | None:
    """orjson's JSON of ``value`` (``event`` or a dict of it), or None where
    ``json.dumps`` would write other values: a key that is not a string, an integer past
    64 bits, a lone surrogate, a value of another type (TypeError), or a float that is
    not finite (orjson writes null for it)."""
    assert _ORJSON is not None
    try:
        data = _ORJSON(value, option=option)
    except TypeError:
        return None
    # find, not ``in``: ``bytes in bytes`` first tries the bytes as an integer (a
    # TypeError made and dropped on every event)
    if data.find(b"null") >= 0 and _holds_non_finite(_fields_of(event)):
        return None
    return data


def _orjson_event(event: Event) -> str | None:
    """``event``'s JSON written by orjson from the dataclass itself (its fields in order,
    after ``type``), or None (see ``_orjson_checked``)."""
    data = _orjson_checked(event, event, _ORJSON_EVENT_OPTIONS)
    if data is None:
        return None
    cls = type(event)
    head = _TYPE_HEADS.get(cls)
    if head is None:
        head = _TYPE_HEADS[cls] = ('{"type":' + _ESCAPE(cls.type) + ",").encode()
    if data == b"{}":  # pragma: no cover - every event has a run_id, seq and time
        return head[:-1].decode() + "}"
    return (head + data[1:]).decode()


_TYPE_HEADS: dict[type[Event], bytes] = {}


_STEP_HEAD = ("run_id", "seq", "time", "step", "action", "args", "server", "tool", "attempt")
assert _field_names(StepStarted) == (*_STEP_HEAD, "key"), "StepStarted: fields changed"
assert _field_names(StepSucceeded) == (
    *_STEP_HEAD,
    *("duration_ms", "outputs", "result"),
), "StepSucceeded: fields changed"


def event_json(event: Event) -> str:
    """The compact JSON of ``event.to_dict()``: the values ``json.dumps`` writes with
    ``separators=(",", ":")``, in the same order (the text may spell a float or a
    character past ASCII otherwise; see the module docstring). Where orjson cannot
    write the same values, or without orjson, the text is ``json.dumps``'s.

    A step's start and end (two a step) are written from a dict written out here,
    which orjson writes in about half the time it takes over the dataclass, in one
    function (the log's hot path)."""
    if _ORJSON is None:  # pragma: no cover - orjson is installed with plansmith
        return _stdlib_json(event.to_dict())
    kind = type(event)
    e: Any = event
    # two literals, not one head and keys added after it: a dict made with ten keys is
    # sized for ten, and an eleventh makes it grow (0.3 µs a step)
    if kind is StepSucceeded:
        value: Any = {
            "type": "StepSucceeded",
            "run_id": e.run_id,
            "seq": e.seq,
            "time": e.time,
            "step": e.step,
            "action": e.action,
            "args": e.args,
            "server": e.server,
            "tool": e.tool,
            "attempt": e.attempt,
            "duration_ms": e.duration_ms,
            "outputs": e.outputs,
            "result": e.result,
        }
    elif kind is StepStarted:
        value = {
            "type": "StepStarted",
            "run_id": e.run_id,
            "seq": e.seq,
            "time": e.time,
            "step": e.step,
            "action": e.action,
            "args": e.args,
            "server": e.server,
            "tool": e.tool,
            "attempt": e.attempt,
            "key": e.key,
        }
    else:
        text = _orjson_event(event)
        return _stdlib_json(event.to_dict()) if text is None else text
    # ``_orjson_checked``, inline
    try:
        data = _ORJSON(value, option=_ORJSON_OPTIONS)
    except TypeError:
        return _stdlib_json(event.to_dict())
    if data.find(b"null") >= 0 and _holds_non_finite(_fields_of(event)):
        return _stdlib_json(event.to_dict())
    return data.decode()
