"""The per-server limit holds across the cluster: two Dask workers both host ``alpha``
(``maxInFlight: 2``), and the servers' own logs never show more than 2 calls in flight.

The overlap is made, not hoped for: each call waits (``DASK_ECHO_OVERLAP``) until the
shared log has shown 2 calls in flight, so 2 overlap however busy the machine is, while
the others, held back by the limit, wait for a slot."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import _dask_helpers as dh
import anyio
import pytest

from plansmith.engine import Engine, RunInputs
from plansmith.servers import dask_pool_factory

pytestmark = pytest.mark.anyio

DOMAIN = """\
domain: batch
types: {item: object}
predicates:
  raw: [item]
  done: [item]
actions:
  work:
    parameters: {i: item}
    precondition: [raw(i), not done(i)]
    effect: [done(i)]
    tier: read
"""

BINDINGS = """\
bindings:
  work:
    server: alpha
    tool: work
    arguments: {name: "w-${i}", seconds: 0.3}
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def cluster() -> Iterator[dh.Cluster]:
    with dh.local_cluster({"a": {"mcp:alpha": 4}, "b": {"mcp:alpha": 4}}) as running:
        yield running


def most_in_flight(lines: list[dict[str, object]]) -> int:
    now = most = 0
    for line in lines:
        now += 1 if line["event"] == "start" else -1
        most = max(most, now)
    return most


async def test_max_in_flight_of_a_server_holds_across_the_workers_that_host_it(
    cluster: dh.Cluster, tmp_path: Path
) -> None:
    log = tmp_path / "calls.jsonl"
    items = [f"i{k}" for k in range(8)]
    server = {**dh.echo_server("alpha", log, DASK_ECHO_OVERLAP="2"), "maxInFlight": 2}
    files = {
        "domain.yaml": DOMAIN,
        "problem.yaml": "problem: batch\ndomain: batch\n"
        f"objects: {{{', '.join(f'{i}: item' for i in items)}}}\n"
        f"init: [{', '.join(f'raw({i})' for i in items)}]\n"
        f"goal: [{', '.join(f'done({i})' for i in items)}]\n",
        "servers.json": json.dumps({"mcpServers": {"alpha": server}}),
        "bindings.yaml": BINDINGS,
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    inputs = RunInputs(*(tmp_path / n for n in files))
    engine = Engine(tmp_path / "home", pool_factory=dask_pool_factory(cluster.address))
    with anyio.fail_after(120):
        outcome = await engine.run(inputs, approve=True, max_parallel=8)
    engine.close()
    lines = dh.read_log(log)
    alone = [line["name"] for line in lines if line["event"] == "alone"]
    assert not alone, f"{alone}: no second call came within the deadline to overlap with"
    assert outcome.state == "succeeded", outcome.reason
    assert len(lines) == 2 * len(items)
    assert most_in_flight(lines) == 2  # parallel, and never beyond the server's limit
