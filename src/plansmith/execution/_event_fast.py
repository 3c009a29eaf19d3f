"""Fast paths for the runner and the log, each the same as the plain one (tests check).

``step_started`` and ``step_succeeded`` make the two events of every step, and
``tool_call`` its call, without the frozen dataclass ``__init__`` (which parses keywords
and calls ``object.__setattr__`` per field). ``event_json`` writes the JSON of
``event.to_dict()`` without building it through ``to_dict``: with orjson (a base
dependency), a step's start and end from a dict written out for them and any other
event from the dataclass itself; the text may spell a float or a character past ASCII
otherwise than ``json.dumps`` does, the values and the order of the keys are the same.
Where orjson would write other values (a float that is not finite, a key that is not a
string, an integer past 64 bits, a lone surrogate) or without orjson, the standard
library's encoder writes the text ``json.dumps(..., separators=(",", ":"))`` writes: the
part of a step's events that is the same in each is written once per step, and a step's
start and success have writers of their own that format their scalars inline.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import fields
from operator import attrgetter
from typing import Any

from plansmith.execution._events import (
    Event,
    StepEvent,
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
    outputs: JSONValue,
    result: JSONValue,
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


_ENCODE = json.JSONEncoder(separators=(",", ":")).encode
_ESCAPE: Callable[[str], str] = json.encoder.encode_basestring_ascii
_INT = int.__repr__
_FLOAT = float.__repr__


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


def _stdlib_json(value: Any) -> str:
    if _C_ENCODE is None:
        return _ENCODE(value)
    return "".join(_C_ENCODE(value, 0))


def _container_json(value: Any) -> str:
    """A list, tuple or dict as JSON: through orjson (about five times faster) when it
    writes the same values, else as ``json.dumps`` writes it (a key that is not a string,
    an integer past 64 bits, a lone surrogate, a value of another type, or a float that
    is not finite: orjson would write null for it)."""
    if _ORJSON is None:
        return _stdlib_json(value)
    try:
        data = _ORJSON(value, option=_ORJSON_OPTIONS)
    except TypeError:
        return _stdlib_json(value)
    if b"null" in data and _holds_non_finite(value):
        return _stdlib_json(value)
    return data.decode()


def _holds_non_finite(value: Any) -> bool:
    """Whether a float in ``value`` is infinite or not a number."""
    if type(value) is float:
        return value - value != 0.0
    if isinstance(value, dict):
        return any(_holds_non_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_non_finite(v) for v in value)
    return False


def _value_json(value: Any) -> str:
    """``value`` as ``json.dumps(value, separators=(",", ":"))`` writes it."""
    kind = type(value)
    if kind is str:
        return _ESCAPE(value)
    if kind is int:
        return _INT(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is float and math.isfinite(value):
        return _FLOAT(value)
    return _container_json(value)


_Writer = Callable[[Event], str]
_WRITERS: dict[type[Event], _Writer] = {}


def _writer(cls: type[Event]) -> _Writer:
    names = _field_names(cls)
    values = attrgetter(*names)
    head = '{"type":' + _ESCAPE(cls.type)
    keys = tuple(f",{_ESCAPE(name)}:" for name in names)

    def write(event: Event) -> str:
        parts = [head]
        for key, value in zip(keys, values(event), strict=True):
            parts.append(key)
            parts.append(_value_json(value))
        parts.append("}")
        return "".join(parts)

    return write


_STEP_HEAD = ("run_id", "seq", "time", "step", "action", "args", "server", "tool", "attempt")
_STEPS_MAX = 64  # step ids kept in ``_STEPS`` (the steps in flight, in practice)


_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


def _same_args(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """The same object, or the same scalars of the same types (``1``, ``1.0`` and ``True``
    are equal but not the same JSON; containers are not compared: written again)."""
    return a is b or (
        len(a) == len(b)
        and all(
            type(x) is type(y) and type(x) in _SCALAR_TYPES and x == y
            for x, y in zip(a, b, strict=True)
        )
    )


def _step_writer(cls: type[Event]) -> _Writer:
    """A step event's writer: the fields that are the same in every event of a step
    (run, step, action, args, server, tool) are written once per step, and kept."""
    names = _field_names(cls)
    assert names[:9] == _STEP_HEAD, f"{cls.__name__}: unexpected field order"
    rest = attrgetter(*names[8:], "seq")  # two names or more: a tuple (seq is not written)
    keys = tuple(f",{_ESCAPE(name)}:" for name in names[8:])
    head = '{"type":' + _ESCAPE(cls.type) + ',"run_id":'

    def write(event: Event) -> str:
        e: Any = event
        part = _step_part(e)
        parts = [head, part[5], ',"seq":', _value_json(e.seq)]
        parts += (',"time":', _value_json(e.time), part[6])
        for key, value in zip(keys, rest(event)[:-1], strict=True):
            parts.append(key)
            parts.append(_value_json(value))
        parts.append("}")
        return "".join(parts)

    return write


#: step id -> (run_id, action, args, server, tool, the JSON of run_id, that of ``,"step":``
#: to the tool): what of a step event's JSON is the same in every event of the step
_STEPS: dict[str, tuple[Any, ...]] = {}
#: the part made last: the next one of the same run takes its run's JSON from it
_LAST: list[tuple[Any, ...]] = [(object(),) + (None,) * 6]


def _step_part(e: Any) -> tuple[Any, ...]:
    """The kept part of step event ``e``'s JSON (see ``_STEPS``), made again when one of
    the fields it was written from differs (compared by identity first: the runner
    passes the same objects in every event of a step)."""
    part = _STEPS.get(e.step)
    if part is not None and (
        part[0] is e.run_id
        and part[1] is e.action
        and part[2] is e.args
        and part[3] is e.server
        and part[4] is e.tool
    ):
        return part
    if (
        part is not None
        and part[0] == e.run_id
        and part[1] == e.action
        and part[3] == e.server
        and part[4] == e.tool
        and type(e.args) is tuple
        and _same_args(part[2], e.args)
    ):
        return part
    if len(_STEPS) >= _STEPS_MAX:
        _STEPS.clear()
    run_id, step, action, args, server, tool = e.run_id, e.step, e.action, e.args, e.server, e.tool
    last = _LAST[0]
    run_json = last[5] if last[0] is run_id else _value_json(run_id)
    if type(args) is tuple and len(args) == 1 and type(args[0]) is str:
        args_json = f"[{_ESCAPE(args[0])}]"
    else:
        args_json = _value_json(args)
    if type(step) is str and type(action) is str and type(server) is str and type(tool) is str:
        text = (
            f',"step":{_ESCAPE(step)},"action":{_ESCAPE(action)},"args":{args_json}'
            f',"server":{_ESCAPE(server)},"tool":{_ESCAPE(tool)}'
        )
    else:
        text = (
            f',"step":{_value_json(step)},"action":{_value_json(action)},"args":{args_json}'
            f',"server":{_value_json(server)},"tool":{_value_json(tool)}'
        )
    part = _STEPS[step] = _LAST[0] = (run_id, action, args, server, tool, run_json, text)
    return part


_STARTED_HEAD = '{"type":"StepStarted","run_id":'
_SUCCEEDED_HEAD = '{"type":"StepSucceeded","run_id":'


def _started_json(e: Any) -> str:
    """``StepStarted``'s JSON (the runner writes one per step): its scalars inline."""
    seq, time, attempt, key = e.seq, e.time, e.attempt, e.key
    if type(seq) is not int or type(time) is not str or type(attempt) is not int:
        return _WRITERS_SLOW[StepStarted](e)
    if type(key) is not str or type(e.step) is not str:
        return _WRITERS_SLOW[StepStarted](e)
    part = _step_part(e)
    return (
        f'{_STARTED_HEAD}{part[5]},"seq":{seq},"time":{_ESCAPE(time)}{part[6]}'
        f',"attempt":{attempt},"key":{_ESCAPE(key)}}}'
    )


def _succeeded_json(e: Any) -> str:
    """``StepSucceeded``'s JSON (the runner writes one per step): its scalars inline,
    its outputs and result through the C encoder in one call, as one dict."""
    seq, time, attempt, duration = e.seq, e.time, e.attempt, e.duration_ms
    if _C_ENCODE is None or type(seq) is not int or type(time) is not str:
        return _WRITERS_SLOW[StepSucceeded](e)
    if type(attempt) is not int or type(duration) is not float or type(e.step) is not str:
        return _WRITERS_SLOW[StepSucceeded](e)
    if duration - duration != 0.0:  # inf or nan: written as json.dumps writes them
        return _WRITERS_SLOW[StepSucceeded](e)
    part = _step_part(e)
    rest = _container_json({"outputs": e.outputs, "result": e.result})
    return (  # ``rest`` is '{"outputs":...}': its brace is left out
        f'{_SUCCEEDED_HEAD}{part[5]},"seq":{seq},"time":{_ESCAPE(time)}{part[6]}'
        f',"attempt":{attempt},"duration_ms":{_FLOAT(duration)},{rest[1:]}'
    )


_WRITERS_SLOW: dict[type[Event], _Writer] = {}


def _orjson_event(event: Event) -> str | None:
    """``event``'s JSON written by orjson from the dataclass itself (its fields in order,
    after ``type``), or None where ``json.dumps`` would write other values (see
    ``_container_json``) or orjson cannot write it."""
    assert _ORJSON is not None
    try:
        data = _ORJSON(event, option=_ORJSON_EVENT_OPTIONS)
    except TypeError:
        return None
    if b"null" in data and _holds_non_finite(_fields_of(event)):
        return None
    cls = type(event)
    head = _TYPE_HEADS.get(cls)
    if head is None:
        head = _TYPE_HEADS[cls] = ('{"type":' + _ESCAPE(cls.type) + ",").encode()
    if data == b"{}":  # pragma: no cover - every event has a run_id, seq and time
        return head[:-1].decode() + "}"
    return (head + data[1:]).decode()


_TYPE_HEADS: dict[type[Event], bytes] = {}


def _fields_of(event: Event) -> tuple[Any, ...]:
    return tuple(getattr(event, name) for name in _field_names(type(event)))


def _step_head(e: Any, kind: str) -> dict[str, Any]:
    """The fields every step event has, as a dict (in their order, after ``type``)."""
    return {
        "type": kind,
        "run_id": e.run_id,
        "seq": e.seq,
        "time": e.time,
        "step": e.step,
        "action": e.action,
        "args": e.args,
        "server": e.server,
        "tool": e.tool,
        "attempt": e.attempt,
    }


def _orjson_checked(value: dict[str, Any], event: Event) -> str | None:
    """orjson's JSON of ``value`` (``event`` as a dict), or None where ``json.dumps``
    would write other values (see ``_container_json``)."""
    assert _ORJSON is not None
    try:
        data = _ORJSON(value, option=_ORJSON_OPTIONS)
    except TypeError:
        return None
    if b"null" in data and _holds_non_finite(_fields_of(event)):
        return None
    return data.decode()


def _orjson_step_started(e: Any) -> str | None:
    """``_orjson_event`` for a ``StepStarted`` (one a step): from a dict written out
    here, which orjson writes in about half the time it takes over the dataclass."""
    value = _step_head(e, "StepStarted")
    value["key"] = e.key
    return _orjson_checked(value, e)


def _orjson_step_succeeded(e: Any) -> str | None:
    """``_orjson_event`` for a ``StepSucceeded`` (one a step), as ``_orjson_step_started``."""
    value = _step_head(e, "StepSucceeded")
    value["duration_ms"] = e.duration_ms
    value["outputs"] = e.outputs
    value["result"] = e.result
    return _orjson_checked(value, e)


assert _field_names(StepStarted) == (*_STEP_HEAD, "key"), "StepStarted: fields changed"
assert _field_names(StepSucceeded) == (
    *_STEP_HEAD,
    *("duration_ms", "outputs", "result"),
), "StepSucceeded: fields changed"
_ORJSON_WRITERS: dict[type[Event], Callable[[Any], str | None]] = {
    StepStarted: _orjson_step_started,
    StepSucceeded: _orjson_step_succeeded,
}


def event_json(event: Event) -> str:
    """The compact JSON of ``event.to_dict()``: the values ``json.dumps`` writes with
    ``separators=(",", ":")``, in the same order (the text may spell a float or a
    character past ASCII otherwise), without building the dict (the log's encoder)."""
    if _ORJSON is not None:
        text = _ORJSON_WRITERS.get(type(event), _orjson_event)(event)
        if text is not None:
            return text
    writer = _WRITERS.get(type(event))
    if writer is None:
        cls = type(event)
        is_step = isinstance(event, StepEvent) and _field_names(cls)[:9] == _STEP_HEAD
        writer = _WRITERS_SLOW[cls] = _step_writer(cls) if is_step else _writer(cls)
        if cls is StepStarted and _field_names(cls) == (*_STEP_HEAD, "key"):
            writer = _started_json
        elif cls is StepSucceeded and _field_names(cls) == (
            *_STEP_HEAD,
            *("duration_ms", "outputs", "result"),
        ):
            writer = _succeeded_json
        _WRITERS[cls] = writer
    return writer(event)
