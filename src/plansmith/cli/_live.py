"""What ``plansmith run`` and ``resume`` print while a run goes: the live view (a
progress bar, the steps in flight, a line per retry, failure and replan), on a console
that wraps nothing when it writes to a pipe or a file.

It moves a run view (``RunView``, every face's one fold of the events) on by each event
and draws from it. The view runs in the runner's event loop, so what it prints costs
the same whatever a tool wrote: a tool's text is shortened and its control characters escaped
(``printable``), and nothing goes through rich's highlighter (its patterns take time
that grows with the square of a long run of letters or digits)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from plansmith.cli._printable import LINE, printable

if TYPE_CHECKING:
    from plansmith.execution import RunView, StepView

__all__ = ["LiveView", "make_console"]


def make_console(*, stderr: bool = False) -> Console:
    """A console that wraps what it prints to a terminal's width; to a pipe or a file (a
    log, CI) it wraps nothing: a line is as long as its text, a table as its cells. It
    highlights nothing (see above), nor turns a tool's ``:smile:`` into an emoji."""
    console = Console(stderr=stderr, highlight=False, emoji=False)
    if console.is_terminal:
        return console
    return Console(stderr=stderr, soft_wrap=True, width=_UNWRAPPED, highlight=False, emoji=False)


def shown(text: str, run_id: str, *, lines: int = 1) -> str:
    """A tool's or a server's ``text`` (a message, a reason) on ``lines`` lines of the
    view: where the whole text is, when it is shortened."""
    most = LINE if lines == 1 else _REASON
    return printable(text, most, lines=lines, whole=f"plansmith show {run_id} --json")


#: how much of a failed run's reason its last lines show (a replan's binding problems,
#: each with its place and hint, are what the person must fix)
_REASON, _REASON_LINES = 1500, 40


_UNWRAPPED = 100_000  # columns: a table narrower than this is not wrapped


class LiveView:
    """A progress bar, the steps in flight, and a line per retry, failure and replan.

    ``resumed``: the view of a run that is continued, folded from its log (no
    ``PlanReady`` comes to tell its steps); its first line says how many are done once
    its runner starts (not before: a resume may stop for approval, a lease, a file)."""

    def __init__(self, console: Console, resumed: RunView | None = None) -> None:
        from plansmith.execution import RunView

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
        self.view = RunView() if resumed is None else resumed
        self.resumed = resumed is not None
        self.started = False  # the bar shows once a step starts: not for a bad input
        self._labels: dict[str, str] = {}  # a step in flight as the bar shows it

    def stop(self) -> None:
        if self.started:
            self.progress.stop()

    def pause(self) -> None:
        """Stop drawing the progress while a person answers a question."""
        self.stop()

    def go_on(self) -> None:
        """Draw the progress again after a question."""
        if self.started:
            self.progress.start()

    def _label(self, step: str) -> str:
        label = self._labels.get(step)
        if label is None:
            label = self._labels[step] = f"{step} {printable(self.view.steps[step].call, _CALL)}"
        return label

    def _steps(self) -> tuple[int, int]:
        """The steps done, and the steps of the plan in force (not those a replan gave
        up: failed or dropped)."""
        counts = self.view.counts()
        done = counts["succeeded"] + counts["skipped"]
        return done, done + counts["pending"] + counts["running"]

    def __call__(self, event: object) -> None:
        from plansmith.execution import (
            AnswerRecorded,
            AwaitingAnswer,
            Event,
            PlanReady,
            Replanned,
            RunFinished,
            RunStarted,
            StepFailed,
            StepRetrying,
            StepSkipped,
            StepStarted,
            StepSucceeded,
        )

        assert isinstance(event, Event)
        view = self.view
        view.apply(event)
        p = self.progress
        say = self.console.print
        if isinstance(event, RunStarted) and self.resumed:
            done, total = self._steps()
            p.update(self.task, total=total, completed=done)
            say(Text(f"run {event.run_id}: resumed with {done} of {total} steps done"))
        elif isinstance(event, PlanReady):
            total = len(view.steps)
            p.update(self.task, total=total)
            say(Text(f"run {event.run_id}: plan {event.plan_hash}: {total} steps"))
        elif isinstance(event, StepStarted):
            if not self.started:
                self.started = True
                p.start()
        elif isinstance(event, StepSucceeded):
            p.update(self.task, completed=self._steps()[0])
        elif isinstance(event, StepSkipped):
            p.update(self.task, completed=self._steps()[0])
            say(_line(("skipped", "cyan"), view.steps[event.step], view.run_id))
        elif isinstance(event, StepFailed):
            say(_line(("failed", "red"), view.steps[event.step], view.run_id))
        elif isinstance(event, StepRetrying):
            step = view.steps[event.step]
            attempt = f" attempt {step.retries[-1].attempt}"
            say(_line(("retry", "yellow"), step, view.run_id, attempt))
        elif isinstance(event, Replanned):
            replan = view.replans[-1]
            without = printable(", ".join(replan.failed))
            new = len(replan.new_steps)
            say(Text.assemble(("replanned", "cyan"), f" without {without}: {new} new steps"))
            p.update(self.task, total=self._steps()[1])
        elif isinstance(event, AwaitingAnswer):
            say(Text.assemble(("question", "magenta"), f" {event.step}: {event.question}"))
        elif isinstance(event, AnswerRecorded):
            given = "no answer" if event.answer is None else f"answer {event.answer!r}"
            how = f" ({event.declined})" if event.declined else ""
            say(Text.assemble(("answered", "magenta"), f" {event.step}: {given}{how}"))
        elif isinstance(event, RunFinished):
            if self.started:  # the bar, final, above how the run ended
                p.update(self.task, description="steps")
                self.stop()
                self.started = False
            state = view.finished or event.state
            color = "green" if state == "succeeded" else "red"
            reason = (
                f": {shown(view.reason, view.run_id, lines=_REASON_LINES)}" if view.reason else ""
            )
            say(Text.assemble((f"run {state}", color), reason))
            if state != "succeeded":
                say(Text(f"what ran: plansmith show {view.run_id}"))
        # what was in flight when the run ended ended with it
        flying = () if view.finished is not None else view.in_flight
        flight = ", ".join(sorted(self._label(i) for i in flying)[:4])
        more = f" +{len(flying) - 4}" if len(flying) > 4 else ""
        p.update(self.task, description=f"steps [dim]{escape(flight)}{more}[/]")


_CALL = 60  # the characters of a call in flight that the bar shows


def _line(word: tuple[str, str], step: StepView, run_id: str, attempt: str = "") -> Text:
    """``failed s1 action: error_class: message`` (``retry s1 attempt 2: ...``): of the
    step's failure, or of its last retry (``skipped s2 action: reason``: of a skip)."""
    if attempt:
        last = step.retries[-1]
        error_class, message = last.error_class, last.message
    else:
        error_class, message = step.error_class or "", step.message or ""
    what = attempt or f" {printable(step.action, _CALL)}"
    kind = f"{printable(error_class, _CALL)}: " if error_class else ""  # a skip has none
    return Text.assemble(
        word, f" {printable(step.id, _CALL)}{what}: {kind}", shown(message, run_id)
    )
