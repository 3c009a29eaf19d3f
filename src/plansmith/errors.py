"""The one exception tree of plansmith.

Every error plansmith raises is a :class:`PlansmithError`. Each carries *where*
it happened (a :class:`Location`: file, line, column, or a step id) and a
*hint* that tells the user what to do. The CLI maps the class to an exit code
(:attr:`PlansmithError.exit_code`), so no caller inspects messages::

    PlansmithError                      exit 1  (base; never raised bare)
    ├── InputError                      exit 2  a file, argument or request is malformed
    │   ├── ParseError                          syntax: YAML, JSON, PDDL, plan JSON
    │   ├── DomainError                         a domain is inconsistent (unknown type, arity, ...)
    │   ├── ProblemError                        a problem does not fit its domain
    │   ├── UnsupportedFeatureError             a PDDL feature plansmith refuses to plan with
    │   └── PlanFormatError                     a plan artifact is malformed or does not match
    ├── PlanningError                           the planner ran and gave no plan
    │   ├── UnsolvableError             exit 3  proved: no plan exists
    │   └── LimitReachedError           exit 4  the time or node limit stopped the search
    └── PlanInvalidError                exit 1  ``validate`` found the plan wrong

Third-party exceptions (yaml, pydantic, json) are translated into this tree at
the boundary where they occur; none escapes to a user as a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Location",
    "PlansmithError",
    "InputError",
    "ParseError",
    "DomainError",
    "ProblemError",
    "UnsupportedFeatureError",
    "PlanFormatError",
    "PlanningError",
    "UnsolvableError",
    "LimitReachedError",
    "PlanInvalidError",
]


@dataclass(frozen=True, slots=True)
class Location:
    """Where something was written or happened: ``file:line:column`` or a step id."""

    file: str | None = None
    line: int | None = None
    column: int | None = None
    step: str | None = None

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
        return " ".join(parts) if parts else "<unknown location>"

    def with_file(self, file: str | None) -> Location:
        """The same location, in ``file`` (kept if ``file`` is None)."""
        if file is None:
            return self
        return Location(file, self.line, self.column, self.step)


class PlansmithError(Exception):
    """Base of every plansmith error: a message, a location and a hint."""

    exit_code: int = 1

    def __init__(
        self,
        message: str,
        *,
        location: Location | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.hint = hint

    def __str__(self) -> str:
        text = self.message
        if self.location is not None:
            text = f"{self.location}: {text}"
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
