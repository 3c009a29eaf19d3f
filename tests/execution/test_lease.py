"""Run leases on the three logs (memory, SQLite, PostgreSQL): acquire, renew, release,
expiry, the list of runs to take over, and races between two connections."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from _log_fixtures import OpenLog, log_opener

from plansmith.execution import PlanReady, RunFinished, RunLeases, RunLog


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def open_log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenLog]:
    """Each call opens another connection to the same store (memory: the same object)."""
    with log_opener(request.param, tmp_path) as opener:
        yield opener


def leases(log: RunLog) -> RunLeases:
    assert isinstance(log, RunLeases)
    return log


def test_one_owner_holds_a_lease_until_it_releases_it(open_log: OpenLog) -> None:
    a, b = leases(open_log()), leases(open_log())
    held = a.acquire("r", "A", 60)
    assert held is not None
    assert held.owner == "A"
    again = b.acquire("r", "B", 60)
    assert again is not None
    assert again.owner == "A"
    assert again.expires == held.expires
    assert a.renew("r", "A", 60)
    assert not b.renew("r", "B", 60)
    b.release("r", "B")  # not B's: nothing happens
    holder = b.holder("r")
    assert holder is not None
    assert holder.owner == "A"
    a.release("r", "A")
    assert b.holder("r") is None
    taken = b.acquire("r", "B", 60)
    assert taken is not None
    assert taken.owner == "B"


def test_an_expired_lease_goes_to_the_next_engine_and_the_old_owner_cannot_renew(
    open_log: OpenLog,
) -> None:
    a, b = leases(open_log()), leases(open_log())
    a.acquire("r", "A", -1)  # expired from the start: no need to wait for the clock
    taken = b.acquire("r", "B", 60)
    assert taken is not None
    assert taken.owner == "B"
    assert not a.renew("r", "A", 60)
    assert a.acquire("r", "A", 60).owner == "B"  # type: ignore[union-attr]


def test_replacing_takes_an_unexpired_lease_from_the_named_owner_only(open_log: OpenLog) -> None:
    a = leases(open_log())
    a.acquire("r", "A", 60)
    assert a.acquire("r", "C", 60, replacing="B").owner == "A"  # type: ignore[union-attr]
    assert a.acquire("r", "C", 60, replacing="A").owner == "C"  # type: ignore[union-attr]


def test_expired_unfinished_lists_only_expired_leases_of_runs_still_going(
    open_log: OpenLog,
) -> None:
    log = open_log()
    for run_id in ("live", "crashed", "finished"):
        log.create_run(run_id, "2026-01-01T00:00:00.000Z", {})
        log.append(PlanReady(run_id=run_id, seq=1, time="t", plan_hash="h"))
    log.append(RunFinished(run_id="finished", seq=2, time="t", state="succeeded"))
    log.flush()
    lease = leases(log)
    lease.acquire("live", "A", 60)
    lease.acquire("crashed", "A", -1)
    lease.acquire("finished", "A", -1)
    lease.acquire("no-such-run", "A", -1)
    assert leases(open_log()).expired_unfinished() == ["crashed"]


# the memory log has one connection: there is no race to run on it
@pytest.mark.parametrize("open_log", ["sqlite", "postgres"], indirect=True)
@pytest.mark.parametrize("rounds", [20])
def test_two_connections_racing_for_each_lease_never_both_win(
    open_log: OpenLog, rounds: int
) -> None:
    logs = [leases(open_log()), leases(open_log())]
    assert logs[0] is not logs[1]
    barrier = threading.Barrier(2)
    won: dict[str, list[str]] = {}
    lock = threading.Lock()

    def contend(index: int) -> None:
        me = f"engine-{index}"
        for k in range(rounds):
            barrier.wait(timeout=30)
            lease = logs[index].acquire(f"r{k}", me, -1 if k % 2 else 60)
            if lease is not None and lease.owner == me:
                with lock:
                    won.setdefault(f"r{k}", []).append(me)

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    # an unexpired lease has one winner; an expired one (odd k) may change hands once,
    # but then the later winner holds it
    for k in range(rounds):
        winners = won.get(f"r{k}", [])
        holder = logs[0].holder(f"r{k}")
        assert holder is not None
        assert winners
        assert winners[-1] == holder.owner or holder.owner in winners
        if k % 2 == 0:
            assert len(winners) == 1, (k, winners)
