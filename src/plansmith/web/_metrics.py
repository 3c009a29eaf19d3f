"""The run metrics of the web server: ``GET /metrics`` for Prometheus (OpenMetrics when
asked) and the JSON of ``GET /api/metrics`` behind the stats page.

Each app has its own ``CollectorRegistry`` (``metrics_registry``; never the client's
global one) holding one ``RunLogCollector``, which reads the run log at each scrape and
turns ``plansmith.execution.metrics_of`` into metric families: counters and gauges per
domain, per tool (labels ``domain``, ``server``, ``tool``, ``error_class``) and a
histogram of the time to approval. A run whose events cannot be read is left out and
counted (``plansmith_unreadable_runs``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector, CollectorRegistry

from plansmith.errors import PlansmithError
from plansmith.execution import Event, RunInfo, RunLog, RunMetrics, metrics_of

__all__ = [
    "APPROVAL_BUCKETS_S",
    "read_runs",
    "metric_families",
    "RunLogCollector",
    "metrics_registry",
    "exposition",
]

#: the upper bounds (seconds) of the time-to-approval histogram's buckets
APPROVAL_BUCKETS_S = (1.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0, 4 * 3600.0, 86400.0)

Runs = list[tuple[RunInfo, list[Event]]]


def read_runs(log: RunLog) -> tuple[Runs, int]:
    """Every run of ``log`` with its events, and how many runs could not be read (a
    damaged run is left out; the others are counted)."""
    runs: Runs = []
    unreadable = 0
    for info in log.runs():
        try:
            runs.append((info, log.events(info.run_id)))
        except PlansmithError:
            unreadable += 1
    return runs, unreadable


def _histogram(waits: Sequence[float]) -> list[tuple[str, float]]:
    """Cumulative buckets of sorted ``waits``, ``+Inf`` last."""
    buckets = [
        (repr(bound), float(sum(1 for w in waits if w <= bound))) for bound in APPROVAL_BUCKETS_S
    ]
    return [*buckets, ("+Inf", float(len(waits)))]


def metric_families(metrics: RunMetrics, unreadable: int = 0) -> list[Metric]:
    """The metric families of ``metrics`` (their per-domain figures), named
    ``plansmith_*``; see docs/web.md, "Metrics"."""
    d = ["domain"]
    runs = CounterMetricFamily(
        "plansmith_runs", "Runs by how they stand (outcome: succeeded, failed, cancelled,"
        " unfinished).", labels=[*d, "outcome"]
    )  # fmt: skip
    completion = GaugeMetricFamily(
        "plansmith_run_completion_ratio", "Succeeded runs per finished run.", labels=d
    )
    steps = CounterMetricFamily("plansmith_run_steps", "Steps the runs ran.", labels=d)
    retries = CounterMetricFamily(
        "plansmith_step_retries", "Failed attempts of steps tried again.", labels=d
    )
    replans = CounterMetricFamily("plansmith_replans", "Replans of runs.", labels=d)
    approvals = CounterMetricFamily(
        "plansmith_approvals", "Plans approved, by a person or by the policy.", labels=[*d, "by"]
    )
    interventions = CounterMetricFamily(
        "plansmith_interventions",
        "What people did to runs (kind: approval by a person, cancel, run_retry).",
        labels=[*d, "kind"],
    )
    waits = HistogramMetricFamily(
        "plansmith_time_to_approval_seconds",
        "Seconds from a run's AwaitingApproval to the PlanApproved that ended the wait.",
        labels=d,
    )
    d_tool = [*d, "server", "tool"]
    calls = CounterMetricFamily(
        "plansmith_tool_calls", "Tool calls (every attempt of a step).", labels=d_tool
    )
    successes = CounterMetricFamily(
        "plansmith_tool_successes", "Tool calls that succeeded.", labels=d_tool
    )
    failures = CounterMetricFamily(
        "plansmith_tool_failures", "Tool calls that failed, by error class.",
        labels=[*d_tool, "error_class"],
    )  # fmt: skip
    accuracy = GaugeMetricFamily(
        "plansmith_tool_success_ratio", "Tool calls that succeeded per call.", labels=d_tool
    )
    for domain, f in metrics.by_domain:
        for outcome, n in (("succeeded", f.succeeded), ("failed", f.failed),
                           ("cancelled", f.cancelled), ("unfinished", f.unfinished)):  # fmt: skip
            runs.add_metric([domain, outcome], n)
        if f.completion_rate is not None:
            completion.add_metric([domain], f.completion_rate)
        steps.add_metric([domain], f.steps)
        retries.add_metric([domain], f.retries)
        replans.add_metric([domain], f.replans)
        approvals.add_metric([domain, "person"], f.approvals_by_person)
        approvals.add_metric([domain, "policy"], f.approvals_by_policy)
        interventions.add_metric([domain, "approval"], f.approvals_by_person)
        interventions.add_metric([domain, "answer"], f.answers)
        interventions.add_metric([domain, "cancel"], f.cancels)
        interventions.add_metric([domain, "run_retry"], f.run_retries)
        waits.add_metric([domain], _histogram(f.approval_waits_s), sum(f.approval_waits_s))
        for t in f.tools:
            labels = [domain, t.server, t.tool]
            calls.add_metric(labels, t.calls)
            successes.add_metric(labels, t.succeeded)
            for error_class, n in t.failed:
                failures.add_metric([*labels, error_class], n)
            if t.success_rate is not None:
                accuracy.add_metric(labels, t.success_rate)
    bad = GaugeMetricFamily(
        "plansmith_unreadable_runs", "Runs of the log whose events could not be read."
    )
    bad.add_metric([], unreadable)
    return [runs, completion, steps, retries, replans, approvals, interventions, waits, calls,
            successes, failures, accuracy, bad]  # fmt: skip


class RunLogCollector(Collector):
    """Reads the run log (``log_of()``) at each scrape: every run's metrics."""

    def __init__(self, log_of: Callable[[], RunLog]) -> None:
        self._log_of = log_of

    def describe(self) -> list[Metric]:
        return []  # nothing is read as the collector is registered

    def collect(self) -> Iterator[Metric]:
        runs, unreadable = read_runs(self._log_of())
        yield from metric_families(metrics_of(runs), unreadable)


def metrics_registry(log_of: Callable[[], RunLog]) -> CollectorRegistry:
    """A registry of its own (one per app) with a ``RunLogCollector`` of ``log_of``."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RunLogCollector(log_of))
    return registry


def exposition(registry: CollectorRegistry, accept: str) -> tuple[bytes, str]:
    """The registry's metrics as the ``Accept`` header asks (OpenMetrics, else the
    Prometheus text format) and their content type."""
    encode: Any
    encode, content_type = choose_encoder(accept)
    body: bytes = encode(registry)
    return body, content_type
