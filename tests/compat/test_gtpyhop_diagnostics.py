"""GTPyhop 2.0.2's diagnostics and session extras in the stand-in (issue 34):
``PlanTrace``/``TraceEvent`` with ``find_plan(..., trace=True)``, structured
logging, ``ResourceManager``, and session persistence, compared with the real
GTPyhop where it is installed."""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import io
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from plansmith.compat import gtpyhop as stand_in
from plansmith.compat._gtpyhop_objects import RUNTIME

HAVE_GTPYHOP = importlib.machinery.PathFinder.find_spec("gtpyhop") is not None
needs_gtpyhop = pytest.mark.skipif(not HAVE_GTPYHOP, reason="gtpyhop 2.0.2 is not installed")

ISSUE_NAMES = [
    "PlanTrace",
    "TraceEvent",
    "ResourceManager",
    "SessionSerializer",
    "SessionPersistenceError",
    "SESSION_SCHEMA_VERSION",
    "restore_session",
    "restore_all_sessions",
    "get_persistence_directory",
    "set_persistence_directory",
    "StructuredLogger",
    "LogEntry",
    "LogLevel",
    "get_logger",
    "get_logging_stats",
    "destroy_logger",
    "StdoutLogHandler",
    "StructuredLogHandler",
    "LoggingStats",
]


@pytest.fixture(autouse=True)
def _restore_settings() -> Any:
    settings = dict(vars(RUNTIME))
    settings["domains"] = list(RUNTIME.domains)
    yield
    vars(RUNTIME).update(settings)


def _real() -> ModuleType:
    os.environ.setdefault("GTPYHOP_QUIET", "true")
    with contextlib.redirect_stdout(io.StringIO()):
        return importlib.import_module("gtpyhop")


def test_the_issues_names_are_exported() -> None:
    missing = [n for n in ISSUE_NAMES if n not in stand_in.__all__ or not hasattr(stand_in, n)]
    assert missing == []


@needs_gtpyhop
def test_the_stand_in_exports_every_name_gtpyhop_does() -> None:
    real = _real()
    metadata = {"__author__", "__license__", "__description__"}
    assert [n for n in real.__all__ if n not in metadata and not hasattr(stand_in, n)] == []


def _door_domain(g: Any, name: str) -> Any:
    """A task with two methods: the first's action fails, the second's goes through a
    locked door (a dead end); the third task method reaches the goal."""
    domain = g.Domain(name)

    def walk(state: Any, room: str) -> Any:
        if state.doors[room] == "open":
            state.at["me"] = room
            return state
        return False

    def unlock(state: Any, room: str) -> Any:
        if state.keys.get(room):
            state.doors[room] = "open"
            return state
        return None

    def stay(state: Any) -> Any:
        return state

    g.declare_actions(walk, unlock, stay)

    def m_direct(state: Any, room: str) -> Any:
        return [("walk", room)]

    def m_unlock(state: Any, room: str) -> Any:
        return [("unlock", room), ("walk", room)]

    def m_never(state: Any, room: str) -> Any:
        return False

    g.declare_task_methods("go", m_direct, m_never, m_unlock)
    return domain


def _events(g: Any, keys: dict[str, bool], *, trace_state: bool = False) -> Any:
    domain = _door_domain(g, f"doors_{id(keys)}")
    state = g.State("s", at={"me": "hall"}, doors={"lab": "locked"}, keys=keys)
    with contextlib.redirect_stdout(io.StringIO()):
        session = g.PlannerSession(domain=domain, strategy="recursive_dfs")
        return session.find_plan(
            state, [("stay",), ("go", "lab")], trace=True, trace_state=trace_state
        )


def _shape(trace: Any) -> list[tuple[int, Any, str]]:
    return [(e.depth, e.item, e.status) for e in trace.events]


def test_a_traced_find_plan_returns_a_plan_trace() -> None:
    result = _events(stand_in, {"lab": False})
    assert not result.success
    assert isinstance(result.trace, stand_in.PlanTrace)
    assert _shape(result.trace) == [
        (0, ("stay",), "idempotent"),
        (1, ("go", "lab"), "method_applicable"),
        (2, ("walk", "lab"), "not_applicable"),
        (1, ("go", "lab"), "method_not_applicable"),
        (1, ("go", "lab"), "method_applicable"),
        (2, ("unlock", "lab"), "not_applicable"),
        (1, ("go", "lab"), "task_exhausted"),
    ]
    dead_end = result.trace.dead_end
    assert dead_end is not None
    assert (dead_end.item, dead_end.status) == (("walk", "lab"), "not_applicable")
    assert result.trace.applied_before_dead_end == 1
    assert result.trace.malformed_returns == []
    assert bool(stand_in.PlanTrace())


def test_without_trace_there_is_none_and_with_trace_state_a_snapshot() -> None:
    domain = _door_domain(stand_in, "doors_plain")
    state = stand_in.State("s", at={"me": "hall"}, doors={"lab": "open"}, keys={})
    result = stand_in.PlannerSession(domain=domain).find_plan(state, [("go", "lab")])
    assert result.success
    assert result.trace is None
    traced = _events(stand_in, {"lab": True}, trace_state=True)
    assert traced.success
    assert traced.plan == [("stay",), ("unlock", "lab"), ("walk", "lab")]
    unlock = next(e for e in traced.trace.events if e.item == ("unlock", "lab"))
    assert unlock.status == "applied"
    assert unlock.state.doors == {"lab": "locked"}  # the state it was tried on


@needs_gtpyhop
@pytest.mark.parametrize("keys", [{"lab": False}, {"lab": True}])
def test_the_trace_is_gtpyhops(keys: dict[str, bool]) -> None:
    ours = _events(stand_in, keys)
    theirs = _events(_real(), keys)
    assert ours.success == theirs.success
    assert _shape(ours.trace) == _shape(theirs.trace)
    assert repr(ours.trace) == repr(theirs.trace)


def test_a_malformed_return_is_traced() -> None:
    domain = stand_in.Domain("malformed")

    def bad(state: Any) -> Any:
        return True

    stand_in.declare_actions(bad)
    state = stand_in.State("s", x={})
    result = stand_in.PlannerSession(domain=domain).find_plan(state, [("bad",)], trace=True)
    assert not result.success
    assert result.trace is not None
    [event] = result.trace.malformed_returns
    assert (event.status, event.detail) == ("malformed_return", "returned bool: True")


def test_sessions_log_their_operations() -> None:
    domain = _door_domain(stand_in, "doors_logged")
    state = stand_in.State("s", at={"me": "hall"}, doors={"lab": "open"}, keys={})
    session = stand_in.create_session("logged", domain=domain)
    result = session.find_plan(state, [("go", "lab")])
    messages = [entry["message"] for entry in result.logs]
    assert messages[0] == "Created session logged"
    assert "Operation: find_plan" in messages
    logger = stand_in.get_logger("logged")
    assert logger is session.logger
    stats = stand_in.get_logging_stats(logger)
    assert stats.total_entries == len(logger.structured_handler.get_entries())
    assert stats.entries_by_level == {"INFO": stats.total_entries}
    assert stand_in.destroy_session("logged")
    assert "logged" not in stand_in.list_sessions()
    assert stand_in.get_logger("logged") is not logger  # the old one was destroyed


def test_the_structured_logger_and_its_handlers() -> None:
    logger = stand_in.StructuredLogger("mine")
    printed = io.StringIO()
    logger.add_handler(stand_in.StdoutLogHandler("{level} {component}: {message} {n}"))
    with contextlib.redirect_stdout(printed):
        logger.warning("planner", "slow", n=3)  # noqa: PLE1205 - not `logging`
        logger.debug("planner", "detail", n=4)  # noqa: PLE1205
    assert printed.getvalue() == "WARNING planner: slow 3\nDEBUG planner: detail 4\n"
    assert [e["message"] for e in logger.get_logs()] == ["slow"]  # INFO and above
    assert [e.level for e in logger.structured_handler.get_entries()] == [
        stand_in.LogLevel.WARNING,
        stand_in.LogLevel.DEBUG,
    ]
    with logger.capture_stdout():
        print("captured line")
    assert logger.get_logs()[-1]["component"] == "stdout_capture"
    logger.clear_logs()
    assert logger.get_logs() == []


def test_the_resource_manager() -> None:
    manager = stand_in.ResourceManager

    @manager.with_timeout(50, "slow")
    def slow() -> None:
        import time

        time.sleep(1)

    with pytest.raises(stand_in.PlanningTimeoutError, match="timed out after 50ms"):
        slow()
    with pytest.raises(stand_in.PlanningTimeoutError, match="cancelled"):
        manager.check_cancellation("slow")
    manager.clear_cancellation_flag("slow")
    manager.check_cancellation("slow")
    assert manager.with_timeout(None)(lambda: 7)() == 7
    assert manager.start_memory_tracking("mem", 0.05)
    usage = manager.get_memory_usage("mem")
    assert set(usage) == {"memory_mb", "peak_memory_mb"}
    assert usage["peak_memory_mb"] >= usage["memory_mb"] >= 0
    assert set(manager.stop_memory_tracking("mem")) == {"peak_memory_mb", "avg_memory_mb"}
    manager.reset()


def test_a_session_tracks_its_memory() -> None:
    with stand_in.PlannerSession(memory_tracking=True, memory_sampling_interval=0.05) as session:
        domain = _door_domain(stand_in, "doors_memory")
        session.domain = domain
        state = stand_in.State("s", at={"me": "hall"}, doors={"lab": "open"}, keys={})
        result = session.find_plan(state, [("go", "lab")])
    assert {"memory_mb", "peak_memory_mb"} <= set(result.stats)
    stand_in.ResourceManager.reset()


def test_sessions_are_saved_and_restored(tmp_path: Path) -> None:
    domain = _door_domain(stand_in, "doors_saved")
    state = stand_in.State("s", at={"me": "hall"}, doors={"lab": "open"}, keys={})
    session = stand_in.create_session("saved", domain=domain, strategy="recursive_dfs")
    session.find_plan(state, [("go", "lab")])
    assert session.save_to_file(str(tmp_path / "saved.json"))
    data = json.loads((tmp_path / "saved.json").read_text())
    assert data["schema_version"] == stand_in.SESSION_SCHEMA_VERSION == "1"
    assert stand_in.SessionSerializer.validate_session_data(data)
    restored = stand_in.restore_session(str(tmp_path / "saved.json"))
    assert restored is not None
    assert restored.session_id.startswith("saved_restored_")  # "saved" is registered
    assert restored.domain is domain
    assert restored.recursive
    assert restored.get_stats()["plans_generated"] == 1
    assert session.save_to_file(str(tmp_path / "other.pkl"), format="pickle")
    [again] = stand_in.restore_all_sessions(str(tmp_path))  # saved.json (other.pkl is pickle)
    assert again.session_id.startswith("saved_restored_")
    assert len(stand_in.restore_all_sessions(str(tmp_path), format="pickle")) == 1
    assert stand_in.restore_session(str(tmp_path / "missing.json")) is None
    with pytest.raises(stand_in.SessionPersistenceError):
        stand_in.SessionSerializer.deserialize_session(b"{}")
    for name in stand_in.list_sessions():
        stand_in.destroy_session(name)


def test_the_persistence_directory(tmp_path: Path) -> None:
    before = stand_in.get_persistence_directory()
    target = tmp_path / "sessions"
    try:
        assert stand_in.set_persistence_directory(str(target), auto_save=False)
        assert stand_in.get_persistence_directory() == str(target)
        assert target.is_dir()
    finally:
        from plansmith.compat._gtpyhop_session import _REGISTRY

        _REGISTRY.directory = before


@needs_gtpyhop
def test_files_are_read_by_gtpyhop_and_back(tmp_path: Path) -> None:
    real = _real()
    ours = stand_in.PlannerSession("ours", verbose=0)
    assert ours.save_to_file(str(tmp_path / "ours.json"))
    with contextlib.redirect_stdout(io.StringIO()):
        theirs = real.PlannerSession.load_from_file(str(tmp_path / "ours.json"))
        assert theirs is not None
        assert theirs.save_to_file(str(tmp_path / "theirs.json"))
    back = stand_in.PlannerSession.load_from_file(str(tmp_path / "theirs.json"))
    assert back is not None
    assert back.session_id == "ours"


def test_get_session_without_an_id_is_the_default_session() -> None:
    default = stand_in.get_session()
    assert default is stand_in.get_session()
    assert default.session_id == "default"
    assert "default" in stand_in.list_sessions()
    assert stand_in.destroy_session("default")
    with pytest.raises(ValueError, match="not found"):
        stand_in.get_session("nobody")


def _act(g: Any) -> Any:
    """Lazy lookahead to a goal: once it holds, the plan is empty and acting stops
    (with a task, plansmith's plans keep the no-op step GTPyhop drops; see docs/htn.md)."""
    domain = _door_domain(g, "doors_act")

    def m_at(state: Any, who: str, room: str) -> Any:
        return [("go", room)]

    g.declare_unigoal_methods("at", m_at)
    state = g.State("s", at={"me": "hall"}, doors={"lab": "locked"}, keys={"lab": True})
    with contextlib.redirect_stdout(io.StringIO()):
        session = g.PlannerSession(domain=domain, strategy="recursive_dfs")
        return session.run_lazy_lookahead(state, [("at", "me", "lab")], max_tries=3)


def test_a_sessions_lazy_lookahead_returns_an_execution_result() -> None:
    result = _act(stand_in)
    assert isinstance(result, stand_in.ExecutionResult)
    assert result.success
    assert result.final_state.at == {"me": "lab"}
    assert result.executed_actions == [("unlock", "lab"), ("walk", "lab")]
    assert result.stats["executed_actions"] == len(result.executed_actions)


@needs_gtpyhop
def test_a_sessions_lazy_lookahead_acts_as_gtpyhops() -> None:
    ours, theirs = _act(stand_in), _act(_real())
    assert ours.executed_actions == theirs.executed_actions
    assert ours.tries_used == theirs.tries_used
    assert vars(ours.final_state) | {"__name__": ""} == vars(theirs.final_state) | {"__name__": ""}
