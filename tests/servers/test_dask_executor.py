"""The Dask executor on a real LocalCluster (127.0.0.1, 2 worker processes under nannies):
worker ``a`` hosts server ``alpha`` (resource ``mcp:alpha``), worker ``b`` hosts ``beta``
and ``broken``. The servers log each call with their own pid and their parent's (the
worker that spawned them), so the tests check placement from the servers' own logs.

The worker-kill test is last: its nanny restarts the killed worker, which leaves the
cluster as it was.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _dask_helpers as dh
import anyio
import pytest

from plansmith.engine import Engine, RunInputs
from plansmith.errors import ServerStartError, ToolCallError
from plansmith.execution import ErrorClass, Event, RunOutcome, StepSucceeded
from plansmith.servers import (
    DaskPool,
    InProcessServer,
    ServersConfig,
    classify_dask_error,
    dask_pool_factory,
    parse_servers,
)

pytestmark = pytest.mark.anyio

HOSTS = {"a": {"mcp:alpha": 8}, "b": {"mcp:beta": 8, "mcp:broken": 1}}

DOMAIN = """\
domain: relay
types: {item: object}
predicates:
  raw: [item]
  fetched: [item]
  labelled: [item]
actions:
  fetch:
    parameters: {i: item}
    precondition: [raw(i), not fetched(i)]
    effect: [fetched(i)]
    tier: read
  label:
    parameters: {i: item}
    precondition: [fetched(i)]
    effect: [labelled(i)]
    tier: read
"""

# fetch runs on alpha (worker a), label on beta (worker b), each label after its fetch
BINDINGS = """\
bindings:
  fetch:
    server: alpha
    tool: work
    arguments: {name: "fetch-${i}"}
    outputs: {done: "$.structured.done"}
    retries: 2
    idempotent: true
  label:
    server: beta
    tool: work
    arguments: {name: "label-${fetch(i).done}"}
    outputs: {done: "$.structured.done"}
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def cluster() -> Iterator[dh.Cluster]:
    with dh.local_cluster(HOSTS) as running:
        yield running


def problem(n: int) -> str:
    items = [f"i{k}" for k in range(n)]
    return (
        "problem: relay\ndomain: relay\n"
        f"objects: {{{', '.join(f'{i}: item' for i in items)}}}\n"
        f"init: [{', '.join(f'raw({i})' for i in items)}]\n"
        f"goal: [{', '.join(f'labelled({i})' for i in items)}]\n"
    )


def write_inputs(tmp: Path, n: int, log: Path, **alpha_env: str) -> RunInputs:
    servers = {
        "alpha": dh.echo_server("alpha", log, **alpha_env),
        "beta": dh.echo_server("beta", log),
    }
    files = {
        "domain.yaml": DOMAIN,
        "problem.yaml": problem(n),
        "servers.json": dh.servers_json(servers),
        "bindings.yaml": BINDINGS,
    }  # in RunInputs' order
    for name, text in files.items():
        (tmp / name).write_text(text)
    return RunInputs(*(tmp / n for n in files))


def config(tmp: Path, **servers: dict[str, Any]) -> ServersConfig:
    return parse_servers(dh.servers_json(servers))


def calls(log: Path) -> Counter[tuple[str, str]]:
    """(event, name) -> how many times the servers logged it."""
    return Counter((line["event"], line["name"]) for line in dh.read_log(log))


# -- placement ----------------------------------------------------------------------------


async def test_each_step_runs_on_the_worker_that_hosts_its_server(
    cluster: dh.Cluster, tmp_path: Path
) -> None:
    log = tmp_path / "calls.jsonl"
    inputs = write_inputs(tmp_path, 3, log)
    engine = Engine(tmp_path / "home", pool_factory=dask_pool_factory(cluster.address))
    with anyio.fail_after(120):
        outcome = await engine.run(inputs, approve=True)
    engine.close()
    assert outcome.state == "succeeded", outcome.reason
    alpha = await anyio.to_thread.run_sync(cluster.host_of, "alpha")
    beta = await anyio.to_thread.run_sync(cluster.host_of, "beta")
    assert alpha["pid"] != beta["pid"]
    lines = dh.read_log(log)
    assert {(x["server"], x["ppid"]) for x in lines} == {
        ("alpha", alpha["pid"]),
        ("beta", beta["pid"]),
    }
    names = {f"fetch-i{k}" for k in range(3)} | {f"label-fetch-i{k}!" for k in range(3)}
    assert calls(log) == Counter({(e, n): 1 for n in names for e in ("start", "end")})
    keys = {x["key"] for x in lines}
    assert len(keys) == 6
    assert all(k.startswith(outcome.run_id + "/") for k in keys)
    done = sorted(str(v["done"]) for v in outcome.outputs.values())  # type: ignore[index, call-overload]
    assert done == sorted(
        [f"fetch-i{k}!" for k in range(3)] + [f"label-fetch-i{k}!!" for k in range(3)]
    )


def test_plansmith_run_with_executor_dask_places_steps_on_the_cluster(
    cluster: dh.Cluster, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    import plansmith.cli._run  # noqa: F401  (registers the commands on the app)
    from plansmith.cli._app import app

    log = tmp_path / "calls.jsonl"
    inputs = write_inputs(tmp_path, 2, log)
    files = [str(inputs.domain), str(inputs.problem)]
    files += ["--servers", str(inputs.servers), "--bindings", str(inputs.bindings)]
    args = [*files, "--executor", "dask", "--scheduler", cluster.address, "--yes", "--json"]
    result = CliRunner().invoke(app, ["run", *args, "--home", str(tmp_path / "home")])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["state"] == "succeeded"
    alpha, beta = cluster.host_of("alpha"), cluster.host_of("beta")
    assert {(x["server"], x["ppid"]) for x in dh.read_log(log)} == {
        ("alpha", alpha["pid"]),
        ("beta", beta["pid"]),
    }


# -- the pool on its own ------------------------------------------------------------------


async def test_key_meta_progress_and_tool_errors_pass_through_a_worker(
    cluster: dh.Cluster, tmp_path: Path
) -> None:
    log = tmp_path / "calls.jsonl"
    cfg = config(tmp_path, beta=dh.echo_server("beta", log))
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(60):
        async with DaskPool(cfg, cluster.address) as pool:
            catalog = await pool.start()
            result = await pool.call(
                "beta", "work", {"name": "w"}, key="run/s1", meta={"traceparent": "00-ab-cd-01"}
            )
            counted = await pool.call("beta", "progress", {"n": 3}, on_progress=on_progress)
            failed = await pool.call("beta", "fail", {"retryable": True})
    assert set(catalog.tool_names("beta")) >= {"work", "progress", "fail", "noop"}
    assert result.structured is not None
    assert result.structured["done"] == "w!"
    start = dh.read_log(log)[0]
    assert start["key"] == "run/s1"
    assert start["meta"]["traceparent"] == "00-ab-cd-01"
    assert counted.structured == {"n": 3}
    assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
    assert failed.is_error
    assert failed.retryable
    assert failed.text == "it failed"


async def test_a_call_cancelled_while_its_reply_is_fetched_leaves_other_fetches_alone(
    cluster: dh.Cluster, tmp_path: Path
) -> None:
    # The client fetches the replies of concurrent calls in one shared task: a call
    # cancelled during that fetch (a step's timeout) must not cancel the others' fetch.
    cfg = config(tmp_path, beta=dh.echo_server("beta", tmp_path / "b.jsonl"))
    kept: dict[int, dict[str, Any]] = {}
    scopes: list[anyio.CancelScope] = []

    async def fetch(i: int, future: Any) -> None:
        if i % 2:
            with anyio.CancelScope() as scope:
                scopes.append(scope)
                await pool._result(future, "beta")
        else:
            kept[i] = await pool._result(future, "beta")

    async def cancel_during_the_shared_fetch() -> None:
        # Dask's client keeps the shared fetch in ``_gather_future`` while it runs
        with anyio.move_on_after(2):
            while getattr(pool.client, "_gather_future", None) is None:
                await anyio.sleep(0)
        for _ in range(3):  # let every call attach to it
            await anyio.sleep(0)
        for scope in scopes:
            scope.cancel()

    with anyio.fail_after(60):
        async with DaskPool(cfg, cluster.address) as pool:
            futures = [pool.client.submit(dict, i=i, pure=False) for i in range(20)]
            for future in futures:
                await future.exception()  # finished; the replies are still on the workers
            async with anyio.create_task_group() as tg:
                for i, future in enumerate(futures):
                    tg.start_soon(fetch, i, future)
                tg.start_soon(cancel_during_the_shared_fetch)
    assert kept == {i: {"i": i} for i in range(0, 20, 2)}


async def test_a_server_that_fails_to_start_on_its_worker_is_a_start_error(
    cluster: dh.Cluster, tmp_path: Path
) -> None:
    broken = {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]}
    cfg = config(tmp_path, broken=broken)
    with anyio.fail_after(60):
        async with DaskPool(cfg, cluster.address) as pool:
            with pytest.raises(ServerStartError) as info:
                await pool.start()
    assert "did not start on their Dask workers" in info.value.message
    assert "broken" in info.value.message


async def test_start_fails_naming_the_resource_when_no_worker_hosts_a_server(
    cluster: dh.Cluster, tmp_path: Path
) -> None:
    cfg = config(tmp_path, gamma=dh.echo_server("gamma", tmp_path / "g.jsonl"))
    with anyio.fail_after(60):
        async with DaskPool(cfg, cluster.address, worker_wait=1.0, poll=0.2) as pool:
            with pytest.raises(ServerStartError) as info:
                await pool.start()
    assert "mcp:gamma" in info.value.message
    assert info.value.hint is not None
    assert "--resources" in info.value.hint


async def test_a_call_waits_for_a_host_then_fails_transport_lost_with_the_reason(
    cluster: dh.Cluster, tmp_path: Path
) -> None:
    cfg = config(tmp_path, gamma=dh.echo_server("gamma", tmp_path / "g.jsonl"))
    with anyio.fail_after(60):
        async with DaskPool(cfg, cluster.address, worker_wait=1.0, poll=0.2) as pool:
            with pytest.raises(ToolCallError) as info:
                await pool.call("gamma", "noop", {})
            # the queued task was cancelled: the scheduler forgets it (the cancel goes
            # over the client's batched stream, so wait for it with a deadline)
            while await pool.client.run_on_scheduler(_call_tasks):
                await anyio.sleep(0.05)
    assert info.value.error_class == ErrorClass.TRANSPORT_LOST
    assert "no Dask worker hosts server 'gamma' (resource mcp:gamma)" in info.value.message


def _call_tasks(dask_scheduler: Any) -> list[str]:
    return [str(k) for k in dask_scheduler.tasks if str(k).startswith("plansmith-call-gamma")]


async def test_an_unreachable_scheduler_is_a_start_error_with_a_hint(tmp_path: Path) -> None:
    import _shared_servers

    address = f"tcp://127.0.0.1:{_shared_servers.free_port()}"
    cfg = config(tmp_path, beta=dh.echo_server("beta", tmp_path / "b.jsonl"))
    with anyio.fail_after(60), pytest.raises(ServerStartError) as info:
        async with DaskPool(cfg, address, connect_timeout=1.0):
            pass
    assert address in info.value.message
    assert info.value.hint is not None
    assert "dask scheduler" in info.value.hint


async def test_in_process_servers_are_refused_before_connecting() -> None:
    cfg = ServersConfig((InProcessServer("here", object()),))
    with pytest.raises(ServerStartError, match="in-process"):
        async with DaskPool(cfg, "tcp://127.0.0.1:1"):
            pass


async def test_without_the_dask_extra_a_pool_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails
    with pytest.raises(ServerStartError) as info:
        async with DaskPool(ServersConfig(()), "tcp://127.0.0.1:1"):
            pass
    assert info.value.hint == "pip install 'plansmith[dask]'"


def test_dask_failures_are_classified_transport_lost_or_protocol_error() -> None:
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    killed = KilledWorker(task="t", last_worker="tcp://127.0.0.1:9", allowed_failures=0)  # type: ignore[arg-type]
    for error in (killed, CommClosedError("gone"), FutureCancelledError("t", "lost")):
        classified = classify_dask_error(error, "alpha")
        assert classified.error_class == ErrorClass.TRANSPORT_LOST, error
        assert "'alpha'" in classified.message
    assert classify_dask_error(ValueError("x"), "alpha").error_class == ErrorClass.PROTOCOL_ERROR
    mine = ToolCallError(ErrorClass.TIMEOUT, "slow")
    assert classify_dask_error(mine, "alpha") is mine


# -- a worker dies mid-step (last: the nanny restarts it) ---------------------------------


async def test_a_killed_workers_step_reruns_with_its_key_on_the_replacement_worker(
    cluster: dh.Cluster, tmp_path: Path
) -> None:
    log = tmp_path / "calls.jsonl"
    marker = tmp_path / "held"
    inputs = write_inputs(
        tmp_path, 4, log, DASK_ECHO_HOLD="fetch-i0", DASK_ECHO_HOLD_MARKER=str(marker)
    )
    before = await anyio.to_thread.run_sync(cluster.host_of, "alpha")
    survivor = await anyio.to_thread.run_sync(cluster.host_of, "beta")
    engine = Engine(tmp_path / "home", pool_factory=dask_pool_factory(cluster.address))
    outcome: list[RunOutcome] = []
    others_fetched = anyio.Event()
    fetched: set[tuple[str, ...]] = set()

    def on_event(event: Event) -> None:
        if isinstance(event, StepSucceeded) and event.action == "fetch":
            fetched.add(event.args)
            if len(fetched) == 3:
                others_fetched.set()

    async def run() -> None:
        outcome.append(await engine.run(inputs, approve=True, run_id="r-kill", subscribe=on_event))

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            # kill worker a while fetch(i0) holds there and its other steps are done
            await others_fetched.wait()
            held = await dh.wait_for_line(log, {"event": "start", "name": "fetch-i0"})
            assert held["ppid"] == before["pid"]  # in flight on worker a
            os.kill(before["pid"], signal.SIGKILL)
        after = await anyio.to_thread.run_sync(cluster.host_of, "alpha")
    engine.close()

    assert outcome[0].state == "succeeded", outcome[0].reason
    assert after["pid"] != before["pid"]
    lines = dh.read_log(log)
    # the in-flight step: called again with the same key, on the replacement worker
    again = [x for x in lines if x["name"] == "fetch-i0"]
    assert [(x["event"], x["ppid"]) for x in again] == [
        ("start", before["pid"]),
        ("start", after["pid"]),
        ("end", after["pid"]),
    ]
    assert len({x["key"] for x in again}) == 1
    # nothing that had finished ran again; beta's worker was never replaced
    finished = {x["name"] for x in lines if x["event"] == "end"}
    assert len(finished) == 8
    counted = calls(log)
    assert all(counted["end", n] == 1 for n in finished)
    assert all(counted["start", n] == 1 for n in finished - {"fetch-i0"})
    assert {x["ppid"] for x in lines if x["server"] == "beta"} == {survivor["pid"]}
    events = engine_events(tmp_path, "r-kill")
    retried = [e for e in events if e.type == "StepRetrying"]
    assert [(e.error_class, e.step) for e in retried] == [  # type: ignore[attr-defined]
        (ErrorClass.TRANSPORT_LOST, retried[0].step)  # type: ignore[attr-defined]
    ]
    assert "worker" in retried[0].message  # type: ignore[attr-defined]


def engine_events(tmp: Path, run_id: str) -> list[Any]:
    engine = Engine(tmp / "home")
    try:
        return list(engine.log.events(run_id))
    finally:
        engine.close()
