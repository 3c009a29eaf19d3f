"""Run metrics: what the run log says of whole runs, per domain, per tool, per time window.

``run_facts(info, events)`` reads one run: its domain (``run_domain``), how it ended,
the steps it ran, its retries and replans, what people did to it (approvals by a
person, answers to its ask steps, cancels, retries of the whole run) and how long each
approval and each answer was waited for (from its ``AwaitingApproval`` to the
``PlanApproved`` that ended the wait; from an ``AwaitingAnswer`` to its
``AnswerRecorded``). An ask step is no tool call. Its tool calls are counted as
``stats_of`` counts them: every attempt is a call (``StepSucceeded``, ``StepFailed``,
or ``StepRetrying``: a failed attempt tried again), each failure by its error class.

``metrics_of(runs)`` adds those up into ``Figures``: over every run, per domain, and per
time window of the runs' creation times (``window_s``: windows of that many seconds
from the Unix epoch, so a day's window is a UTC day); ``since`` keeps the runs created
then or later. Pure: no clock, no I/O; every figure is a frozen dataclass.

The log records no answers to questions a run asks (no event holds one), so none is
counted; a cancel is counted whoever asked for it (a person, or a server that stopped).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePath

from plansmith.binding import is_ask_step
from plansmith.execution._emit import elapsed_ms
from plansmith.execution._events import (
    AnswerRecorded,
    AwaitingAnswer,
    AwaitingApproval,
    Event,
    PlanApproved,
    Replanned,
    RunCancelled,
    RunFinished,
    RunRetried,
    StepEvent,
    StepFailed,
    StepProgress,
    StepRetrying,
    StepSucceeded,
)
from plansmith.execution._run_log import RunInfo
from plansmith.execution._stats import nearest_rank
from plansmith.model import JSONValue

__all__ = [
    "UNKNOWN_DOMAIN",
    "OUTCOMES",
    "ToolFigures",
    "RunFacts",
    "Figures",
    "RunMetrics",
    "run_domain",
    "run_facts",
    "figures_of",
    "metrics_of",
    "parse_window",
    "parse_time",
]

#: the domain of a run whose inputs name none
UNKNOWN_DOMAIN = "unknown"

#: how a run may stand: ended (as its last ``RunFinished`` says) or not yet
OUTCOMES = ("succeeded", "failed", "cancelled", "unfinished")

_WINDOW = re.compile(r"^\s*(\d{1,6})\s*([smhdw])\s*$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


@dataclass(frozen=True, slots=True)
class ToolFigures:
    """One tool of one server: its calls (attempts), successes and failures by class."""

    server: str
    tool: str
    calls: int = 0
    succeeded: int = 0
    failed: tuple[tuple[str, int], ...] = ()  # error class -> failed attempts, sorted
    runs: int = 0  # the runs it was called in

    @property
    def failures(self) -> int:
        return sum(n for _, n in self.failed)

    @property
    def success_rate(self) -> float | None:
        """Successes per call; None for a tool never called."""
        return self.succeeded / self.calls if self.calls else None

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "server": self.server,
            "tool": self.tool,
            "calls": self.calls,
            "succeeded": self.succeeded,
            "failures": self.failures,
            "failed": dict(self.failed),
            "success_rate": self.success_rate,
            "runs": self.runs,
        }


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What one run's events say (see the module docstring)."""

    run_id: str
    created: str
    domain: str
    outcome: str  # one of OUTCOMES
    steps: int = 0  # the steps it ran: distinct step ids of its step events
    retries: int = 0  # StepRetrying: failed attempts tried again
    replans: int = 0
    approvals_by_person: int = 0
    approvals_by_policy: int = 0
    cancels: int = 0
    run_retries: int = 0  # RunRetried: the whole run asked to go on after it ended
    approval_waits_s: tuple[float, ...] = ()
    tools: tuple[ToolFigures, ...] = ()
    answers: int = 0  # AnswerRecorded: ask steps a person answered (or declined)
    answer_waits_s: tuple[float, ...] = ()  # each AwaitingAnswer to its AnswerRecorded

    @property
    def interventions(self) -> int:
        """What people did to it: approvals by a person, answers, cancels, retries."""
        return self.approvals_by_person + self.answers + self.cancels + self.run_retries


@dataclass(frozen=True, slots=True)
class Figures:
    """A group of runs added up: how they stand, their steps, retries, replans, what
    people did, the approval waits (sorted) and each tool's calls."""

    runs: int = 0
    succeeded: int = 0
    failed: int = 0
    cancelled: int = 0
    unfinished: int = 0
    steps: int = 0
    retries: int = 0
    replans: int = 0
    approvals_by_person: int = 0
    approvals_by_policy: int = 0
    cancels: int = 0
    run_retries: int = 0
    approval_waits_s: tuple[float, ...] = ()
    tools: tuple[ToolFigures, ...] = ()
    answers: int = 0
    answer_waits_s: tuple[float, ...] = ()

    @property
    def finished(self) -> int:
        return self.succeeded + self.failed + self.cancelled

    @property
    def completion_rate(self) -> float | None:
        """Succeeded runs per finished run; None while none has finished."""
        return self.succeeded / self.finished if self.finished else None

    @property
    def steps_per_run(self) -> float | None:
        return self.steps / self.runs if self.runs else None

    @property
    def interventions(self) -> int:
        return self.approvals_by_person + self.answers + self.cancels + self.run_retries

    @property
    def approval_p50_s(self) -> float | None:
        return _rank(self.approval_waits_s, 0.5)

    @property
    def approval_p95_s(self) -> float | None:
        return _rank(self.approval_waits_s, 0.95)

    @property
    def approval_mean_s(self) -> float | None:
        waits = self.approval_waits_s
        return sum(waits) / len(waits) if waits else None

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "runs": self.runs,
            "outcomes": {
                "succeeded": self.succeeded,
                "failed": self.failed,
                "cancelled": self.cancelled,
                "unfinished": self.unfinished,
            },
            "finished": self.finished,
            "completion_rate": self.completion_rate,
            "steps": self.steps,
            "steps_per_run": self.steps_per_run,
            "retries": self.retries,
            "replans": self.replans,
            "interventions": {
                "total": self.interventions,
                "approvals_by_person": self.approvals_by_person,
                "answers": self.answers,
                "cancels": self.cancels,
                "run_retries": self.run_retries,
            },
            "approvals_by_policy": self.approvals_by_policy,
            "time_to_approval_s": {
                "count": len(self.approval_waits_s),
                "p50": self.approval_p50_s,
                "p95": self.approval_p95_s,
                "mean": self.approval_mean_s,
                "sum": sum(self.approval_waits_s),
            },
            "time_to_answer_s": {
                "count": len(self.answer_waits_s),
                "p50": _rank(self.answer_waits_s, 0.5),
                "p95": _rank(self.answer_waits_s, 0.95),
                "sum": sum(self.answer_waits_s),
            },
            "tools": [t.to_dict() for t in self.tools],
        }


@dataclass(frozen=True, slots=True)
class RunMetrics:
    """Every run read (``total``), per domain, and per window of ``window_s`` seconds
    (keyed by the window's start, an ISO UTC time; empty without ``window_s``)."""

    total: Figures
    by_domain: tuple[tuple[str, Figures], ...] = ()
    by_window: tuple[tuple[str, Figures], ...] = ()
    window_s: int | None = None
    since: str | None = None

    def domain(self, name: str) -> Figures:
        """The figures of domain ``name`` (empty ones when it has no run)."""
        return dict(self.by_domain).get(name, Figures())

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "since": self.since,
            "window_s": self.window_s,
            "total": self.total.to_dict(),
            "by_domain": [{"domain": d, **f.to_dict()} for d, f in self.by_domain],
            "by_window": [{"start": w, **f.to_dict()} for w, f in self.by_window],
        }


def _rank(sorted_values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile ``share`` (0-1) of sorted values (as ``stats_of``
    takes them); None for none."""
    return nearest_rank(sorted_values, share) if sorted_values else None


def run_domain(inputs: Mapping[str, JSONValue]) -> str:
    """The domain a run's recorded inputs name: what was asked (``asked.domain``, as the
    web and MCP faces record it), else the run maker's name (``made_by.maker``), else
    the domain file's name (its folder's, for a file named ``domain.*``), else
    ``UNKNOWN_DOMAIN``."""
    asked = inputs.get("asked")
    if isinstance(asked, dict) and isinstance(asked.get("domain"), str) and asked["domain"]:
        return str(asked["domain"])
    made = inputs.get("made_by")
    if isinstance(made, dict) and isinstance(made.get("maker"), str) and made["maker"]:
        return str(made["maker"])
    file = inputs.get("domain")
    if isinstance(file, str) and file:
        path = PurePath(file)
        if path.stem == "domain" and path.parent.name:
            return path.parent.name
        return path.stem or UNKNOWN_DOMAIN
    return UNKNOWN_DOMAIN


def parse_time(text: str) -> datetime | None:
    """An ISO time as the log writes them (``...Z``), as an aware UTC datetime; a time
    without a zone is taken as UTC. None when ``text`` is no such time."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def parse_window(text: str) -> int:
    """Seconds of a window written ``N`` and a unit: ``s``, ``m``, ``h``, ``d`` or ``w``
    (``1h``, ``1d``, ``7d``); ``ValueError`` for anything else, or a window of 0."""
    match = _WINDOW.match(text)
    if match is None or int(match.group(1)) == 0:
        raise ValueError(f"{text!r} is not a window: write a number and s, m, h, d or w (1d)")
    return int(match.group(1)) * _UNIT_S[match.group(2)]


def _seconds(start: str, end: str) -> float | None:
    ms = elapsed_ms(start, end)
    return None if ms is None else round(ms / 1000, 3)


def run_facts(info: RunInfo, events: Iterable[Event]) -> RunFacts:
    """What ``events`` (the run's, in order) say of the run ``info`` (module docstring)."""
    outcome = "unfinished"
    steps: set[str] = set()
    counts: Counter[str] = Counter()
    waits: list[float] = []
    waiting: str | None = None  # the time of the AwaitingApproval not yet approved
    calls: Counter[tuple[str, str]] = Counter()
    succeeded: Counter[tuple[str, str]] = Counter()
    failed: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    asked: dict[str, str] = {}  # ask steps waiting: step -> the time of its AwaitingAnswer
    answer_waits: list[float] = []
    for event in events:
        if isinstance(event, StepEvent) and is_ask_step(event.server, event.tool):
            steps.add(event.step)  # a person's step, not a tool's call
        elif isinstance(event, StepEvent):
            if not isinstance(event, StepProgress):
                steps.add(event.step)
            if isinstance(event, StepSucceeded | StepFailed | StepRetrying):
                key = (event.server, event.tool)
                calls[key] += 1
                if isinstance(event, StepSucceeded):
                    succeeded[key] += 1
                else:
                    failed[key][event.error_class or "unknown"] += 1
                    if isinstance(event, StepRetrying):
                        counts["retries"] += 1
        elif isinstance(event, AwaitingApproval):
            waiting = event.time
        elif isinstance(event, AwaitingAnswer):
            asked.setdefault(event.step, event.time)
        elif isinstance(event, AnswerRecorded):
            counts["answers"] += 1
            since = asked.pop(event.step, None)
            wait = _seconds(since, event.time) if since is not None else None
            if wait is not None:
                answer_waits.append(wait)
        elif isinstance(event, PlanApproved):
            counts["person" if event.by == "person" else "policy"] += 1
            if waiting is not None:
                wait = _seconds(waiting, event.time)
                if wait is not None:
                    waits.append(wait)
                waiting = None
        elif isinstance(event, Replanned):
            counts["replans"] += 1
        elif isinstance(event, RunCancelled):
            counts["cancels"] += 1
            waiting = None
        elif isinstance(event, RunRetried):
            counts["run_retries"] += 1
            outcome = "unfinished"
        elif isinstance(event, RunFinished):
            outcome = event.state if event.state in OUTCOMES else "failed"
            waiting = None
    tools = tuple(
        ToolFigures(
            server,
            tool,
            calls[(server, tool)],
            succeeded[(server, tool)],
            tuple(sorted(failed[(server, tool)].items())),
            runs=1,
        )
        for server, tool in sorted(calls)
    )
    return RunFacts(
        run_id=info.run_id,
        created=info.created,
        domain=run_domain(info.inputs),
        outcome=outcome,
        steps=len(steps),
        retries=counts["retries"],
        replans=counts["replans"],
        approvals_by_person=counts["person"],
        approvals_by_policy=counts["policy"],
        cancels=counts["cancels"],
        run_retries=counts["run_retries"],
        approval_waits_s=tuple(waits),
        tools=tools,
        answers=counts["answers"],
        answer_waits_s=tuple(answer_waits),
    )


def _tools_of(facts: Sequence[RunFacts]) -> tuple[ToolFigures, ...]:
    calls: Counter[tuple[str, str]] = Counter()
    succeeded: Counter[tuple[str, str]] = Counter()
    runs: Counter[tuple[str, str]] = Counter()
    failed: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for run in facts:
        for t in run.tools:
            key = (t.server, t.tool)
            calls[key] += t.calls
            succeeded[key] += t.succeeded
            runs[key] += t.runs
            failed[key].update(dict(t.failed))
    return tuple(
        ToolFigures(*key, calls[key], succeeded[key], tuple(sorted(failed[key].items())), runs[key])
        for key in sorted(calls)
    )


def figures_of(facts: Iterable[RunFacts]) -> Figures:
    """The runs' facts added up."""
    runs = list(facts)
    outcomes = Counter(r.outcome for r in runs)
    return Figures(
        runs=len(runs),
        succeeded=outcomes["succeeded"],
        failed=outcomes["failed"],
        cancelled=outcomes["cancelled"],
        unfinished=outcomes["unfinished"],
        steps=sum(r.steps for r in runs),
        retries=sum(r.retries for r in runs),
        replans=sum(r.replans for r in runs),
        approvals_by_person=sum(r.approvals_by_person for r in runs),
        approvals_by_policy=sum(r.approvals_by_policy for r in runs),
        cancels=sum(r.cancels for r in runs),
        run_retries=sum(r.run_retries for r in runs),
        approval_waits_s=tuple(sorted(w for r in runs for w in r.approval_waits_s)),
        tools=_tools_of(runs),
        answers=sum(r.answers for r in runs),
        answer_waits_s=tuple(sorted(w for r in runs for w in r.answer_waits_s)),
    )


def _window_start(created: str, window_s: int) -> str | None:
    moment = parse_time(created)
    if moment is None:
        return None
    start = math.floor(moment.timestamp() / window_s) * window_s
    return datetime.fromtimestamp(start, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def metrics_of(
    runs: Iterable[tuple[RunInfo, Sequence[Event]]],
    *,
    since: datetime | None = None,
    window_s: int | None = None,
) -> RunMetrics:
    """The runs' metrics: over all of them, per domain, and per window of ``window_s``
    seconds (a run whose creation time is not a time is in no window). ``since`` keeps
    only the runs created at or after it (a naive time is UTC; a run whose creation time
    is not a time is then left out)."""
    if window_s is not None and window_s <= 0:
        raise ValueError(f"a window is a positive number of seconds, not {window_s}")
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    facts: list[RunFacts] = []
    for info, events in runs:
        if since is not None:
            created = parse_time(info.created)
            if created is None or created < since:
                continue
        facts.append(run_facts(info, events))
    by_domain: dict[str, list[RunFacts]] = defaultdict(list)
    by_window: dict[str, list[RunFacts]] = defaultdict(list)
    for run in facts:
        by_domain[run.domain].append(run)
        if window_s is not None:
            start = _window_start(run.created, window_s)
            if start is not None:
                by_window[start].append(run)
    return RunMetrics(
        total=figures_of(facts),
        by_domain=tuple((d, figures_of(by_domain[d])) for d in sorted(by_domain)),
        by_window=tuple((w, figures_of(by_window[w])) for w in sorted(by_window)),
        window_s=window_s,
        since=since.strftime("%Y-%m-%dT%H:%M:%SZ") if since is not None else None,
    )
