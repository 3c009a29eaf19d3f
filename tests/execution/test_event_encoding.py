"""The run log's fast paths agree with the plain ones: event JSON, event makers, size bound."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from plansmith.execution import (
    EVENT_TYPES,
    MemoryRunLog,
    StepEvent,
    StepFailed,
    StepStarted,
    StepSucceeded,
)
from plansmith.execution._emit import Emitter, _json_size_bound
from plansmith.execution._event_fast import event_json, step_started, step_succeeded

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats()
    | st.text(max_size=6)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=12)
        | st.dictionaries(st.text(max_size=4), inner, max_size=12)
        | st.tuples(inner, inner)
    ),
    max_leaves=30,
)
step_args = st.tuples() | st.tuples(st.text(max_size=4)) | st.tuples(st.integers(), st.floats())


def _plain(event: Any) -> str:
    return json.dumps(event.to_dict(), separators=(",", ":"))


def _typed(value: Any) -> Any:
    """``value`` with each number and flag tagged with its type, floats by their repr
    (so 1, 1.0 and True differ, and NaN equals NaN)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    if isinstance(value, bool | int | float):
        return (type(value).__name__, repr(value))
    return value


def _read(text: str) -> Any:
    return _typed(json.loads(text, parse_constant=lambda name: ("constant", name)))


def _same_json(event: Any) -> None:
    """``event_json`` writes what ``json.dumps`` writes, up to how a float is spelled
    (0.000015 or 1.5e-05) and whether a character past ASCII is escaped: the same values
    of the same types, and the same order of keys."""
    fast, plain = event_json(event), _plain(event)
    assert _read(fast) == _read(plain)
    assert list(json.loads(fast)) == list(json.loads(plain))


def _sample(cls: type[Any], value: object, args: tuple[object, ...], text: str) -> Any:
    """An event of ``cls`` with every field set from ``value``, ``args`` and ``text``."""
    kwargs: dict[str, object] = {"run_id": f"r{text}", "seq": 7, "time": f"t{text}"}
    for f in fields(cls):
        if f.name in kwargs:
            continue
        if f.name == "args":
            kwargs[f.name] = args
        elif f.type in ("str", "str | None"):
            kwargs[f.name] = text
        elif f.type in ("int",):
            kwargs[f.name] = 3
        elif f.type in ("float", "float | None"):
            kwargs[f.name] = 1.5
        elif f.type == "bool":
            kwargs[f.name] = True
        elif f.type.startswith("tuple"):
            kwargs[f.name] = (text, text)
        else:  # JSONValue or a dict of them
            kwargs[f.name] = value if f.type == "JSONValue" else {"k": value}
    return cls(**kwargs)


@given(value=json_values, args=step_args, text=st.text(max_size=5))
def test_event_json_writes_what_json_dumps_writes_for_every_event_type(
    value: object, args: tuple[object, ...], text: str
) -> None:
    for cls in EVENT_TYPES.values():
        event = _sample(cls, value, args, text)
        _same_json(event)


def test_a_step_events_json_stays_right_after_its_step_was_written_once() -> None:
    common: dict[str, Any] = {"run_id": "r", "step": "s1", "action": "a", "args": ("x", 2)}
    first = StepStarted(seq=1, time="t1", server="sv", tool="tl", attempt=1, key="r/s1", **common)
    again = StepSucceeded(
        seq=2, time="t2", server="sv", tool="tl", attempt=2, outputs={"v": [1.5, None]}, **common
    )
    moved = StepStarted(seq=3, time="t3", server="other", tool="tl", key="r/s1", **common)
    for event in (first, again, moved, first):
        _same_json(event)


def test_a_step_event_with_an_argument_that_cannot_be_hashed_is_still_written() -> None:
    event = StepFailed(run_id="r", step="s", action="a", args=(["a", "list"],), message="m")  # type: ignore[arg-type]
    _same_json(event)


def test_non_finite_floats_are_written_as_json_dumps_writes_them() -> None:
    for number in (float("nan"), float("inf"), float("-inf")):
        event = StepSucceeded(run_id="r", step="s", action="a", duration_ms=number, outputs=number)
        assert event_json(event) == _plain(event)
        nested = StepSucceeded(run_id="r", step="s", action="a", outputs={"v": [1, number]})
        assert event_json(nested) == _plain(nested)  # not null, as orjson would write it


def test_values_orjson_cannot_write_are_written_by_the_standard_library() -> None:
    for outputs in ({1: "int key"}, {"big": 10**30}, {"s": "\ud800"}, {"t": (1, {"u": 2.5})}):
        event = StepSucceeded(run_id="r", step="s", action="a", outputs=outputs)  # type: ignore[arg-type]
        _same_json(event)
        assert json.loads(event_json(event))["outputs"] == json.loads(_plain(event))["outputs"]


def test_a_plain_step_end_is_written_with_the_same_text_as_json_dumps() -> None:
    event = StepSucceeded(
        run_id="r", seq=2, time="t", step="s", action="a", args=("x",), server="sv", tool="e",
        duration_ms=0.153, outputs={"v": 7}, result={"structured": {"result": 7}, "text": "7",
        "is_error": False, "retryable": False},
    )  # fmt: skip
    assert event_json(event) == _plain(event)


@given(text=st.text(max_size=5), args=step_args, value=json_values)
def test_fast_step_event_makers_make_the_events_the_constructors_make(
    text: str, args: tuple[Any, ...], value: Any
) -> None:
    started = step_started("r", 4, text, "s", text, args, "sv", "tl", 2, f"r/{text}")
    assert started == StepStarted(
        run_id="r", seq=4, time=text, step="s", action=text, args=args, server="sv", tool="tl",
        attempt=2, key=f"r/{text}",
    )  # fmt: skip
    succeeded = step_succeeded("r", 5, text, "s", "a", args, "sv", "tl", 1, 2.5, value, None)
    assert succeeded == StepSucceeded(
        run_id="r", seq=5, time=text, step="s", action="a", args=args, server="sv", tool="tl",
        attempt=1, duration_ms=2.5, outputs=value, result=None,
    )  # fmt: skip
    assert isinstance(succeeded, StepEvent)


def test_events_from_the_fast_makers_are_frozen() -> None:
    event = step_started("r", 1, "t", "s", "a", (), "sv", "tl", 1, "k")
    try:
        event.seq = 2  # type: ignore[misc]
    except AttributeError:
        return
    raise AssertionError("an event from step_started could be changed")


@given(value=json_values)
def test_size_bound_is_never_below_the_length_of_the_json(value: Any) -> None:
    text = json.dumps(value, separators=(",", ":"), sort_keys=True)
    limit = len(text) + 100
    assert _json_size_bound(value, limit) >= min(len(text), limit + 1)


@given(value=json_values)
def test_pack_keeps_a_value_inline_exactly_when_its_json_fits(value: Any) -> None:
    log = MemoryRunLog()
    emitter = Emitter(log, "r", inline_limit=40)
    packed = emitter.pack(value)
    fits = len(json.dumps(value, separators=(",", ":"), sort_keys=True)) <= 40
    scalar = value is None or isinstance(value, bool | int | float)
    assert (packed is value) == (fits or scalar)
    same = json.dumps(emitter.unpack(packed), sort_keys=True) == json.dumps(value, sort_keys=True)
    assert same  # compared as JSON: NaN is not equal to itself


def test_a_step_written_again_with_equal_arguments_of_other_types_keeps_their_json() -> None:
    for args in ((1,), (1.0,), (True,), ([1],), ([1.0],)):
        event = StepStarted(run_id="r", step="s", action="a", args=args, key="k")  # type: ignore[arg-type]
        _same_json(event)


@given(
    changes=st.lists(
        st.tuples(
            st.sampled_from(["r1", "r2"]),
            st.sampled_from(["a", "b"]),
            st.sampled_from([(), ("x",), (1,), (1.0,), (True,), ([1],)]),
            st.sampled_from(["sv", "other"]),
            st.booleans(),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_events_of_one_step_id_stay_right_whatever_changes_between_them(
    changes: list[tuple[str, str, tuple[Any, ...], str, bool]],
) -> None:
    """One step id whose run, action, arguments and server change from event to event
    (runs share step ids; a resumed or replanned step may differ): each event is written
    from its own fields, never from what was kept for an earlier one."""
    for seq, (run_id, action, args, server, started) in enumerate(changes, start=1):
        common: dict[str, Any] = {"run_id": run_id, "seq": seq, "step": "s", "action": action}
        common |= {"args": args, "server": server, "time": "t", "outputs": {"v": args}}
        event: Any = (
            StepStarted(key=f"{run_id}/s", **{k: v for k, v in common.items() if k != "outputs"})
            if started
            else StepSucceeded(duration_ms=0.5, **common)
        )
        _same_json(event)


def test_step_events_with_fields_of_unusual_types_are_written_as_json_dumps_writes_them() -> None:
    """The fast writers of a step's start and end take ints, strs and finite floats;
    anything else (an int subclass, an int duration) goes the general way."""
    common: dict[str, Any] = {"run_id": "r", "step": "s", "action": "a", "time": "t"}
    events: list[Any] = [
        StepStarted(seq=True, attempt=2, **common),
        StepStarted(seq=1, attempt=False, key="k", **common),
        StepSucceeded(seq=2, duration_ms=3, **common),
        StepSucceeded(seq=2, attempt=True, duration_ms=-0.0, **common),
        StepSucceeded(seq=2, duration_ms=1e300, result=[1, [2.5]], **common),
    ]
    for event in events:
        _same_json(event)
