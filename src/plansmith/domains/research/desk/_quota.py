"""Per-source quotas of research runs, and how they are measured from the sources' logs.

A quota bounds what plansmith asks of one source server: ``max_in_flight``
calls at once, across every research run of the service (the server pool's
limiter for that server), ``max_calls`` calls (searches and fetches) per
run, ``max_rate`` calls per ``rate_window`` seconds across every run (0: no
such limit; a call waits for a slot, within its run's deadline), and a circuit
breaker that opens after ``breaker_failures`` failed calls in a row (0: no
breaker) and lets a trial call through after ``breaker_cooldown`` seconds (see
:mod:`._limits`). :func:`measure_calls` reads a source's own JSONL call log (written by
``plansmith-corpus``) and reports the most calls it had in flight and the calls
of each run (by the run id that prefixes each call's idempotency key), so that
a test, or an operator, checks the quotas from the source's side.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plansmith.errors import InputError, Location

__all__ = [
    "SourceQuota",
    "LimitSettings",
    "limit_settings",
    "describe_quota",
    "QuotaConfigError",
    "parse_rate",
    "CallVolume",
    "CallsMeasured",
    "measure_calls",
]

#: a rate's window by its unit, in seconds
_UNITS = {"s": 1.0, "sec": 1.0, "second": 1.0, "min": 60.0, "minute": 60.0, "h": 3600.0}
_UNITS |= {"hour": 3600.0}
_RATE = re.compile(r"^\s*(\d+)\s*(?:/|per)\s*(\d*(?:\.\d+)?)\s*([a-z]+)\s*$")


class QuotaConfigError(InputError):
    """A source quota (rate, breaker, limits) is configured wrongly."""


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True, slots=True)
class SourceQuota:
    """What one source may be asked: calls at once (all runs), calls per run, calls per
    time window (all runs; 0: unlimited), and its circuit breaker (0 failures: none)."""

    max_in_flight: int = 4
    max_calls: int = 200
    max_rate: int = 0
    rate_window: float = 1.0
    breaker_failures: int = 5
    breaker_cooldown: float = 30.0

    def __post_init__(self) -> None:
        if not all(
            isinstance(v, int) and not isinstance(v, bool)
            for v in (self.max_in_flight, self.max_calls, self.max_rate, self.breaker_failures)
        ):
            raise QuotaConfigError(
                f"a source quota's counts must be whole numbers, not {self}",
                hint="max_in_flight, max_calls, max_rate and breaker_failures are integers",
            )
        if self.max_in_flight < 1 or self.max_calls < 1:
            raise QuotaConfigError(
                f"a source quota needs max_in_flight >= 1 and max_calls >= 1, not {self}",
                hint="give each source at least one call at a time and one call per run",
            )
        if self.max_rate < 0 or not _number(self.rate_window) or self.rate_window <= 0:
            raise QuotaConfigError(
                f"a source's rate needs max_rate >= 0 calls per rate_window > 0 seconds, "
                f"not {self.max_rate} per {self.rate_window}",
                hint='e.g. max_rate=5, rate_window=1 ("5/s") or max_rate=60, rate_window=60 '
                '("60/min"); max_rate=0 sets no rate',
            )
        cooldown = self.breaker_cooldown
        if self.breaker_failures < 0 or not (_number(cooldown) and cooldown > 0):
            raise QuotaConfigError(
                f"a source's breaker needs breaker_failures >= 0 and breaker_cooldown > 0 "
                f"seconds, not {self.breaker_failures} and {self.breaker_cooldown}",
                hint="e.g. breaker_failures=5, breaker_cooldown=30; breaker_failures=0 sets "
                "no breaker",
            )

    @classmethod
    def with_rate(cls, rate: str, **limits: Any) -> SourceQuota:
        """A quota of ``rate`` (``"5/s"``, ``"60/min"``, ``"100 per 10 s"``) and ``limits``."""
        calls, window = parse_rate(rate)
        return cls(max_rate=calls, rate_window=window, **limits)


def parse_rate(text: str) -> tuple[int, float]:
    """``"5/s"`` -> (5, 1.0); ``"60/min"`` -> (60, 60.0); ``"100 per 10 s"`` -> (100, 10.0)."""
    m = _RATE.match(str(text).lower())
    unit = None
    if m is not None:
        unit = _UNITS.get(m[3], _UNITS.get(m[3].removesuffix("s")))
    if m is None or unit is None or int(m[1]) < 1 or (m[2] and float(m[2]) <= 0):
        raise QuotaConfigError(
            f"not a rate: {text!r}",
            hint='write CALLS/UNIT or CALLS per N UNIT, e.g. "5/s", "60/min", "100 per 10 s"; '
            "units: s, min, h",
        )
    return int(m[1]), (float(m[2]) if m[2] else 1.0) * unit


@dataclass(frozen=True, slots=True)
class LimitSettings:
    """Rate and breaker settings a face was given (``plansmith research``'s options,
    ``start_research``'s arguments): ``rates`` per source name (``"*"``: every source),
    as (calls, window seconds); the breaker's failures in a row and cool-down (None: as
    the quota has it)."""

    rates: tuple[tuple[str, int, float], ...] = ()
    breaker_failures: int | None = None
    breaker_cooldown: float | None = None

    def __bool__(self) -> bool:
        return (
            bool(self.rates)
            or self.breaker_failures is not None
            or (self.breaker_cooldown is not None)
        )

    def rate_of(self, source: str) -> tuple[int, float] | None:
        """The rate set for ``source`` (its own before the one for every source)."""
        own = [(c, w) for name, c, w in self.rates if name == source]
        every = [(c, w) for name, c, w in self.rates if name == "*"]
        found = own or every
        return found[-1] if found else None

    def apply(self, quota: SourceQuota, source: str) -> SourceQuota:
        """``quota`` with these settings for ``source`` (what is not set: as it was)."""
        rate = self.rate_of(source)
        calls, window = rate if rate is not None else (quota.max_rate, quota.rate_window)
        failures = (
            quota.breaker_failures if self.breaker_failures is None else self.breaker_failures
        )
        cooldown = (
            quota.breaker_cooldown if self.breaker_cooldown is None else self.breaker_cooldown
        )
        return SourceQuota(quota.max_in_flight, quota.max_calls, calls, window, failures, cooldown)


def _where(names: Mapping[str, str], key: str) -> Location:
    return Location(argument=names.get(key, key))


def limit_settings(
    sources: Sequence[str],
    *,
    rate: str | Sequence[str] | Mapping[str, str] | None = None,
    breaker_failures: object = None,
    breaker_cooldown: object = None,
    names: Mapping[str, str] | None = None,
) -> LimitSettings:
    """Check and read a face's rate and breaker settings, or raise
    :class:`QuotaConfigError` with a hint and the argument's location (``names``: the
    face's name of each argument, ``rate``, ``breaker_failures``, ``breaker_cooldown``,
    e.g. ``--rate``). ``rate``: one rate for every source (``"5/s"``), ``SOURCE=RATE``
    items, or a mapping source -> rate (``"*"``: every source)."""
    names = names or {}
    items: list[tuple[str, str]] = []
    if isinstance(rate, str):
        rate = [rate]
    if isinstance(rate, Mapping):
        items = [(str(k), v) for k, v in rate.items()]
    elif rate is not None:
        for item in rate:
            if not isinstance(item, str):
                raise QuotaConfigError(
                    f"a rate is text such as '5/s', not {item!r}", location=_where(names, "rate")
                )
            name, eq, value = item.partition("=")
            items.append((name.strip(), value) if eq else ("*", item))
    rates: list[tuple[str, int, float]] = []
    for name, value in items:
        if name not in sources and name != "*":
            raise QuotaConfigError(
                f"a rate for an unknown source: {name!r}",
                location=_where(names, "rate"),
                hint=f"the sources are: {', '.join(sources)} (or give a rate for every source)",
            )
        if not isinstance(value, str):
            raise QuotaConfigError(
                f"a rate is text such as '5/s', not {value!r}", location=_where(names, "rate")
            )
        try:
            calls, window = parse_rate(value)
        except QuotaConfigError as error:
            raise QuotaConfigError(
                error.message, location=_where(names, "rate"), hint=error.hint
            ) from None
        rates.append((name, calls, window))
    failures = breaker_failures
    if failures is not None and (
        isinstance(failures, bool) or not isinstance(failures, int) or failures < 0
    ):
        raise QuotaConfigError(
            f"breaker failures must be a whole number >= 0, not {failures!r}",
            location=_where(names, "breaker_failures"),
            hint="e.g. 5: the breaker opens after 5 failed calls in a row; 0: no breaker",
        )
    cooldown = breaker_cooldown
    if cooldown is not None and not (_number(cooldown) and float(cooldown) > 0):  # type: ignore[arg-type]
        raise QuotaConfigError(
            f"the breaker's cool-down must be a number of seconds > 0, not {cooldown!r}",
            location=_where(names, "breaker_cooldown"),
            hint="e.g. 30: after 30 s an open breaker lets one trial call through",
        )
    return LimitSettings(
        tuple(rates),
        failures,
        None if cooldown is None else float(cooldown),  # type: ignore[arg-type]
    )


def describe_quota(source: str, quota: SourceQuota) -> str:
    """``quota`` in words: "python-docs: 5 calls per 1 s; breaker after 5 failures in a
    row, cool-down 30 s; 4 calls at once, 200 per run"."""
    rate = (
        f"{quota.max_rate} calls per {quota.rate_window:g} s" if quota.max_rate else "no rate quota"
    )
    breaker = (
        f"breaker after {quota.breaker_failures} failures in a row, "
        f"cool-down {quota.breaker_cooldown:g} s"
        if quota.breaker_failures
        else "no breaker"
    )
    return (
        f"{source}: {rate}; {breaker}; {quota.max_in_flight} calls at once, "
        f"{quota.max_calls} per run"
    )


@dataclass(slots=True)
class CallVolume:
    """The calls one run has made of each source so far (searches and fetches)."""

    quota: dict[str, SourceQuota]
    used: Counter[str] = field(default_factory=Counter)

    def take(self, source: str, n: int = 1) -> bool:
        """Reserve ``n`` calls of ``source``; False (and nothing reserved) past its quota."""
        limit = self.quota[source].max_calls if source in self.quota else None
        if limit is not None and self.used[source] + n > limit:
            return False
        self.used[source] += n
        return True

    def give_back(self, source: str, n: int = 1) -> None:
        self.used[source] = max(0, self.used[source] - n)


@dataclass(frozen=True, slots=True)
class CallsMeasured:
    """One source's log, summed up: calls, the most in flight (as the server counted
    them, and by overlapping start/end times), and the calls of each run."""

    source: str
    calls: int
    max_in_flight: int
    max_overlap: int
    per_run: dict[str, int]
    per_run_tool: dict[str, dict[str, int]]


def _overlap(intervals: Iterable[tuple[float, float]]) -> int:
    """The most intervals open at one time (an end at t closes before a start at t)."""
    spans = list(intervals)
    points = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    most = now = 0
    for _, step in points:
        now += step
        most = max(most, now)
    return most


def measure_calls(log: Path, *, runs: Iterable[str] | None = None) -> CallsMeasured:
    """Measure ``log`` (a source's JSONL call log); ``runs``: count only these runs' calls
    (by idempotency key prefix ``RUN_ID/``) in ``per_run``."""
    try:
        lines = log.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise InputError(
            f"cannot read the call log: {error.strerror}", location=Location(str(log))
        ) from None
    entries = []
    for number, line in enumerate(lines, 1):
        try:
            entries.append(json.loads(line))
        except ValueError:
            raise InputError(
                "a call log line is not JSON", location=Location(str(log), number)
            ) from None
    wanted = set(runs) if runs is not None else None
    per_run: Counter[str] = Counter()
    per_tool: dict[str, Counter[str]] = {}
    for e in entries:
        key = str(e.get("key") or "")
        run = key.split("/", 1)[0] if "/" in key else ""
        if run and (wanted is None or run in wanted):
            per_run[run] += 1
            per_tool.setdefault(run, Counter())[str(e.get("tool"))] += 1
    source = str(entries[0].get("source", "")) if entries else ""
    return CallsMeasured(
        source=source,
        calls=len(entries),
        max_in_flight=max((int(e.get("in_flight", 0)) for e in entries), default=0),
        max_overlap=_overlap((float(e["started"]), float(e["finished"])) for e in entries),
        per_run=dict(per_run),
        per_run_tool={r: dict(c) for r, c in per_tool.items()},
    )
