"""A real Dask ``LocalCluster`` on 127.0.0.1 whose worker processes host different MCP
servers (by the resource ``mcp:NAME``), and files for engine runs over it (also used
by bench/bench_dask.py)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from copy import deepcopy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

ECHO = Path(__file__).parent / "_servers" / "dask_echo_server.py"


@dataclass
class Cluster:
    """A running cluster: its scheduler address and its worker specs by name."""

    cluster: Any  # distributed.LocalCluster
    address: str

    def workers(self) -> dict[str, dict[str, Any]]:
        """``{worker address: {"pid", "resources"}}`` of the workers now connected."""
        from distributed import Client

        with Client(self.address, set_as_default=False) as client:
            info = client.scheduler_info(n_workers=-1)["workers"]
            pids = client.run(os.getpid)
        return {a: {"pid": pids[a], "resources": w.get("resources") or {}} for a, w in info.items()}

    def host_of(self, server: str) -> dict[str, Any]:
        """The one connected worker that declares ``mcp:server``: address, pid, resources."""
        hosts = [
            {"address": a, **w}
            for a, w in self.workers().items()
            if f"mcp:{server}" in w["resources"]
        ]
        assert len(hosts) == 1, hosts
        return hosts[0]

    def wait_for_workers(self, n: int, timeout: float = 60.0) -> None:
        self.cluster.wait_for_workers(n, timeout=timeout)


@contextmanager
def local_cluster(hosts: Mapping[str, Mapping[str, float]], nthreads: int = 8) -> Iterator[Cluster]:
    """A ``LocalCluster`` with one worker process (under a nanny) per entry of ``hosts``:
    ``{worker name: {resource: amount}}``, e.g. ``{"a": {"mcp:alpha": 8}}``."""
    import dask
    from distributed import LocalCluster

    # no dashboard, no spill files in the working directory, quiet logs
    with dask.config.set(
        {
            "distributed.worker.daemon": False,
            "distributed.logging.distributed": "error",
            "temporary-directory": os.environ.get("TMPDIR", "/tmp"),
        }
    ):
        cluster = LocalCluster(
            n_workers=0,
            processes=True,
            host="127.0.0.1",
            # a free port: None is the default 8787, which a cluster of another test
            # worker may hold (distributed then warns, an error under filterwarnings)
            dashboard_address="127.0.0.1:0",
            threads_per_worker=nthreads,
            memory_limit=0,
        )
        try:
            template = next(iter(cluster.new_worker_spec().values()))
            for name, resources in hosts.items():
                spec = deepcopy(template)
                spec["options"]["resources"] = dict(resources)
                spec["options"]["name"] = name
                cluster.worker_spec[name] = spec
            cluster.sync(cluster._correct_state)
            cluster.wait_for_workers(len(hosts), timeout=60)
            yield Cluster(cluster, cluster.scheduler_address)
        finally:
            cluster.close(timeout=30)


def echo_server(name: str, log: Path, **env: str) -> dict[str, Any]:
    """A ``servers.json`` entry for the stdio echo server called ``name``."""
    return {
        "command": sys.executable,
        "args": [str(ECHO)],
        "env": {"DASK_ECHO_NAME": name, "DASK_ECHO_LOG": str(log), **env},
    }


def servers_json(servers: Mapping[str, Mapping[str, Any]]) -> str:
    return json.dumps({"mcpServers": dict(servers)}, indent=2)


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def wait_for_line(
    path: Path, match: Mapping[str, Any], timeout: float = 60.0
) -> dict[str, Any]:
    """The first log line with ``match``'s items, waiting (with a deadline) for a server
    to write it."""
    with anyio.move_on_after(timeout):
        while True:
            for line in read_log(path):
                if all(line.get(k) == v for k, v in match.items()):
                    return line
            await anyio.sleep(0.02)
    raise AssertionError(f"no line {dict(match)} in {path} within {timeout} s")
