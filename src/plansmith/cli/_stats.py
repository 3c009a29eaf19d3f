"""``plansmith stats``: what the run log says of each action and tool, and the costs the
planner would learn from it (``--costs learned``); with ``--metrics``, the run metrics
(completion, steps, retries, replans, people's interventions, time to approval, each
tool's accuracy) over every run, per domain and per time window."""

from __future__ import annotations

import dataclasses
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from plansmith.cli._app import app, guarded
from plansmith.cli._check import HomeOpt
from plansmith.cli._engine_options import LogOpt, open_engine
from plansmith.cli._live import make_console
from plansmith.errors import InputError, Location, PlansmithError

if TYPE_CHECKING:
    from plansmith.execution import Event, Figures, RunInfo, RunMetrics

__all__: list[str] = []


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


@app.command("stats")
@guarded
def stats_command(
    home: HomeOpt = Path(".plansmith"),
    log: LogOpt = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="One JSON line per action and tool: action, server, tool, calls, succeeded,"
            " failed (error class -> count), p50_ms, p95_ms, runs. With --metrics, one JSON"
            " object: the run metrics (total, by_domain, by_window).",
        ),
    ] = False,
    metrics: Annotated[
        bool,
        typer.Option(
            "--metrics",
            help="The run metrics instead: completion rate, steps per run, retries, replans,"
            " interventions (approvals by a person, answers, cancels, run retries), time to"
            " approval and to answer, and each tool's success rate and failures by class;"
            " over every run, per domain and per --window.",
        ),
    ] = False,
    window: Annotated[
        str | None,
        typer.Option(
            "--window",
            metavar="N[s|m|h|d|w]",
            help="With --metrics: also per window of this length (1h, 1d, 7d) by the runs'"
            " creation times, windows counted in UTC from the Unix epoch. Implies --metrics.",
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="ISO-TIME",
            help="With --metrics: only the runs created then or later (2026-01-31 or"
            " 2026-01-31T09:00:00Z; no zone is UTC). Implies --metrics.",
        ),
    ] = None,
) -> None:
    """Per action and tool, over every run of the log: calls (attempts), successes,
    failures by error class, and the duration p50/p95 of the attempts. With --metrics:
    the run metrics, over every run, per domain, per tool and per --window.

    Exit codes: 0 listed; 2 no run log there, or a bad --window or --since."""
    from plansmith.execution import metrics_of, stats_of

    window_s, since_at = _window_and_since(window, since)
    engine = open_engine(home, log=log, existing=True, read_only=True)
    skipped: list[str] = []
    try:
        runs: list[tuple[RunInfo, list[Event]]] = []
        for info in engine.log.runs():
            try:
                runs.append((info, engine.log.events(info.run_id)))
            except PlansmithError as error:  # one damaged run: the others are counted
                skipped.append(f"run {info.run_id} is unreadable: {str(error).splitlines()[0]}")
    finally:
        engine.close()
    for line in skipped:
        sys.stderr.write(f"warning: {line}\n")
    if metrics or window_s is not None or since_at is not None:
        found = metrics_of(runs, since=since_at, window_s=window_s)
        if as_json:
            sys.stdout.write(json.dumps(found.to_dict(), sort_keys=True) + "\n")
        else:
            _print_metrics(found, home, window or "")
        return
    stats = stats_of(events for _, events in runs)
    if as_json:
        for s in stats:
            row = dataclasses.asdict(s)
            row["failed"] = dict(s.failed)
            sys.stdout.write(json.dumps(row, sort_keys=True) + "\n")
        return
    table = Table("action", "server", "tool", "calls", "ok", "failed", "p50 ms", "p95 ms", "runs")
    for s in stats:
        failed = ", ".join(f"{c} {n}" for c, n in s.failed) or "-"
        table.add_row(
            s.action, s.server, s.tool, str(s.calls), str(s.succeeded), failed,
            _ms(s.p50_ms), _ms(s.p95_ms), str(s.runs),
        )  # fmt: skip
    console = make_console()
    if stats:
        console.print(table)
    else:
        console.print(f"no step has run in the log of {home}")


def _window_and_since(window: str | None, since: str | None) -> tuple[int | None, datetime | None]:
    """``--window`` in seconds and ``--since`` as a time; a bad one is an ``InputError``."""
    from plansmith.execution import parse_time, parse_window

    window_s = None
    if window is not None:
        try:
            window_s = parse_window(window)
        except ValueError as error:
            raise InputError(
                str(error), location=Location(argument="--window"), hint="e.g. --window 1d"
            ) from None
    since_at = None
    if since is not None:
        since_at = parse_time(since)
        if since_at is None:
            raise InputError(
                f"{since!r} is not an ISO time",
                location=Location(argument="--since"),
                hint="e.g. --since 2026-01-31 or --since 2026-01-31T09:00:00Z",
            )
    return window_s, since_at


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _number(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.1f}{unit}"


_FIGURE_COLUMNS = (
    "runs", "ok", "failed", "cancelled", "unfinished", "completion", "steps/run", "retries",
    "replans", "interventions", "approval wait p50 / p95",
)  # fmt: skip


def _figure_row(f: Figures) -> list[str]:
    return [
        str(f.runs), str(f.succeeded), str(f.failed), str(f.cancelled), str(f.unfinished),
        _share(f.completion_rate), _number(f.steps_per_run), str(f.retries), str(f.replans),
        f"{f.interventions} ({f.approvals_by_person} approved, {f.answers} answered,"
        f" {f.cancels} cancelled,"
        f" {f.run_retries} retried)",
        f"{_number(f.approval_p50_s, ' s')} / {_number(f.approval_p95_s, ' s')}",
    ]  # fmt: skip


def _print_metrics(found: RunMetrics, home: Path, window: str) -> None:
    console = make_console()
    if not found.total.runs:
        since = f" since {found.since}" if found.since else ""
        console.print(f"no run{since} in the log of {home}")
        return
    runs = Table("domain", *_FIGURE_COLUMNS, title="runs")
    for domain, figures in found.by_domain:
        runs.add_row(domain, *_figure_row(figures))
    runs.add_row("all", *_figure_row(found.total), style="bold")
    console.print(runs)
    tools = Table("domain", "server", "tool", "calls", "ok", "success", "failed", "runs",
                  title="tools")  # fmt: skip
    for domain, figures in (*found.by_domain, ("all", found.total)):
        for t in figures.tools:
            failed = ", ".join(f"{c} {n}" for c, n in t.failed) or "-"
            tools.add_row(domain, t.server, t.tool, str(t.calls), str(t.succeeded),
                          _share(t.success_rate), failed, str(t.runs))  # fmt: skip
    if tools.rows:
        console.print(tools)
    if found.by_window:
        windows = Table("window from", *_FIGURE_COLUMNS, title=f"per {window.strip()} window")
        for start, figures in found.by_window:
            windows.add_row(start, *_figure_row(figures))
        console.print(windows)
