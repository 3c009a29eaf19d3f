"""GTPyhop's session API: ``PlannerSession``, ``PlanResult`` and the session registry.

A session plans in its own domain, verbosity, strategy and goal checking, and
restores the global settings afterwards. ``timeout_ms`` and ``max_expansions``
are enforced by the planner's budget (no signals, no threads: it works off the
main thread), and ``max_expansions`` is honoured, unlike in GTPyhop 2.0.2.
Tracing, memory tracking, logging and persistence are not provided: the
arguments are accepted, ``result.trace`` is None.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from plansmith.compat._gtpyhop_declare import set_recursive_planning
from plansmith.compat._gtpyhop_objects import RUNTIME, Domain
from plansmith.compat._gtpyhop_plan import plan_items, run_lazy_lookahead
from plansmith.errors import LimitReachedError

__all__ = [
    "PlanResult",
    "ExecutionResult",
    "PlanningTimeoutError",
    "PlannerSession",
    "create_session",
    "get_session",
    "destroy_session",
    "list_sessions",
]


@dataclass
class PlanResult:
    """What ``PlannerSession.find_plan`` returns; true when it succeeded."""

    success: bool
    plan: list[Any] | None = None
    error: str | None = None
    logs: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None
    trace: Any = None

    def __post_init__(self) -> None:
        if self.plan is None:
            self.plan = []

    def __bool__(self) -> bool:
        return self.success


@dataclass
class ExecutionResult:
    """What ``PlannerSession.run_lazy_lookahead`` returns; true when it succeeded."""

    success: bool
    final_state: Any = None
    executed_actions: list[Any] = field(default_factory=list)
    error: str | None = None
    logs: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None
    tries_used: int = 0

    def __bool__(self) -> bool:
        return self.success


class PlanningTimeoutError(Exception):
    """Planning exceeded its time limit (GTPyhop's name)."""


_SESSIONS: dict[str, PlannerSession] = {}


class PlannerSession:
    """An isolated planning context (GTPyhop 1.3+ API)."""

    def __init__(
        self,
        session_id: str | None = None,
        *,
        domain: Domain | None = None,
        verbose: int = 0,
        recursive: bool = False,
        strategy: str | None = None,
        structured_logging: bool = True,
        auto_cleanup: bool = True,
        memory_tracking: bool = False,
        memory_sampling_interval: float | None = None,
        verify_goals: bool | None = None,
    ) -> None:
        self.session_id = session_id or f"session_{uuid.uuid4().hex[:8]}"
        self.domain = domain
        self.verbose = verbose
        self.verify_goals = verify_goals
        self.auto_cleanup = auto_cleanup
        self.structured_logging = structured_logging
        self.memory_tracking = memory_tracking
        self.memory_sampling_interval = memory_sampling_interval
        self._strategy = strategy or ("recursive_dfs" if recursive else "iterative_greedy")
        self._stats: dict[str, Any] = {"plans_generated": 0, "errors": 0, "timeouts": 0}
        self.logger = None

    def __enter__(self) -> PlannerSession:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.auto_cleanup:
            self.cleanup()

    @property
    def recursive(self) -> bool:
        return self._strategy == "recursive_dfs"

    @contextlib.contextmanager
    def isolated_execution(self, trace: bool = False, trace_state: bool = False) -> Iterator[Any]:
        """Use this session's settings inside the block; restore the global ones after."""
        saved = (RUNTIME.current_domain, RUNTIME.verbose, RUNTIME.strategy, RUNTIME.verify_goals)
        try:
            if self.domain is not None:
                RUNTIME.current_domain = self.domain
            RUNTIME.verbose = self.verbose
            set_recursive_planning(self._strategy)
            if self.verify_goals is not None:
                RUNTIME.verify_goals = bool(self.verify_goals)
            yield self
        finally:
            domain, RUNTIME.verbose, RUNTIME.strategy, RUNTIME.verify_goals = saved
            if domain is not None:
                RUNTIME.current_domain = domain

    def find_plan(
        self,
        state: Any,
        todo_list: Any,
        *,
        timeout_ms: int | None = None,
        max_expansions: int | None = None,
        trace: bool = False,
        trace_state: bool = False,
    ) -> PlanResult:
        """Plan within this session; errors and timeouts are reported in the result."""
        start = time.perf_counter()
        result = PlanResult(success=False, session_id=self.session_id)
        try:
            with self.isolated_execution():
                domain = RUNTIME.current_domain
                if domain is None:
                    raise Exception("no domain")
                plan = plan_items(
                    domain,
                    state,
                    todo_list,
                    node_limit=max_expansions,
                    time_limit=timeout_ms / 1000 if timeout_ms else None,
                )
            if plan is False:
                result.error = "No plan found"
                self._stats["errors"] += 1
            else:
                result.success = True
                result.plan = list(plan) if isinstance(plan, list) else []
                self._stats["plans_generated"] += 1
        except LimitReachedError as error:
            result.error = f"Planning timeout: {error.message}"
            self._stats["timeouts"] += 1
        except Exception as error:
            result.error = f"Planning error: {error}"
            self._stats["errors"] += 1
        result.stats = {
            "duration_ms": int((time.perf_counter() - start) * 1000),
            "strategy": self._strategy,
        }
        return result

    def run_lazy_lookahead(self, state: Any, todo_list: Any, max_tries: int = 10) -> Any:
        with self.isolated_execution():
            return run_lazy_lookahead(state, todo_list, max_tries)

    def get_stats(self) -> dict[str, Any]:
        return dict(self._stats)

    def cleanup(self) -> None:
        _SESSIONS.pop(self.session_id, None)


def create_session(session_id: str | None = None, **kwargs: Any) -> PlannerSession:
    session = PlannerSession(session_id, **kwargs)
    _SESSIONS[session.session_id] = session
    return session


def get_session(session_id: str | None = None) -> PlannerSession:
    if session_id is None:
        return create_session()
    if session_id not in _SESSIONS:
        raise KeyError(f"no session {session_id!r}")
    return _SESSIONS[session_id]


def destroy_session(session_id: str) -> bool:
    return _SESSIONS.pop(session_id, None) is not None


def list_sessions() -> list[str]:
    return list(_SESSIONS)
