"""``make_plan(costs="learned")`` of the MCP face: two tools reach one fact, the one
declared cheaper is slow in practice (it sleeps); once the run log holds runs of both,
the learned costs make the plan take the other, the run records the costs it was planned
with, and it runs (the counter server over stdio). A ``costs`` that is neither
``declared`` nor ``learned`` is a typed error naming the argument."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from _shared_servers import servers_json
from plansmith.domains.folders import load_folders
from plansmith.engine import COSTS_KEY, Engine, RunInputs
from plansmith.errors import InputError
from plansmith.mcp import FaceService

pytestmark = pytest.mark.anyio

_TEST = Path(__file__).resolve().parents[1] / "cli" / "test_stats_and_learned_costs.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _folder(root: Path) -> Path:
    """The fetch domain of the CLI's learned-costs test, as a domain folder."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_learned_costs", _TEST)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    folder = root / "fetch"
    folder.mkdir()
    (folder / "domain.yaml").write_text(module.DOMAIN)
    (folder / "bindings.yaml").write_text(module.BINDINGS)
    (folder / "servers.json").write_text(servers_json())
    (folder / "problem.yaml").write_text(module._problem("done(c)"))
    for name, goal in [("slow", "via_slow(a)"), ("quick", "via_quick(b)")]:
        (folder / f"{name}.yaml").write_text(module._problem(goal))
    return folder


async def test_make_plan_with_learned_costs_takes_the_faster_tool(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(120):
        for name in ("slow", "quick", "slow", "quick"):  # the log learns both tools
            files = RunInputs(
                folder / "domain.yaml",
                folder / f"{name}.yaml",
                folder / "servers.json",
                folder / "bindings.yaml",
            )
            outcome = await engine.run(files, approve=True)
            assert outcome.state == "succeeded", outcome.reason
        service = FaceService.on(engine, load_folders([folder]))
        async with service:
            declared = await service.make_plan("fetch", goal=["done(c)"])
            assert [s.action for s in declared.steps] == ["fetch_slow"]  # declared 1 < 2
            learned = await service.make_plan("fetch", goal=["done(c)"], costs="learned")
            assert [s.action for s in learned.steps] == ["fetch_quick"]
            assert learned.plan_hash != declared.plan_hash
            assert learned.run_id is not None
            recorded = engine.log.run(learned.run_id).inputs[COSTS_KEY]
            assert isinstance(recorded, dict)
            assert recorded["fetch_slow"] > recorded["fetch_quick"]
            service.approve_plan(str(learned.plan_hash))
            handle = await service.start_run(str(learned.plan_hash))
            while service.get_run_status(handle.run_id).state not in ("succeeded", "failed"):
                await service.table.feed(handle.run_id).wait()
            assert service.get_run_status(handle.run_id).state == "succeeded"
            with pytest.raises(InputError) as caught:
                await service.make_plan("fetch", goal=["done(c)"], costs="cheapest")
            assert caught.value.location is not None
            assert caught.value.location.argument == "costs"
    engine.close()
