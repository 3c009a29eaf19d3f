"""What a lab run did, gathered from its events: steps per server, order, replans, speed."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from plansmith.execution import Event, Replanned, RunFinished, RunStarted, StepFailed, StepSucceeded

__all__ = ["RunStats"]


@dataclass(slots=True)
class RunStats:
    """Fed every event of a run (``stats.on_event``); read it when the run is over."""

    clock: Callable[[], float] = time.perf_counter
    per_server: Counter[str] = field(default_factory=Counter)
    order: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    replans: list[str] = field(default_factory=list)
    state: str = ""
    reason: str | None = None
    commands: int | None = None
    started: float | None = None
    finished: float | None = None

    def on_event(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.started = self.clock()
        elif isinstance(event, StepSucceeded):
            self.per_server[event.server] += 1
            self.order.append((event.server, event.action, tuple(map(str, event.args))))
        elif isinstance(event, StepFailed):
            self.failed.append(
                f"{event.step} {event.action}({', '.join(map(str, event.args))}) "
                f"on {event.server}: {event.error_class}: {event.message}"
            )
        elif isinstance(event, Replanned):
            self.replans.append(
                f"after {', '.join(event.failed)} failed ({event.reason}): "
                f"new plan {event.plan_hash[:19]}… with {event.step_count} step(s)"
            )
        elif isinstance(event, RunFinished):
            self.finished = self.clock()
            self.state = event.state
            self.reason = event.reason

    @property
    def steps(self) -> int:
        return sum(self.per_server.values())

    @property
    def seconds(self) -> float:
        if self.started is None or self.finished is None:
            return 0.0
        return self.finished - self.started

    @property
    def actions_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else 0.0
