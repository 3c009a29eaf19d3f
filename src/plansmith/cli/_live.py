"""What ``plansmith run`` and ``resume`` print while a run goes: the live view (a
progress bar, the steps in flight, a line per retry, failure and replan), on a console
that wraps nothing when it writes to a pipe or a file."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

__all__ = ["LiveView", "make_console"]


def make_console(*, stderr: bool = False) -> Console:
    """A console that wraps what it prints to a terminal's width; to a pipe or a file (a
    log, CI) it wraps nothing: a line is as long as its text, a table as its cells."""
    console = Console(stderr=stderr)
    if console.is_terminal:
        return console
    return Console(stderr=stderr, soft_wrap=True, width=_UNWRAPPED)


_UNWRAPPED = 100_000  # columns: a table narrower than this is not wrapped


class LiveView:
    """A progress bar, the steps in flight, and a line per retry, failure and replan."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self.task = self.progress.add_task("steps", total=None)
        self.in_flight: set[str] = set()
        self.started = False  # the bar shows once a step starts: not for a bad input
        self.resumed: tuple[int, int] | None = None

    def stop(self) -> None:
        if self.started:
            self.progress.stop()

    def resume(self, total: int, done: int) -> None:
        """A run continued from its log: its steps and those done already (said when its
        runner starts, not before: a resume may stop for approval, a lease, a file)."""
        self.resumed = (total, done)

    def __call__(self, event: object) -> None:
        from plansmith.execution import (
            PlanReady,
            Replanned,
            RunFinished,
            RunStarted,
            StepFailed,
            StepRetrying,
            StepStarted,
            StepSucceeded,
        )

        p = self.progress
        if isinstance(event, RunStarted) and self.resumed is not None:
            total, done = self.resumed
            p.update(self.task, total=total, completed=done)
            self.console.print(
                f"run {escape(event.run_id)}: resumed with {done} of {total} steps done"
            )
        elif isinstance(event, PlanReady):
            total = len(event.bound.get("steps") or [])  # type: ignore[arg-type]
            p.update(self.task, total=total)
            self.console.print(f"run {escape(event.run_id)}: plan {event.plan_hash}: {total} steps")
        elif isinstance(event, StepStarted):
            if not self.started:
                self.started = True
                p.start()
            self.in_flight.add(f"{event.step} {event.call}")
        elif isinstance(event, StepSucceeded | StepFailed):
            self.in_flight = {s for s in self.in_flight if not s.startswith(event.step + " ")}
            if isinstance(event, StepSucceeded):
                p.advance(self.task)
            else:
                self.console.print(
                    f"[red]failed[/] {escape(event.step)} {escape(event.action)}: "
                    f"{escape(event.error_class)}: {escape(event.message)}"
                )
        elif isinstance(event, StepRetrying):
            self.console.print(
                f"[yellow]retry[/] {escape(event.step)} attempt {event.attempt}: "
                f"{escape(event.error_class)}: {escape(event.message)}"
            )
        elif isinstance(event, Replanned):
            steps = len(event.bound.get("steps") or [])  # type: ignore[arg-type]
            self.console.print(
                f"[cyan]replanned[/] without {escape(', '.join(event.failed))}: {steps} new steps"
            )
            total = int(p.tasks[0].completed) + steps
            p.update(self.task, total=total)
        elif isinstance(event, RunFinished):
            self.in_flight = set()  # what was in flight ended with the run
            if self.started:  # the bar, final, above how the run ended
                p.update(self.task, description="steps")
                self.stop()
                self.started = False
            color = "green" if event.state == "succeeded" else "red"
            reason = f": {escape(event.reason)}" if event.reason else ""
            self.console.print(f"[{color}]run {event.state}[/]{reason}")
            if event.state != "succeeded":
                self.console.print(f"what ran: plansmith show {escape(event.run_id)}")
        flight = ", ".join(sorted(self.in_flight)[:4])
        more = f" +{len(self.in_flight) - 4}" if len(self.in_flight) > 4 else ""
        p.update(self.task, description=f"steps [dim]{escape(flight)}{more}[/]")
