"""The emitter: stamps each event (seq, UTC time), writes it to the log, then tells views."""

from __future__ import annotations

import inspect
import json
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, TypeGuard, TypeVar, cast

from plansmith.errors import ExecutionError, InputError, PlansmithError
from plansmith.execution._events import Event
from plansmith.execution._invoker import ToolResult
from plansmith.execution._log import DEFAULT_INLINE_LIMIT, RunLog
from plansmith.model import JSONValue

__all__ = ["Emitter", "JSONish", "check_view", "utc_now", "iso_time"]

E = TypeVar("E", bound=Event)
#: a JSON value, or one with tuples for arrays or subclasses of dict and list (written as
#: JSON the same): these functions take what the events they fill take (the compiled
#: build checks a parameter's type when called, so it is not narrower than that)
JSONish = Any
Subscriber = Callable[[Event], None]
_LOG = logging.getLogger("plansmith.execution")


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso_time(moment: datetime) -> str:
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def elapsed_ms(start: str | None, end: str | None) -> float | None:
    """Milliseconds from ``start`` to ``end`` (ISO UTC times as the events carry them),
    or None when either is missing or not such a time."""
    if not start or not end:
        return None
    try:
        a = datetime.fromisoformat(start.replace("Z", "+00:00"))
        b = datetime.fromisoformat(end.replace("Z", "+00:00"))
    except ValueError:
        return None
    return round((b - a).total_seconds() * 1000, 3)


class Emitter:
    """Appends events to ``log`` before anyone acts on them (write-ahead)."""

    def __init__(
        self,
        log: RunLog,
        run_id: str,
        *,
        now: Callable[[], datetime] = utc_now,
        last_seq: int = 0,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
    ) -> None:
        self.log = log
        self.run_id = run_id
        self.now = now
        self.seq = last_seq
        self.inline_limit = inline_limit
        self.subscribers: list[Subscriber] = []
        self.pending: list[Event] = []
        self._second_ms = -1000  # the start of the second ``_prefix`` was written for, in ms
        self._prefix = ""
        self._made: Event | None = None  # the last event ``new`` made, not yet emitted

    def subscribe(self, fn: Subscriber) -> None:
        """Call ``fn`` with every event once it is durable. ``fn`` may stop the run by
        raising a ``PlansmithError``; a view that raises anything else has a fault of its
        own: it is dropped (with a warning and the traceback on the
        ``plansmith.execution`` logger), and the run and the other views go on.

        ``fn`` is called synchronously, in the flush that makes the events durable (the
        runner's per-step path): an async function is refused (``InputError``), as its
        coroutine would never be awaited (``check_view``)."""
        self.subscribers.append(check_view(fn))

    def new(self, cls: type[E], **fields: Any) -> E:
        """A new event of ``cls`` for this run, stamped with the next seq and the time."""
        self.seq += 1
        event = cls(run_id=self.run_id, seq=self.seq, time=self.stamp(), **fields)
        self._made = event
        return event

    def stamp(self) -> str:
        """The time now, as ``iso_time`` writes it; the date and time up to the second
        are formatted once a second when the clock is the default one."""
        if self.now is not utc_now:
            return iso_time(self.now())
        ms = time.time_ns() // 1_000_000
        at = ms - self._second_ms
        if 0 <= at < 1000:  # within the second of ``_prefix``
            return self._prefix + _MILLIS[at]
        self._second_ms = ms - ms % 1000
        self._prefix = iso_time(datetime.fromtimestamp(ms // 1000, UTC))[:-4]
        return self._prefix + _MILLIS[ms % 1000]

    def emit(self, event: E, *, defer: bool = False) -> E:
        """Stamp and append ``event``; unless ``defer``, commit and tell the views.

        A deferred event is committed with the next one that is not (or by
        ``flush``): the runner defers a step's end and commits it with the next
        step's start, before that step's call (one commit per step in a chain).

        An event stamped elsewhere (a recorded event a replay writes again) takes this
        log's next seq, and keeps its time: seq goes up by one per event in any log.
        """
        if event.seq == 0:  # not made by ``new``: stamp it now
            self.seq += 1
            stamped = replace(event, run_id=self.run_id, seq=self.seq, time=self.stamp())
        elif event is self._made or event.seq == self.seq + 1:
            stamped = event  # made by ``new`` (or the runner's fast path): its seq is next
            self.seq = event.seq
        else:
            self.seq += 1
            stamped = replace(event, run_id=self.run_id, seq=self.seq)
        self._made = None
        try:
            self.log.append(stamped)
        except BaseException:
            if stamped.seq == self.seq:  # not written: the next event takes its seq
                self.seq -= 1
            raise
        self.pending.append(stamped)
        if not defer:
            self.flush()
        return stamped

    def flush(self) -> None:
        """Make every appended event durable, then hand them to the subscribers."""
        if not self.pending:
            return
        self.log.flush()
        pending = self.pending
        self.pending = []
        if self.subscribers:
            self._tell(pending)

    def _tell(self, events: list[Event]) -> None:
        """Hand ``events`` to each subscriber (see ``subscribe``)."""
        for fn in tuple(self.subscribers):
            try:
                for e in events:
                    fn(e)
            except PlansmithError:
                raise  # a deliberate stop (the engine service's approved-plan check)
            except Exception:  # a fault of the view: the run and the other views go on
                self.subscribers.remove(fn)
                _LOG.warning(
                    "run %s: a view of its events failed (%r) and no longer hears of them",
                    self.run_id,
                    fn,
                    exc_info=True,
                )

    def pack(self, value: JSONish) -> JSONish:
        """``value``, or a blob reference when its JSON is larger than the inline limit."""
        kind = type(value)
        if value is None or kind is int or kind is float or kind is bool:
            return value
        if _json_size_bound(value, self.inline_limit) <= self.inline_limit:
            return value  # small for sure: no need to write its JSON to know
        text = json.dumps(value, separators=(",", ":"), sort_keys=True)
        if len(text) <= self.inline_limit:
            return value
        return {"$blob": self.log.put_blob(text.encode("utf-8"))}

    def pack_result(self, result: ToolResult) -> JSONValue:
        """``pack(result.to_dict())``, with the size bound of the dict's constant part
        counted once (a step's result: the runner packs one per step)."""
        value = result.to_dict()
        if _result_bound(result, self.inline_limit) <= self.inline_limit:
            return value  # small for sure, as ``pack`` finds with its own bound
        packed: JSONValue = self.pack(value)  # a dict, or a blob reference
        return packed

    def pack_step(self, outputs: JSONish, result: ToolResult) -> tuple[JSONish, JSONValue]:
        """``(pack(outputs), pack_result(result))`` for a step's outputs that were read
        from ``result``'s document: each output is a part of the document, and no part's
        JSON is longer than ``result``'s size bound (the parsed text's neither: twelve
        bytes a character bound any JSON written from it), so when the outputs' names
        and that many results fit the inline limit, neither needs a closer look."""
        limit = self.inline_limit
        bound = _result_bound(result, limit)
        value = result.to_dict()
        if bound > limit:
            return self.pack(outputs), self.pack(value)
        if type(outputs) is dict:
            names = 2
            for name in outputs:
                names += 12 * len(name) + 4 if type(name) is str else limit
            if names + bound * len(outputs) <= limit:
                return outputs, value
        return self.pack(outputs), value

    def unpack(self, value: JSONish) -> JSONish:
        return unpack(self.log, value)


def _result_bound(result: ToolResult, limit: int) -> int:
    """``_json_size_bound(result.to_dict(), limit)``, its constant part counted once."""
    structured = result.structured
    bound = _RESULT_BOUND + 12 * len(result.text)
    return bound + (32 if structured is None else _json_size_bound(structured, limit - bound))


#: the milliseconds of ``stamp``, written once: "000Z" to "999Z"
_MILLIS = tuple(f"{ms:03d}Z" for ms in range(1000))


def _json_size_bound(value: JSONish, limit: int) -> int:
    """An upper bound of the length of ``value``'s JSON; past ``limit`` it stops early.

    A string counts twelve bytes a character (the longest escape: a character
    outside the BMP is written as a surrogate pair), a number 32 (a larger integer
    its digits). The scalars of a container are counted in its loop, without a
    call each.
    """
    if isinstance(value, str):
        return 12 * len(value) + 2
    if type(value) is dict:
        total = 2
        for k, v in value.items():
            total += 12 * len(k if type(k) is str else str(k)) + 4
            if isinstance(v, str):
                total += 12 * len(v) + 2
            elif v is None or type(v) in _SCALARS or (type(v) is int and -_BIG < v < _BIG):
                total += 32
            else:
                total += _json_size_bound(v, limit - total)
            if total > limit:
                return total
        return total
    if type(value) is list:
        total = 2
        for item in value:
            total += 1 + _json_size_bound(item, limit - total)
            if total > limit:
                return total
        return total
    if isinstance(value, int) and not -_BIG < value < _BIG:
        return len(str(value))
    if value is None or isinstance(value, bool | int | float):
        return 32
    if isinstance(value, dict):  # a subclass of dict
        return _json_size_bound(dict(value), limit)
    return _json_size_bound(list(value), limit)


_BIG = 10**30
_SCALARS = frozenset({bool, float})
#: ``_json_size_bound`` of ``ToolResult.to_dict()`` less its structured content and text:
#: braces, four keys (12 bytes a character, 4 for quotes and separators), two flags, and
#: the text's quotes
_RESULT_BOUND = 2 + sum(12 * len(k) + 4 for k in ToolResult().to_dict()) + 32 + 32 + 2


def check_view(fn: Subscriber) -> Subscriber:
    """``fn``, if it can view a run's events: an async function is refused with
    ``InputError`` (a view is called synchronously, so its coroutine would never be
    awaited)."""
    if _is_async(fn):
        raise InputError(
            f"a view of a run's events must be a plain function, not the async {fn!r}",
            hint="a subscriber is called synchronously with each event; for async work,"
            " send the events into an anyio memory object stream (send_nowait) and read"
            " it in a task of your own, or call into the loop with anyio.from_thread",
        )
    return fn


def _is_async(fn: object) -> bool:
    """Whether calling ``fn`` makes a coroutine: an async function (or a partial of one),
    or an object whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(type(fn), "__call__", None)  # noqa: B004 - the method, not callable()
    return call is not None and inspect.iscoroutinefunction(call)


def is_blob_ref(value: object) -> TypeGuard[dict[str, Any]]:
    """Whether ``value`` is a blob reference, ``{"$blob": "sha256:..."}``, as ``pack`` makes."""
    return isinstance(value, dict) and len(value) == 1 and "$blob" in value


def unpack(log: RunLog, value: JSONish) -> JSONish:
    """The value a blob reference stands for (other values unchanged). A blob that
    cannot be read, or is not JSON, is an ``ExecutionError``."""
    if is_blob_ref(value):
        ref = str(value["$blob"])
        data = log.get_blob(ref)
        try:
            return cast(JSONValue, json.loads(data.decode("utf-8")))
        except ValueError as error:  # UnicodeDecodeError and JSONDecodeError both
            raise ExecutionError(
                f"blob {ref} does not hold a JSON value: {error}",
                hint="the run log's blob store is damaged: restore it from a backup",
            ) from None
    return value
