"""The one exception tree of plansmith.

Every error plansmith raises is a :class:`PlansmithError`. Each carries *where*
it happened (a :class:`Location`: file, line, column, a step id, or an argument of
a call) and a *hint* that tells the user what to do. The CLI maps the class to an
exit code (:attr:`PlansmithError.exit_code`), so no caller inspects messages::

    PlansmithError                      exit 1  (base; never raised bare)
    ├── InputError                      exit 2  a file, argument or request is malformed
    │   ├── ParseError                          syntax: YAML, JSON, PDDL, plan JSON
    │   ├── AnswerError                         an ask step's schema refuses the answer
    │   ├── DomainError                         a domain is inconsistent (unknown type, arity, ...)
    │   ├── ProblemError                        a problem does not fit its domain
    │   ├── UnsupportedFeatureError             a PDDL feature plansmith refuses to plan with
    │   ├── PlanFormatError                     a plan artifact is malformed or does not match
    │   ├── ServerConfigError                   an mcpServers file is malformed
    │   ├── BindingError                        bindings do not fit the plan or the live tools
    │   └── RunNotFoundError                    no run with that id in the run log
    ├── PlanningError                           the planner ran and gave no plan
    │   ├── UnsolvableError             exit 3  proved: no plan exists
    │   └── LimitReachedError           exit 4  the time or node limit stopped the search
    ├── PlanInvalidError                exit 1  ``validate`` found the plan wrong
    ├── ExecutionError                  exit 5  a run could not be carried out
    │   ├── ServerStartError                    an MCP server did not start or answer
    │   ├── BusyError                           too many runs in flight: refused, not queued
    │   ├── ToolCallError                       one tool call failed (with its error class)
    │   │   └── AbsentInputError                a value the step reads is absent (skippable)
    │   └── RunLeasedError              exit 7  another engine drives the run (holds its lease)
    └── ApprovalRequiredError           exit 6  the plan waits for a person to approve its hash

Third-party exceptions (yaml, pydantic, json) are translated into this tree at
the boundary where they occur; none escapes to a user as a traceback. A failed step
is no exception: it is a ``StepFailed`` event, and a run that no replan saved ends
``failed`` (its ``RunFinished``; see ``plansmith.execution``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = [
    "Location",
    "PlansmithError",
    "InputError",
    "ParseError",
    "AnswerError",
    "DomainError",
    "ProblemError",
    "UnsupportedFeatureError",
    "PlanFormatError",
    "PlanningError",
    "UnsolvableError",
    "LimitReachedError",
    "PlanInvalidError",
    "ServerConfigError",
    "BindingError",
    "RunNotFoundError",
    "ExecutionError",
    "ServerStartError",
    "BusyError",
    "RunLeasedError",
    "ToolCallError",
    "AbsentInputError",
    "ApprovalRequiredError",
]


@dataclass(frozen=True, slots=True)
class Location:
    """Where something was written or happened: ``file:line:column``, a step id, or
    the name of an argument of a request or call (a tool's, an operation's, a command
    line's: ``argument plan_hash``). A run id is no location: a message names its run."""

    file: str | None = None
    line: int | None = None
    column: int | None = None
    step: str | None = None
    argument: str | None = None

    def __str__(self) -> str:
        parts: list[str] = []
        if self.file is not None:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            parts.append(where)
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if self.step is not None:
            parts.append(f"step {self.step}")
        if self.argument is not None:
            parts.append(f"argument {self.argument}")
        return " ".join(parts) if parts else "<unknown location>"

    def with_file(self, file: str | None) -> Location:
        """The same location, in ``file`` (kept if ``file`` is None)."""
        if file is None:
            return self
        return replace(self, file=file)


class PlansmithError(Exception):
    """Base of every plansmith error: a message, a location and a hint.

    An error that stands for several (a file with many mistakes, two files read at
    once) holds each, located, in ``problems``; the message counts or names them, and
    the text lists the first :attr:`SHOWN` of them and says how many more there are.
    """

    exit_code: int = 1
    SHOWN = 20

    def __init__(
        self,
        message: str,
        *,
        location: Location | None = None,
        hint: str | None = None,
        problems: tuple[PlansmithError, ...] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.hint = hint
        self.problems = problems

    def __str__(self) -> str:
        text = self.message
        if self.location is not None:
            text = f"{self.location}: {text}"
        if self.problems:
            lines = [
                text,
                *("  " + str(p).replace("\n", "\n  ") for p in self.problems[: self.SHOWN]),
            ]
            if len(self.problems) > self.SHOWN:
                lines.append(f"  ... and {len(self.problems) - self.SHOWN} more")
            text = "\n".join(lines)
        if self.hint:
            text = f"{text}\n  hint: {self.hint}"
        return text

    def located(self, file: str | None) -> PlansmithError:
        """Attach ``file`` to the error's location (used by readers that parse strings)."""
        if file is not None:
            self.location = (self.location or Location()).with_file(file)
        return self


class InputError(PlansmithError):
    """A file, argument or request is malformed. CLI exit code 2."""

    exit_code = 2


class ParseError(InputError):
    """The text is not valid syntax (YAML, JSON, PDDL)."""


class AnswerError(InputError):
    """An answer to an ask step that its schema refuses (the run keeps waiting)."""


class DomainError(InputError):
    """A domain is inconsistent: an unknown type or predicate, a wrong arity, a type clash."""


class ProblemError(InputError):
    """A problem does not fit its domain."""


class UnsupportedFeatureError(InputError):
    """The input uses a feature plansmith does not plan with (conditional effects, ...)."""


class PlanFormatError(InputError):
    """A plan artifact is malformed, or does not belong to the given domain and problem."""


class PlanningError(PlansmithError):
    """The planner ran and returned no plan."""


class UnsolvableError(PlanningError):
    """No plan exists: the search space was exhausted. CLI exit code 3."""

    exit_code = 3


class LimitReachedError(PlanningError):
    """The time or node limit stopped the search before it found a plan. CLI exit code 4."""

    exit_code = 4


class PlanInvalidError(PlansmithError):
    """A plan failed validation against its problem. CLI exit code 1."""

    exit_code = 1


class ServerConfigError(InputError):
    """An ``mcpServers`` (or VS Code ``servers``) file is malformed; ``problems`` holds
    every problem of the file when there are several."""


class BindingError(InputError):
    """Bindings do not fit the plan or the live tool catalog.

    ``problems`` holds every problem found (each a located error), so that
    ``plansmith check`` reports them all at once; the message summarises them.
    """


class RunNotFoundError(InputError):
    """No run with the given id is in the run log."""


class ExecutionError(PlansmithError):
    """A run could not be carried out. CLI exit code 5."""

    exit_code = 5


class ServerStartError(ExecutionError):
    """An MCP server did not start, or did not answer its first requests."""


class BusyError(ExecutionError):
    """Too many runs are in flight; the request was refused rather than queued. Retry later."""


class RunLeasedError(ExecutionError):
    """Another engine holds the run's lease (or this engine lost it): one engine drives a run.
    CLI exit code 7: no failure of the run, which a script may wait for and try again."""

    exit_code = 7


class ApprovalRequiredError(PlansmithError):
    """The plan needs a person to approve its hash before it runs. CLI exit code 6."""

    exit_code = 6


class ToolCallError(ExecutionError):
    """One tool call failed; ``error_class`` says how (the runner's retry rules use it).

    ``error_class`` is one of ``transport_lost``, ``timeout``, ``tool_error``,
    ``protocol_error`` and ``extraction_error``. ``retryable`` is set when the
    server marked a tool error as worth retrying; ``progressed`` when the call
    reported progress before it failed; ``final`` when no later attempt can succeed
    (a server given up on after its restarts), whatever the class's rule.
    """

    def __init__(
        self,
        error_class: str,
        message: str,
        *,
        location: Location | None = None,
        hint: str | None = None,
        retryable: bool = False,
        progressed: bool = False,
        final: bool = False,
    ) -> None:
        super().__init__(message, location=location, hint=hint)
        self.error_class = error_class
        self.retryable = retryable
        self.progressed = progressed
        self.final = final
        self.result: object | None = None  # the tool's result, when there was one


class AbsentInputError(ToolCallError):
    """A step's argument reads a value an earlier step did not give: an optional output
    its producer left out, or an output of a step that was skipped. An
    ``extraction_error`` (the tool is not called); a binding with ``when_absent: skip``
    skips the step instead (``StepSkipped``)."""

    def __init__(self, message: str, *, step: str, hint: str | None = None) -> None:
        super().__init__("extraction_error", message, location=Location(step=step), hint=hint)
        self.step = step
