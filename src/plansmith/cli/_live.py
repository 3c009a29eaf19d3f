"""What ``plansmith run`` and ``resume`` print while a run goes: the live view (a
progress bar, the steps in flight, a line per retry, failure and replan), on a console
that wraps nothing when it writes to a pipe or a file.

The view runs in the runner's event loop, so what it prints costs the same whatever a
tool wrote: a tool's text is shortened and its control characters escaped
(``printable``), and nothing goes through rich's highlighter (its patterns take time
that grows with the square of a long run of letters or digits)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from plansmith.cli._printable import printable

if TYPE_CHECKING:
    from plansmith.execution import StepFailed, StepRetrying

__all__ = ["LiveView", "make_console"]


def make_console(*, stderr: bool = False) -> Console:
    """A console that wraps what it prints to a terminal's width; to a pipe or a file (a
    log, CI) it wraps nothing: a line is as long as its text, a table as its cells. It
    highlights nothing (see above), nor turns a tool's ``:smile:`` into an emoji."""
    console = Console(stderr=stderr, highlight=False, emoji=False)
    if console.is_terminal:
        return console
    return Console(stderr=stderr, soft_wrap=True, width=_UNWRAPPED, highlight=False, emoji=False)


def shown(text: str, run_id: str) -> str:
    """A tool's or a server's ``text`` (a message, a reason) on one line of the view: where
    the whole text is, when it is shortened."""
    return printable(text, whole=f"plansmith show {run_id} --json")


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
        say = self.console.print
        if isinstance(event, RunStarted) and self.resumed is not None:
            total, done = self.resumed
            p.update(self.task, total=total, completed=done)
            say(Text(f"run {event.run_id}: resumed with {done} of {total} steps done"))
        elif isinstance(event, PlanReady):
            total = len(event.bound.get("steps") or [])  # type: ignore[arg-type]
            p.update(self.task, total=total)
            say(Text(f"run {event.run_id}: plan {event.plan_hash}: {total} steps"))
        elif isinstance(event, StepStarted):
            if not self.started:
                self.started = True
                p.start()
            self.in_flight.add(f"{event.step} {printable(event.call, _CALL)}")
        elif isinstance(event, StepSucceeded | StepFailed):
            self.in_flight = {s for s in self.in_flight if not s.startswith(event.step + " ")}
            if isinstance(event, StepSucceeded):
                p.advance(self.task)
            else:
                say(_line(("failed", "red"), event))
        elif isinstance(event, StepRetrying):
            say(_line(("retry", "yellow"), event, f" attempt {event.attempt}"))
        elif isinstance(event, Replanned):
            steps = len(event.bound.get("steps") or [])  # type: ignore[arg-type]
            without = printable(", ".join(event.failed))
            say(Text.assemble(("replanned", "cyan"), f" without {without}: {steps} new steps"))
            total = int(p.tasks[0].completed) + steps
            p.update(self.task, total=total)
        elif isinstance(event, RunFinished):
            self.in_flight = set()  # what was in flight ended with the run
            if self.started:  # the bar, final, above how the run ended
                p.update(self.task, description="steps")
                self.stop()
                self.started = False
            color = "green" if event.state == "succeeded" else "red"
            reason = f": {shown(event.reason, event.run_id)}" if event.reason else ""
            say(Text.assemble((f"run {event.state}", color), reason))
            if event.state != "succeeded":
                say(Text(f"what ran: plansmith show {event.run_id}"))
        flight = ", ".join(sorted(self.in_flight)[:4])
        more = f" +{len(self.in_flight) - 4}" if len(self.in_flight) > 4 else ""
        p.update(self.task, description=f"steps [dim]{escape(flight)}{more}[/]")


_CALL = 60  # the characters of a call in flight that the bar shows


def _line(word: tuple[str, str], event: StepFailed | StepRetrying, attempt: str = "") -> Text:
    """``failed s1 action: error_class: message`` (``retry s1 attempt 2: ...``)."""
    what = attempt or f" {printable(event.action, _CALL)}"
    return Text.assemble(
        word,
        f" {printable(event.step, _CALL)}{what}: {printable(event.error_class, _CALL)}: ",
        shown(event.message, event.run_id),
    )
