"""The engine as plansmith's MCP face, in memory: plan, approve, run, status, report."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import _face_helpers as fh
import anyio
import pytest

from _shared_servers import SUMMARISE_BINDING, action, binding, servers_json

pytestmark = pytest.mark.anyio
counter_url = fh.counter_url


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _client(service: Any) -> Any:
    from mcp import Client

    from plansmith.mcp import build_face_server

    return Client(build_face_server(service, env={}))


async def test_every_tool_has_an_output_schema_and_the_prompt_and_resources_exist(
    counter_url: str,
    tmp_path: Path,
) -> None:
    async with _client(fh.make_service(tmp_path, url=counter_url)) as client:
        tools = (await client.list_tools()).tools
        templates = (await client.list_resource_templates()).resource_templates
        prompt = await client.get_prompt("plan_and_run", {"request": "index d1"})
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        review = await client.get_prompt("review_run", {"run_id": "r-0123456789ab"})
    assert {t.name for t in tools} == {
        "list_domains", "describe_domain", "make_plan", "approve_plan", "start_run",
        "get_run_status", "get_run_report", "cancel_run", "list_runs", "draft_patch",
        "open_session", "await_run", "answer_question",
    }  # fmt: skip
    assert all(t.output_schema is not None for t in tools)
    assert {t.uri_template for t in templates} == {
        "plansmith://domains/{name}", "plansmith://plans/{plan_hash}", "plansmith://runs/{run_id}",
        "plansmith://runs/{run_id}/events",
    }  # fmt: skip
    assert "approve_plan" in prompt.messages[0].content.text
    assert prompts == {"plan_and_run", "review_run"}  # ask_research: with research served
    assert "get_run_report with run_id 'r-0123456789ab'" in review.messages[0].content.text


async def test_list_and_describe_show_goals_tools_and_servers(
    counter_url: str, tmp_path: Path
) -> None:
    async with _client(fh.make_service(tmp_path, url=counter_url)) as client:
        domains = await fh.call(client, "list_domains")
        info = await fh.call(client, "describe_domain", {"name": "docs"})
        text = (await client.read_resource("plansmith://domains/docs")).contents[0].text
    names = [d["name"] for d in domains["domains"]]
    assert names[0] == "docs"
    assert {"bio", "code", "pcr", "research"} <= set(names)  # the shipped catalog too
    assert "doc-pipeline" not in names  # a plan-only example is not in the catalog
    by_name = {d["name"]: d for d in domains["domains"]}
    assert by_name["docs"]["ready"] is True
    assert by_name["docs"]["reason"] == ""
    research = by_name["research"]  # its servers come from --research-source
    assert not research["ready"]
    assert "no servers.json" in research["reason"]
    assert "--research-source" in research["fix"]
    assert info["servers"] == ["counter"]
    tools = {a["name"]: a["tool"] for a in info["actions"]}
    assert tools == {"summarise": "work", "index": "echo", "archive": "sleep"}
    assert [g["name"] for g in info["goals"]] == ["searchable", "summarised"]
    assert json.loads(text)["name"] == "docs"


async def test_structured_goal_plans_approves_runs_and_reports(
    counter_url: str, tmp_path: Path
) -> None:
    async with _client(fh.make_service(tmp_path, url=counter_url)) as client:
        plan = await fh.call(
            client, "make_plan", {"domain": "docs", "goal": ["indexed(d1)", "indexed(d2)"]}
        )
        refused = await fh.error_text(client, "start_run", {"plan_hash": plan["plan_hash"]})
        approval = await fh.call(client, "approve_plan", {"plan_hash": plan["plan_hash"]})
        run = await fh.call(client, "start_run", {"plan_hash": plan["plan_hash"]})
        status = await fh.poll(client, run["run_id"])
        report = await fh.call(client, "get_run_report", {"run_id": run["run_id"]})
        doc = json.loads(
            (await client.read_resource(f"plansmith://plans/{plan['plan_hash']}")).contents[0].text
        )
    assert plan["status"] == "planned"
    assert [s["action"] for s in plan["steps"]].count("index") == 2
    assert plan["tiers"] == ["write"]
    assert plan["needs_approval"] is True
    assert plan["binding"] == {"ok": True, "servers": ["counter"], "problems": []}
    assert plan["mermaid"].startswith("flowchart")
    assert "ApprovalRequiredError" in refused
    assert "approve_plan" in refused
    assert approval["approved_by"] == "mcp:local"
    assert status == {
        "run_id": run["run_id"], "plan_hash": plan["plan_hash"], "state": "succeeded",
        "done": 4, "total": 4, "percent": 100.0, "in_flight": [], "failures": [],
        "replans": 0, "error": None, "questions": [], "hint": None,
    }  # fmt: skip
    data = report["report"]
    assert data["plan"] == {
        "hash": plan["plan_hash"], "approved_by": "mcp:local", "approval_event": "person"
    }  # fmt: skip
    assert data["servers"] == {"counter": 4}
    assert data["llm_calls"] == 0
    assert {o["from"]: o["value"] for o in data["outputs"]}["s3.value"] in ("d1!", "d2!")
    assert all(s["tool"] in ("work", "echo") and s["duration_ms"] >= 0 for s in data["steps"])
    assert f"`{plan['plan_hash']}`, approved by mcp:local" in report["markdown"]
    assert "- `s1.done` = " in report["markdown"]
    assert doc["plan"]["hash"] == plan["plan_hash"]


#: ``summarise`` finds no ``found``; ``index`` reads it and says ``when_absent: skip``
ABSENT = (
    "bindings:\n"
    + binding("summarise", "work", '{name: "${d}"}', '{found: {path: "$.nope", optional: true}}')
    + binding(
        "index",
        "echo",
        '{x: "${summarise(d).found}"}',
        '{value: "$.structured.value"}',
        "    when_absent: skip\n",
    )
    + binding("archive", "sleep", "{seconds: 600}")
)


async def test_a_skipped_step_is_done_in_the_status_and_listed_in_the_report(
    counter_url: str, tmp_path: Path
) -> None:
    service = fh.make_service(tmp_path, url=counter_url, bindings=ABSENT)
    async with _client(service) as client:
        _, run_id = await fh.plan_approve_run(client, goal=["indexed(d0)"])
        status = await fh.poll(client, run_id)
        report = await fh.call(client, "get_run_report", {"run_id": run_id})
    assert status["state"] == "succeeded"
    assert (status["done"], status["total"], status["failures"]) == (2, 2, [])
    data = report["report"]
    assert [s["outcome"] for s in data["steps"]] == ["succeeded", "skipped"]
    assert data["failures"] == []
    [skipped] = data["skipped"]
    assert skipped["step"] == "s2"
    assert "${summarise(d).found} (an output of step s1) is null" in skipped["reason"]
    assert "- s2: skipped, ${summarise(d).found}" in report["markdown"]
    assert data["servers"] == {"counter": 1}  # the skipped step called no server


async def test_offline_request_becomes_the_named_goal_over_the_named_objects(
    counter_url: str,
    tmp_path: Path,
) -> None:
    async with _client(fh.make_service(tmp_path, url=counter_url)) as client:
        plan, run_id = await fh.plan_approve_run(client, request="please index d0 and d2")
        await fh.poll(client, run_id)
        report = await fh.call(client, "get_run_report", {"run_id": run_id})
    assert plan["translation"]["source"] == "offline"
    assert plan["translation"]["goal"] == ["indexed(d0)", "indexed(d2)"]
    assert plan["translation"]["chosen"] == "searchable"
    assert report["report"]["asked"]["request"] == "please index d0 and d2"
    assert "- Asked: please index d0 and d2" in report["markdown"]


async def test_unsure_offline_request_answers_with_candidates_and_no_plan(
    counter_url: str, tmp_path: Path
) -> None:
    async with _client(fh.make_service(tmp_path, url=counter_url)) as client:
        vague = await fh.call(client, "make_plan", {"domain": "docs", "request": "do d1"})
        nothing = await fh.call(client, "make_plan", {"domain": "docs", "request": "searchable"})
        pizza = await fh.call(client, "make_plan", {"domain": "docs", "request": "order a pizza"})
    assert vague["status"] == "needs_choice"
    assert vague["translation"]["reason"]
    assert vague["plan_hash"] is None
    assert [c.split(":")[0] for c in vague["translation"]["candidates"]] == [
        "searchable", "summarised"
    ]  # fmt: skip
    assert nothing["status"] == "needs_choice"  # which document is not said
    assert nothing["translation"]["reason"]
    assert pizza["status"] == "needs_choice"
    assert pizza["translation"]["candidates"] == []  # nothing in the domain fits
    assert pizza["translation"]["reason"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            {"domain": "nope", "goal": ["indexed(d1)"]},
            "InputError: argument domain: no domain named 'nope'",
        ),
        ({"domain": "docs", "goal": ["indexd(d1)"]}, "unknown predicate 'indexd'"),
        ({"domain": "docs", "goal": ["indexed(zz)"]}, "unknown object 'zz'"),
        ({"domain": "docs"}, "needs a goal, tasks or a request"),
        ({"domain": "docs", "goal": ["indexed(d1)"], "objects": {"x": "nosuchtype"}}, "Error"),
    ],
)
async def test_bad_goals_are_refused_with_typed_errors(
    counter_url: str, tmp_path: Path, args: dict[str, Any], expected: str
) -> None:
    async with _client(fh.make_service(tmp_path, url=counter_url)) as client:
        text = await fh.error_text(client, "make_plan", args)
    assert expected in text


async def test_htn_tasks_plan_too(counter_url: str, tmp_path: Path) -> None:
    async with _client(fh.make_service(tmp_path, url=counter_url)) as client:
        plan = await fh.call(client, "make_plan", {"domain": "docs", "tasks": ["publish(d1)"]})
    assert [s["action"] for s in plan["steps"]] == ["summarise", "index"]


async def test_a_domain_without_servers_plans_and_says_why_it_cannot_run_and_the_fix(
    counter_url: str, tmp_path: Path
) -> None:
    service = fh.make_service(tmp_path, url=counter_url)
    (tmp_path / "domains" / "docs" / "servers.json").unlink()
    async with _client(service) as client:
        plan = await fh.call(client, "make_plan", {"domain": "docs", "goal": ["indexed(d1)"]})
    assert plan["status"] == "planned"
    assert plan["run_id"] is None
    (why,) = plan["binding"]["problems"]
    assert why.startswith("the domain cannot run here: plans only: the folder has no servers.json")
    assert "docs/bindings.md" in why


async def test_a_missing_server_shows_in_the_binding_check_and_refuses_the_run(
    counter_url: str,
    tmp_path: Path,
) -> None:
    service = fh.make_service(tmp_path, url=counter_url)
    (tmp_path / "domains" / "docs" / "servers.json").write_text(
        json.dumps({"mcpServers": {"counter": {"command": str(tmp_path / "no-such-server")}}})
    )
    async with _client(service) as client:
        plan = await fh.call(client, "make_plan", {"domain": "docs", "goal": ["indexed(d1)"]})
        refused = await fh.error_text(client, "approve_plan", {"plan_hash": plan["plan_hash"]})
        text = await fh.error_text(client, "start_run", {"plan_hash": plan["plan_hash"]})
    assert plan["binding"]["ok"] is False
    assert "ServerStartError" in plan["binding"]["problems"][0]
    assert plan["binding"]["problems"][1].startswith(  # and why, by the catalog's rule
        "the domain cannot run here: server 'counter': the command "
    )
    assert "give its full path" in plan["binding"]["problems"][1]
    assert refused.startswith("Error executing tool approve_plan: ServerStartError: ")
    assert text.startswith("Error executing tool start_run: ServerStartError: ")
    assert "hint:" in text


async def test_unknown_plan_and_run_ids_are_typed_errors(counter_url: str, tmp_path: Path) -> None:
    async with _client(fh.make_service(tmp_path, url=counter_url)) as client:
        no_plan = await fh.error_text(client, "approve_plan", {"plan_hash": "sha256:00"})
        no_run = await fh.error_text(client, "get_run_status", {"run_id": "r-nope"})
    assert "InputError: argument plan_hash: no plan with hash" in no_plan
    assert "RunNotFoundError" in no_run


async def test_runs_belong_to_their_owner_unless_shared(counter_url: str, tmp_path: Path) -> None:
    from plansmith.errors import InputError, RunNotFoundError

    service = fh.make_service(tmp_path, url=counter_url)
    async with service:
        plan = await service.make_plan("docs", goal=["summarised(d1)"], owner="a")
        with pytest.raises(InputError, match="in this session"):
            await service.start_run(plan.plan_hash, owner="b")  # not b's plan
        run = await service.start_run(plan.plan_hash, owner="a")
        again = await service.start_run(plan.plan_hash, owner="a")  # starts nothing
        with pytest.raises(RunNotFoundError):
            service.get_run_status(run.run_id, owner="b")
        with pytest.raises(RunNotFoundError):
            await service.cancel_run(run.run_id, owner="b")
        assert service.list_runs(owner="b").runs == ()
        assert [r.run_id for r in service.list_runs(owner="a").runs] == [run.run_id]
        service.share_runs = True
        assert service.get_run_status(run.run_id, owner="b").run_id == run.run_id
        assert [r.run_id for r in service.list_runs(owner="b").runs] == [run.run_id]
    assert run.run_id == plan.run_id == again.run_id  # make_plan's run, started once


async def test_runs_over_the_limit_are_refused_as_busy(counter_url: str, tmp_path: Path) -> None:
    from plansmith.errors import BusyError

    service = fh.make_service(tmp_path, url=counter_url, max_runs=2)
    goal = ["archived(d1)"]  # its archive step sleeps 600 s: a started run stays in flight
    async with service:
        made = [await service.make_plan("docs", goal=goal) for _ in range(2)]
        for plan in made:
            service.approve_plan(plan.plan_hash)
        first = await service.start_run(made[0].plan_hash)  # the newest approved run
        second = await service.start_run(made[0].plan_hash)  # then the other one
        late = await service.make_plan("docs", goal=goal)  # made and held: not counted
        service.approve_plan(late.plan_hash)
        with pytest.raises(BusyError) as caught:
            await service.start_run(late.plan_hash)
        refused = service.get_run_status(late.run_id)
        await service.cancel_run(first.run_id)
        freed = await service.start_run(late.plan_hash)  # a slot is free again
    assert {first.run_id, second.run_id} == {p.run_id for p in made}
    assert (first.state, second.state) == ("running", "running")
    assert "retry later" in str(caught.value)
    assert refused.state == "approved"  # nothing of it started
    assert (freed.run_id, freed.state) == (late.run_id, "running")


async def test_cancel_run_stops_it_and_the_status_says_cancelled(
    counter_url: str, tmp_path: Path
) -> None:
    async with _client(fh.make_service(tmp_path, url=counter_url)) as client:
        _, run_id = await fh.plan_approve_run(client, goal=["archived(d1)"])  # sleeps 600 s
        status = await fh.call(client, "cancel_run", {"run_id": run_id})
        report = await fh.call(client, "get_run_report", {"run_id": run_id})
    assert status["state"] == "cancelled"
    assert report["report"]["state"] == "cancelled"
    assert report["report"]["reason"] == "cancelled by the client"  # recorded by the runner
    assert "running" not in {s["outcome"] for s in report["report"]["steps"]}


async def test_make_plan_reports_progress(counter_url: str, tmp_path: Path) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async with _client(fh.make_service(tmp_path, url=counter_url)) as client:
        result = await client.call_tool(
            "make_plan", {"domain": "docs", "goal": ["indexed(d1)"]}, progress_callback=progress
        )
    assert not result.is_error
    assert [s[0] for s in seen] == [0, 1, 3]
    assert seen[-1] == (3, 3, "planned")


async def test_a_dead_run_engine_is_a_failed_run_with_an_actionable_error(
    counter_url: str, tmp_path: Path
) -> None:
    """The engine fails under a started run (not a tool: the code that calls the tools)."""
    service = fh.make_service(tmp_path, url=counter_url)

    class Dies:
        async def invoke(self, call: Any) -> Any:
            raise RuntimeError("the engine fell over")

    service.engine.invoker_factory = lambda pool: Dies()
    async with _client(service) as client:
        _, run_id = await fh.plan_approve_run(client, goal=["indexed(d1)"])
        status = await fh.poll(client, run_id)
        report = await fh.call(client, "get_run_report", {"run_id": run_id})
    assert status["state"] == "failed"
    assert status["error"] == "internal error: RuntimeError: the engine fell over"
    assert report["report"]["state"] == "failed"
    assert "- Reason: internal error: RuntimeError: the engine fell over" in report["markdown"]


async def test_a_run_engine_that_dies_before_the_run_starts_answers_start_run_with_why(
    counter_url: str, tmp_path: Path
) -> None:
    """Nothing of the run is lost: started again once the engine is back, it runs."""
    service = fh.make_service(tmp_path, url=counter_url)
    engine = service.engine
    approve = engine.approve

    async def dies(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the engine fell over")

    async with _client(service) as client:
        plan = await fh.call(client, "make_plan", {"domain": "docs", "goal": ["indexed(d1)"]})
        await fh.call(client, "approve_plan", {"plan_hash": plan["plan_hash"]})
        engine.approve = dies
        text = await fh.error_text(client, "start_run", {"plan_hash": plan["plan_hash"]})
        engine.approve = approve
        run = await fh.call(client, "start_run", {"plan_hash": plan["plan_hash"]})
        status = await fh.poll(client, run["run_id"])
    assert f"run {plan['run_id']} could not start: the engine fell over" in text
    assert (run["run_id"], status["state"]) == (plan["run_id"], "succeeded")


async def test_start_run_runs_the_plan_make_plan_showed_even_when_its_files_change(
    counter_url: str, tmp_path: Path
) -> None:
    """Planned once: the run goes on with the plan shown and approved, whatever the
    domain and problem files say by the time it starts."""
    from plansmith.domains.folders import load_folders
    from plansmith.engine import Engine, make_plan
    from plansmith.mcp import FaceService

    planned: list[Any] = []

    def planner(problem: Any, **kwargs: Any) -> Any:
        planned.append(problem)
        return make_plan(problem, **kwargs)

    fh.write_domain(tmp_path / "domains", url=counter_url)
    engine = Engine(tmp_path / "home", planner=planner)
    service = FaceService.on(engine, load_folders([tmp_path / "domains"]))
    async with service:
        plan = await service.make_plan("docs", goal=["indexed(d1)"], owner="me")
        assert plan.plan_hash is not None
        assert plan.run_id is not None
        service.approve_plan(plan.plan_hash, owner="me")
        files = service.table.info(plan.run_id).inputs  # the files the run was made from
        problem, domain = Path(str(files["problem"])), Path(str(files["domain"]))
        problem.write_text(problem.read_text().replace("indexed(d1)", "indexed(d2)"))
        domain.write_text(domain.read_text().replace("tier: write", "tier: read"))
        run = await service.start_run(plan.plan_hash, owner="me")
        handle = service.table.handle(run.run_id)
        if handle is not None:
            await handle.done.wait()
        status = service.get_run_status(run.run_id, owner="me")
        report = service.get_run_report(run.run_id, owner="me")
    assert len(planned) == 1
    assert run.run_id == plan.run_id
    assert (status.state, status.plan_hash) == ("succeeded", plan.plan_hash)
    steps = [(s["action"], s["args"]) for s in report.report["steps"]]
    assert steps == [("summarise", ["d1"]), ("index", ["d1"])]


FAILING_INDEX = (
    "bindings:\n"
    + SUMMARISE_BINDING
    + binding("index", "fail", "{message: no index}")
    + binding("archive", "sleep", "{seconds: 600}")
)


def _rebind(service: Any, root: Path, bindings: str) -> None:
    """The docs folder's bindings are now ``bindings`` (the service reads the folder again)."""
    from plansmith.domains.folders import load_folders

    (root / "domains" / "docs" / "bindings.yaml").write_text(bindings)
    service.folders = load_folders([root / "domains"])


async def test_a_failed_run_whose_servers_still_close_has_its_error_in_the_status(
    counter_url: str, tmp_path: Path
) -> None:
    """The window between the log's RunFinished and the end of the run's task (its tool
    pool closing), held open: the status read in it says failed *and* why."""
    service = fh.make_service(tmp_path, url=counter_url)
    _rebind(service, tmp_path, FAILING_INDEX)  # the run fails: its index step's tool errs
    engine = service.engine
    opened = engine.pool_factory
    closing, release = anyio.Event(), anyio.Event()

    @contextlib.asynccontextmanager
    async def held(pool: Any) -> Any:
        async with pool:
            try:
                yield pool
            finally:  # the run failed in the body: RunFinished is written
                closing.set()
                await release.wait()  # the pool's close waits here

    async with service:
        plan = await service.make_plan("docs", goal=["indexed(d1)"], owner="me")
        service.approve_plan(plan.plan_hash, owner="me")
        # the run's pool, held (make_plan's binding used the engine's pool too)
        engine.pool_factory = lambda config, errlog: held(opened(config, errlog))
        run = await service.start_run(plan.plan_hash, owner="me")
        with anyio.fail_after(60):
            await closing.wait()
        during = service.get_run_status(run.run_id, owner="me")
        handle = service.table.handle(run.run_id)
        assert handle is not None
        assert not handle.done.is_set()  # still in the window
        release.set()
        with anyio.fail_after(60):
            await handle.done.wait()
        after = service.get_run_status(run.run_id, owner="me")
    assert during.state == after.state == "failed"
    assert during.error == after.error
    assert during.error is not None
    assert "no index" in during.error
    assert during.failures == after.failures == ("s2",)


async def test_the_report_counts_retries_and_names_the_failures(
    counter_url: str, tmp_path: Path
) -> None:
    service = fh.make_service(tmp_path, url=counter_url)
    flaky = (
        "  summarise:\n    server: counter\n    tool: flaky\n"
        '    arguments: {name: "${d}", fails: 1}\n    retries: 2\n'
        "  index:\n    server: counter\n    tool: fail\n    arguments: {message: no index}\n"
    )
    _rebind(service, tmp_path, "bindings:\n" + flaky)
    async with _client(service) as client:
        _, run_id = await fh.plan_approve_run(client, goal=["indexed(d1)"])
        status = await fh.poll(client, run_id)
        report = await fh.call(client, "get_run_report", {"run_id": run_id})
    data = report["report"]
    assert status["state"] == "failed"
    assert status["failures"] == ["s2"]
    assert data["retries"] == 1
    assert data["steps"][0]["attempts"] == 2
    assert data["failures"] == [{"step": "s2", "error": "tool_error: no index"}]
    assert "- s2: tool_error: no index" in report["markdown"]
    assert "retries: 1" in report["markdown"]


REPLAN_ACTIONS = action("copy", "summarised(d)", "copied(d)", "read") + action(
    "index_copy", "copied(d)", "indexed(d)", "write"
)

REPLAN_BINDINGS = (
    "bindings:\n"
    + SUMMARISE_BINDING
    + binding("index", "fail", '{message: "the index is down"}')
    + binding("copy", "work", '{name: "${summarise(d).done}copy"}', '{done: "$.structured.done"}')
    + binding("index_copy", "echo", '{x: "${copy(d).done}"}', '{value: "$.structured.value"}')
)


def _replan_domain(service: Any, root: Path) -> None:
    """``index`` fails (not retryable); ``copy`` then ``index_copy`` also reach indexed(d)."""
    folder = root / "domains" / "docs"
    text = (folder / "domain.yaml").read_text()
    text = text.replace(
        "  archived: [document]\n", "  archived: [document]\n  copied: [document]\n"
    )
    text = text.replace("tasks:\n", REPLAN_ACTIONS + "tasks:\n", 1)
    (folder / "domain.yaml").write_text(text)
    _rebind(service, root, REPLAN_BINDINGS)


async def test_the_report_shows_the_failure_the_replan_and_the_new_steps(
    counter_url: str, tmp_path: Path
) -> None:
    service = fh.make_service(tmp_path, url=counter_url)
    _replan_domain(service, tmp_path)
    async with _client(service) as client:
        plan, run_id = await fh.plan_approve_run(client, goal=["indexed(d1)"])
        status = await fh.poll(client, run_id)
        report = await fh.call(client, "get_run_report", {"run_id": run_id})
    data, markdown = report["report"], report["markdown"]
    assert [(s["id"], s["action"]) for s in plan["steps"]] == [("s1", "summarise"), ("s2", "index")]
    assert (status["state"], status["replans"], status["failures"]) == ("succeeded", 1, ["s2"])
    steps = {s["step"]: (s["action"], s["tool"], s["outcome"]) for s in data["steps"]}
    assert steps == {
        "s1": ("summarise", "work", "succeeded"),
        "s2": ("index", "fail", "failed"),
        "r1.s1": ("copy", "work", "succeeded"),
        "r1.s2": ("index_copy", "echo", "succeeded"),
    }
    assert data["failures"] == [{"step": "s2", "error": "tool_error: the index is down"}]
    assert len(data["replans"]) == 1
    assert data["replans"][0]["failed"] == ["s2"]
    assert data["replans"][0]["plan_hash"] not in ("", plan["plan_hash"])
    outputs = {o["from"]: o["value"] for o in data["outputs"]}
    assert outputs == {"s1.done": "d1!", "r1.s1.done": "d1!copy!", "r1.s2.value": "d1!copy!"}
    assert data["servers"] == {"counter": 4}
    assert "| s2 | index(d1) | fail | counter |" in markdown
    assert "| failed |" in markdown
    assert "| r1.s2 | index_copy(d1) | echo | counter |" in markdown
    assert "- s2: tool_error: the index is down" in markdown
    assert "retries: 0; replans: 1" in markdown
    assert f"  - replan after s2: {data['replans'][0]['reason']}" in markdown
    assert '- `r1.s1.done` = "d1!copy!"' in markdown
    assert '- `r1.s2.value` = "d1!copy!"' in markdown
    new_steps = ["r1.s1 copy(d1)", "r1.s2 index_copy(d1)"]
    assert data["replans"][0]["new_steps"] == new_steps
    assert f"    new plan `{data['replans'][0]['plan_hash']}`: {'; '.join(new_steps)}" in markdown


def _ends(service: Any, run_id: str) -> list[tuple[str, str, str | None]]:
    from plansmith.execution import RunCancelled, RunFinished

    return [
        (type(e).__name__, getattr(e, "state", ""), e.reason)
        for e in service.engine.log.events(run_id)
        if isinstance(e, RunCancelled | RunFinished)
    ]


async def test_the_face_cancels_its_runs_when_the_client_leaves(
    counter_url: str, tmp_path: Path
) -> None:
    from mcp import Client

    from plansmith.mcp import build_face_server

    service = fh.make_service(tmp_path, url=counter_url)
    async with Client(build_face_server(service, env={})) as client:  # enters the service
        _, run_id = await fh.plan_approve_run(client, goal=["archived(d1)"])  # sleeps 600 s
        feed = service.table.feed(run_id)
        while not feed.finished and "archive" not in {
            feed.view.steps[s].action for s in feed.view.in_flight
        }:
            await feed.wait()
    status = service.get_run_status(run_id, owner="local")
    ends = _ends(service, run_id)
    assert (status.state, status.error) == ("cancelled", "cancelled: the MCP server shut down")
    assert [(name, state) for name, state, _ in ends] == [
        ("RunCancelled", ""), ("RunFinished", "cancelled")
    ]  # fmt: skip
    assert {reason for _, _, reason in ends} == {"the MCP server shut down"}  # by the runner
    steps = service.get_run_report(run_id, owner="local").report["steps"]
    outcomes = {s["action"]: s["outcome"] for s in steps}
    assert outcomes["archive"] == "cancelled"  # sleeping when the face shut down


async def test_a_run_still_starting_is_recorded_cancelled_with_the_shutdown_reason(
    tmp_path: Path,
) -> None:
    """Its tool server never comes up (the counter server waits at a start gate): the
    service shuts down, the run is recorded cancelled, and its start_run answers."""
    service = fh.make_service(tmp_path)  # the stdio counter server
    gate, starts = tmp_path / "gate", tmp_path / "starts"  # the gate file is never made
    env = {"COUNTER_START_GATE": str(gate), "COUNTER_GATE_FROM": "3", "COUNTER_STARTS": str(starts)}
    (tmp_path / "domains" / "docs" / "servers.json").write_text(servers_json(env=env))
    engine = service.engine
    opened = engine.pool_factory
    starting = anyio.Event()

    @contextlib.asynccontextmanager
    async def seen(config: Any, errlog: Any) -> Any:
        async with opened(config, errlog) as pool:
            starting.set()  # its servers start now
            yield pool

    answered: list[Any] = []

    async def start(plan_hash: str) -> None:
        answered.append(await service.start_run(plan_hash))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg, service:  # the service exits first
            plan = await service.make_plan("docs", goal=["summarised(d1)"])  # start 1
            held = await service.make_plan("docs", goal=["summarised(d2)"])  # start 2
            engine.pool_factory = seen
            tg.start_soon(start, plan.plan_hash)  # start 3 waits at the gate
            await starting.wait()
    assert [(a.run_id, a.state) for a in answered] == [(plan.run_id, "cancelled")]
    assert _ends(service, plan.run_id) == [
        ("RunCancelled", "", "the MCP server shut down"),
        ("RunFinished", "cancelled", "the MCP server shut down"),
    ]
    status = service.get_run_status(plan.run_id)
    assert (status.state, status.error) == ("cancelled", "cancelled: the MCP server shut down")
    assert service.get_run_report(plan.run_id).report["reason"] == "the MCP server shut down"
    # a run made and held is not driven: the shutdown leaves it to be started later
    assert service.get_run_status(held.run_id).state == "awaiting approval"
    assert _ends(service, held.run_id) == []
