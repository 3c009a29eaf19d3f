"""Per-source quotas of research runs, and how they are measured from the sources' logs.

A quota bounds what plansmith asks of one source server: ``max_in_flight``
calls at once, across every research run of the service (the server pool's
limiter for that server), and ``max_calls`` calls (searches and fetches) per
run. :func:`measure_calls` reads a source's own JSONL call log (written by
``plansmith-corpus``) and reports the most calls it had in flight and the calls
of each run (by the run id that prefixes each call's idempotency key), so that
a test, or an operator, checks the quotas from the source's side.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from plansmith.errors import InputError, Location

__all__ = ["SourceQuota", "CallVolume", "CallsMeasured", "measure_calls"]


@dataclass(frozen=True, slots=True)
class SourceQuota:
    """What one source may be asked: calls at once (all runs), calls per run."""

    max_in_flight: int = 4
    max_calls: int = 200

    def __post_init__(self) -> None:
        if self.max_in_flight < 1 or self.max_calls < 1:
            raise InputError(
                f"a source quota needs max_in_flight >= 1 and max_calls >= 1, not {self}",
                hint="give each source at least one call at a time and one call per run",
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
