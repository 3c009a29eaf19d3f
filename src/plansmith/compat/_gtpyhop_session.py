"""GTPyhop's session API: ``PlannerSession``, its results, the session registry and
session persistence.

A session plans in its own domain, verbosity, strategy and goal checking, and
restores the global settings afterwards. A session given a ``strategy`` (or
``recursive``) runs it as GTPyhop does (see ``_gtpyhop_plan``); one given none
backtracks (GTPyhop's default, iterative greedy, in exact mode). ``timeout_ms`` is
enforced by the planner's budget (no signals, no threads: it works off the main
thread), and so is ``max_expansions`` (GTPyhop 2.0.2 ignores it, with a warning:
so does the exact mode, ``set_exact_gtpyhop``). As in
GTPyhop, a session logs its operations to its structured logger
(``result.logs``), tracks its memory with ``memory_tracking=True``, records a
:class:`PlanTrace` with ``trace=True`` (see :mod:`._gtpyhop_trace`), and can be
saved and restored (GTPyhop's file layout). With a persistence directory set,
the registered sessions are saved at exit (an ``atexit`` hook; unlike GTPyhop,
no SIGTERM/SIGINT handlers are installed: plansmith's servers own their signals).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from plansmith.compat._gtpyhop_declare import find_domain_by_name, set_recursive_planning
from plansmith.compat._gtpyhop_logging import StructuredLogger, destroy_logger, get_logger
from plansmith.compat._gtpyhop_objects import RUNTIME, Domain
from plansmith.compat._gtpyhop_persist import SessionPersistenceError, SessionSerializer
from plansmith.compat._gtpyhop_plan import plan_items
from plansmith.compat._gtpyhop_resources import PlanningTimeoutError, ResourceManager
from plansmith.compat._gtpyhop_trace import PlanTrace, trace_search
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
    "restore_session",
    "restore_all_sessions",
    "set_persistence_directory",
    "get_persistence_directory",
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
    trace: PlanTrace | None = None

    def __post_init__(self) -> None:
        if self.plan is None:
            self.plan = []
        if not self.stats:
            self.stats = {"duration_ms": 0, "expansions": 0}

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


class _Registry:
    """The registered sessions, the default one, and the persistence settings."""

    def __init__(self) -> None:
        self.sessions: dict[str, PlannerSession] = {}
        self.default: PlannerSession | None = None
        self.lock = threading.Lock()
        self.directory: str | None = None
        self.auto_save = True
        self.at_exit = False

    def all(self) -> list[PlannerSession]:
        with self.lock:
            found = list(self.sessions.values())
            return [*found, self.default] if self.default is not None else found


_REGISTRY = _Registry()


def _memory_stats(session: PlannerSession) -> dict[str, Any]:
    if not session.memory_tracking:
        return {"memory_mb": 0.0, "peak_memory_mb": 0.0}
    stats = ResourceManager.get_memory_usage(session.session_id)
    session._stats["memory_usage_mb"] = stats["memory_mb"]
    session._stats["peak_memory_mb"] = max(
        session._stats["peak_memory_mb"], stats["peak_memory_mb"]
    )
    return stats


class PlannerSession:
    """An isolated planning context (GTPyhop 1.3+ API)."""

    def __init__(
        self,
        session_id: str | None = None,
        *,
        domain: Domain | None = None,
        verbose: int = 0,
        recursive: bool | None = None,
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
        self.structured_logging = structured_logging
        self.auto_cleanup = auto_cleanup
        self.memory_tracking = memory_tracking
        self.memory_sampling_interval = memory_sampling_interval
        self._strategy = strategy or ("recursive_dfs" if recursive else "iterative_greedy")
        #: whether the caller chose it (else plansmith's default search runs)
        self._strategy_chosen = strategy is not None or recursive is not None
        self._created_at = time.time()
        self._last_used = self._created_at
        self._lock = threading.RLock()
        self._last_trace: PlanTrace | None = None
        self._stats: dict[str, Any] = {
            "plans_generated": 0,
            "total_planning_time_ms": 0,
            "total_execution_time_ms": 0,
            "errors": 0,
            "memory_usage_mb": 0,
            "peak_memory_mb": 0,
            "timeouts": 0,
            "cancellations": 0,
        }
        if memory_tracking:
            ResourceManager.start_memory_tracking(self.session_id, memory_sampling_interval)
        self.logger: StructuredLogger | None = None
        if structured_logging:
            self.logger = get_logger(self.session_id)
            self.logger.info(  # noqa: PLE1205 - GTPyhop's logger, not logging
                "session",
                f"Created session {self.session_id}",
                domain=domain.__name__ if domain else None,
                verbose=verbose,
                recursive=bool(recursive),
            )

    def __enter__(self) -> PlannerSession:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.auto_cleanup:
            self.cleanup()

    @property
    def recursive(self) -> bool:
        return self._strategy == "recursive_dfs"

    def _log_operation(self, operation: str, **context: Any) -> None:
        if self.logger is not None:
            self.logger.info("session", f"Operation: {operation}", **context)

    @contextlib.contextmanager
    def isolated_execution(self, trace: bool = False, trace_state: bool = False) -> Iterator[Any]:
        """Use this session's settings inside the block; restore the global ones after."""
        saved = (RUNTIME.current_domain, RUNTIME.verbose, RUNTIME.strategy, RUNTIME.verify_goals)
        chosen = RUNTIME.strategy_chosen
        try:
            if self.domain is not None:
                RUNTIME.current_domain = self.domain
            RUNTIME.verbose = self.verbose
            set_recursive_planning(self._strategy)
            RUNTIME.strategy_chosen = self._strategy_chosen
            if self.verify_goals is not None:
                RUNTIME.verify_goals = bool(self.verify_goals)
            self._log_operation(
                "isolated_execution_start",
                saved_domain=saved[0].__name__ if saved[0] else None,
                saved_verbose=saved[1],
            )
            yield self
        finally:
            domain, RUNTIME.verbose, RUNTIME.strategy, RUNTIME.verify_goals = saved
            RUNTIME.strategy_chosen = chosen
            if domain is not None:
                RUNTIME.current_domain = domain
            self._log_operation("isolated_execution_end")

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
        """Plan within this session; errors and timeouts are reported in the result.
        With ``trace`` (or ``trace_state``), ``result.trace`` is a :class:`PlanTrace`.
        ``max_expansions`` bounds the decomposition steps; in exact mode it is
        accepted and ignored, with GTPyhop 2.0.2's warning."""
        node_limit = max_expansions
        if max_expansions is not None and RUNTIME.exact:
            node_limit = None
            warnings.warn(
                "find_plan(max_expansions=...) is accepted but NOT enforced: "
                "the search is not bounded by it. Use timeout_ms for a "
                "wall-clock bound. See the find_plan docstring for why the "
                "parameter is retained.",
                UserWarning,
                stacklevel=2,
            )
        with self._lock:
            self._last_used = time.time()
            start = time.perf_counter()
            result = PlanResult(success=False, session_id=self.session_id)
            self._last_trace = None
            time_limit = timeout_ms / 1000 if timeout_ms and timeout_ms > 0 else None
            self._log_operation(
                "find_plan",
                state_name=getattr(state, "__name__", None),
                todo_count=len(todo_list),
                timeout_ms=timeout_ms,
                max_expansions=max_expansions,
            )
            try:
                with self.isolated_execution():
                    domain = RUNTIME.current_domain
                    if domain is None:
                        raise Exception("no domain has been created")
                    verify = RUNTIME.verify_goals
                    try:
                        plan = plan_items(
                            domain,
                            state,
                            todo_list,
                            node_limit=node_limit,
                            time_limit=time_limit,
                        )
                    finally:
                        if trace or trace_state:
                            self._last_trace = trace_search(
                                domain,
                                state,
                                todo_list,
                                verify_goals=verify,
                                trace_state=trace_state,
                                node_limit=node_limit,
                                time_limit=time_limit,
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
                self._stats["errors"] += 1
                self._stats["timeouts"] += 1
                self._log_operation("find_plan_timeout", error=error.message)
            except Exception as error:
                result.error = f"Planning error: {error}"
                self._stats["errors"] += 1
                self._log_operation("find_plan_error", error=str(error))
            result.trace = self._last_trace
            duration_ms = int((time.perf_counter() - start) * 1000)
            self._stats["total_planning_time_ms"] += duration_ms
            memory = _memory_stats(self)
            result.stats = {
                "duration_ms": duration_ms,
                "expansions": 0,
                "strategy": self._strategy,
                "memory_mb": memory["memory_mb"],
                "peak_memory_mb": memory["peak_memory_mb"],
            }
            if self.logger is not None:
                result.logs = self.logger.get_logs()
            return result

    def run_lazy_lookahead(
        self, state: Any, todo_list: Any, *, max_tries: int = 10, timeout_ms: int | None = None
    ) -> ExecutionResult:
        """Plan and act (GTPyhop's lazy lookahead) in this session; the outcome."""
        with self._lock:
            self._last_used = time.time()
            start = time.perf_counter()
            result = ExecutionResult(success=False, session_id=self.session_id)
            result.final_state = state.copy()
            self._log_operation(
                "run_lazy_lookahead",
                state_name=getattr(state, "__name__", None),
                todo_count=len(todo_list),
                max_tries=max_tries,
                timeout_ms=timeout_ms,
            )
            try:
                ResourceManager.clear_cancellation_flag(self.session_id)
                run = ResourceManager.with_timeout(timeout_ms, self.session_id)(self._act)
                final_state, executed, tries = run(result.final_state, todo_list, max_tries)
                result.success = True
                result.final_state = final_state
                result.executed_actions = executed
                result.tries_used = tries
            except PlanningTimeoutError as error:
                result.error = f"Execution timeout: {error}"
                self._stats["errors"] += 1
                self._stats["timeouts"] += 1
                if "cancelled" in str(error).lower():
                    self._stats["cancellations"] += 1
                self._log_operation("run_lazy_lookahead_timeout", error=str(error))
            except Exception as error:
                result.error = f"Execution error: {error}"
                self._stats["errors"] += 1
                self._log_operation("run_lazy_lookahead_error", error=str(error))
            duration_ms = int((time.perf_counter() - start) * 1000)
            self._stats["total_execution_time_ms"] += duration_ms
            memory = _memory_stats(self)
            result.stats = {
                "duration_ms": duration_ms,
                "tries_used": result.tries_used,
                "executed_actions": len(result.executed_actions),
                "memory_mb": memory["memory_mb"],
                "peak_memory_mb": memory["peak_memory_mb"],
            }
            if self.logger is not None:
                result.logs = self.logger.get_logs()
            return result

    def _act(self, state: Any, todo_list: Any, max_tries: int) -> tuple[Any, list[Any], int]:
        """GTPyhop's session lookahead loop: plan, run each action's command (else the
        action) until one fails, replan; at most ``max_tries`` plans."""
        current = state.copy()
        executed: list[Any] = []
        tries = 0
        for tries in range(1, max_tries + 1):  # noqa: B007 - the count is returned
            ResourceManager.check_cancellation(self.session_id)
            with self.isolated_execution():
                domain = RUNTIME.current_domain
                plan = plan_items(domain, current, todo_list) if domain is not None else False
            if not plan or not todo_list or domain is None or not isinstance(plan, list):
                break
            progressed = False
            for action in plan:
                ResourceManager.check_cancellation(self.session_id)
                function = domain._command_dict.get(action[0]) or domain._action_dict.get(action[0])
                new_state = function(current.copy(), *action[1:]) if function else False
                if not new_state:
                    break
                current = new_state
                executed.append(action)
                progressed = True
            if not progressed:
                break
        return current, executed, tries

    def save_to_file(self, filepath: str, format: str = "json") -> bool:
        """Write the session's settings and statistics ('json' or 'pickle'); whether it worked."""
        try:
            start = time.perf_counter()
            data = SessionSerializer.serialize_session(self, format)
            temporary = filepath + ".tmp"
            with open(temporary, "wb") as file:
                file.write(data)
            os.replace(temporary, filepath)
            duration_ms = int((time.perf_counter() - start) * 1000)
            self._stats["persistence_operations"] = self._stats.get("persistence_operations", 0) + 1
            self._stats["persistence_time_ms"] = (
                self._stats.get("persistence_time_ms", 0) + duration_ms
            )
            self._log_operation(
                "save_session", filepath=filepath, format=format, duration_ms=duration_ms
            )
            return True
        except Exception as error:
            self._log_operation("save_session_error", filepath=filepath, error=str(error))
            return False

    @classmethod
    def load_from_file(cls, filepath: str, format: str = "json") -> PlannerSession | None:
        """The session saved in ``filepath`` (its domain found by name), or None."""
        try:
            if not os.path.exists(filepath):
                return None
            with open(filepath, "rb") as file:
                data = SessionSerializer.deserialize_session(file.read(), format)
            if not SessionSerializer.validate_session_data(data):
                raise SessionPersistenceError("Invalid session data")
            session = cls(
                session_id=data["session_id"],
                domain=find_domain_by_name(data["domain_name"])
                if data.get("domain_name")
                else None,
                verbose=data["verbose"],
                recursive=data["recursive"] or None,
                strategy=data.get("strategy"),
                structured_logging=data.get("structured_logging", True),
                auto_cleanup=data.get("auto_cleanup", True),
            )
            session._created_at = data["created_at"]
            session._last_used = data.get("last_used", data["created_at"])
            session._stats.update(data["stats"])
            session._log_operation("load_session", filepath=filepath, format=format)
            return session
        except Exception:
            return None  # as GTPyhop: every failure is None

    def get_stats(self) -> dict[str, Any]:
        with self._lock:
            now = time.time()
            return {
                **self._stats,
                "session_id": self.session_id,
                "created_at": self._created_at,
                "last_used": self._last_used,
                "age_seconds": now - self._created_at,
                "idle_seconds": now - self._last_used,
                "domain": self.domain.__name__ if self.domain else None,
            }

    def cleanup(self) -> None:
        """Drop the logger, stop memory tracking, forget the domain."""
        with self._lock:
            if self.logger is not None:
                self._log_operation("cleanup", stats=self.get_stats())
                destroy_logger(self.session_id)
                self.logger = None
            if self.memory_tracking:
                ResourceManager.stop_memory_tracking(self.session_id)
            self.domain = None


def _save_at_exit() -> None:
    """Save the registered sessions to the persistence directory, then clean them up."""
    directory = _REGISTRY.directory
    sessions = _REGISTRY.all()
    if _REGISTRY.auto_save and directory and os.path.isdir(directory):
        for session in sessions:
            session.save_to_file(os.path.join(directory, f"{session.session_id}.json"))
    for session in sessions:
        with contextlib.suppress(Exception):
            session.cleanup()


def _at_exit() -> None:
    if not _REGISTRY.at_exit:
        atexit.register(_save_at_exit)
        _REGISTRY.at_exit = True


def set_persistence_directory(directory: str, auto_save: bool = True) -> bool:
    """Where sessions are saved at exit (created if missing); whether it worked."""
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return False
    _REGISTRY.directory = directory
    _REGISTRY.auto_save = auto_save
    _at_exit()
    return True


def get_persistence_directory() -> str | None:
    return _REGISTRY.directory


def create_session(session_id: str | None = None, **kwargs: Any) -> PlannerSession:
    """A new session, registered under its id."""
    session = PlannerSession(session_id, **kwargs)
    with _REGISTRY.lock:
        _REGISTRY.sessions[session.session_id] = session
    _at_exit()
    return session


def restore_session(filepath: str, format: str = "json") -> PlannerSession | None:
    """The session saved in ``filepath`` (else in ``filepath.backup``), registered
    (renamed ``<id>_restored_<hex>`` if the id is taken); None if it cannot be read."""
    session = PlannerSession.load_from_file(filepath, format)
    if session is None and os.path.exists(filepath + ".backup"):
        session = PlannerSession.load_from_file(filepath + ".backup", format)
    if session is None:
        return None
    with _REGISTRY.lock:
        if session.session_id in _REGISTRY.sessions:
            session.session_id = f"{session.session_id}_restored_{uuid.uuid4().hex[:8]}"
        _REGISTRY.sessions[session.session_id] = session
    return session


def restore_all_sessions(directory: str, format: str = "json") -> list[PlannerSession]:
    """Every session saved in ``directory`` (``*.json``, or ``*.pkl`` for pickle)."""
    if not os.path.isdir(directory):
        return []
    extension = ".json" if format == "json" else ".pkl"
    found = [
        restore_session(os.path.join(directory, name), format)
        for name in sorted(os.listdir(directory))
        if name.endswith(extension)
    ]
    return [s for s in found if s is not None]


def get_session(session_id: str | None = None) -> PlannerSession:
    """The registered session ``session_id`` (ValueError if none); without an id,
    the default session (created on first use, in the current domain)."""
    if session_id is None:
        with _REGISTRY.lock:
            if _REGISTRY.default is None:
                _REGISTRY.default = PlannerSession("default", domain=RUNTIME.current_domain)
            return _REGISTRY.default
    with _REGISTRY.lock:
        if session_id not in _REGISTRY.sessions:
            raise ValueError(f"Session '{session_id}' not found")
        return _REGISTRY.sessions[session_id]


def destroy_session(session_id: str) -> bool:
    """Clean up and forget the session; whether there was one."""
    with _REGISTRY.lock:
        if session_id == "default":
            session, _REGISTRY.default = _REGISTRY.default, None
        else:
            session = _REGISTRY.sessions.pop(session_id, None)
    if session is None:
        return False
    session.cleanup()
    return True


def list_sessions() -> list[str]:
    """The ids of the registered sessions (and ``default`` if it exists)."""
    with _REGISTRY.lock:
        found = list(_REGISTRY.sessions)
        return [*found, "default"] if _REGISTRY.default is not None else found
