"""Ask steps on the web: a run whose ask step finds no one to ask waits (``awaiting
answer``); its JSON, the runs list and its page show the question, the page draws a form
from the answer's schema, and ``POST /api/runs/{id}/answers`` records the answer (who
gave it: ``web:`` and the client's address) and goes on with the run in the background.
An answer the schema refuses is a 422 with the schema's reason, and the run keeps
waiting. The counter test server logs each call of ``work``: the branch the answer takes
is seen there (``redact-doc1`` only for ``redact``).

The browser tests drive Debian's headless chromium (Playwright, no browser download);
their screenshots go to tests/web/artifacts/ (gitignored).
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _browser import ARTIFACTS, browser_context, browser_page, needs_chromium
from _web_helpers import ServerThread, asgi_client, sse_events

from _ask_domain import work_calls, write_ask_inputs
from plansmith.engine import Engine, RunInputs
from plansmith.execution import AnswerRecorded, AwaitingAnswer, RunOutcome
from plansmith.web import WebSettings, create_app

__all__ = ["browser_context", "browser_page"]  # fixtures, used by name

QUESTION = "The summary of doc1 is summarise-doc1!: publish it as it is, or redact it first?"
ENUM = {"type": "enum", "choices": ["as_is", "redact"], "default": "as_is"}
#: the review domain's ask with other answers: a number of stars (passed on to ``index``),
#: yes or no (yes: redact first), a text (passed on to ``index``); and their questions
STARS = """\
    answer: {type: number, minimum: 1, maximum: 5, integer: true, default: 3}
    precondition: [summarised(d), not reviewed(d), not redaction_wanted(d)]
    effect: [reviewed(d)]
"""
YES_NO = """\
    answer: {type: boolean, default: false}
    precondition: [summarised(d), not reviewed(d), not redaction_wanted(d)]
    answers:
      false: [reviewed(d)]
      true: [redaction_wanted(d)]
"""
TEXT = """\
    answer: {type: string, min_length: 3, max_length: 20, pattern: "[a-z]+"}
    precondition: [summarised(d), not reviewed(d), not redaction_wanted(d)]
    effect: [reviewed(d)]
"""
_ENUM_BLOCK_END = "      redact: [redaction_wanted(d)]\n"


def _review_domains(
    root: Path, *, name: str = "review", answer: str = "", question: str = ""
) -> tuple[Path, Path]:
    """``root/domains/NAME``: the ask domain of ``_ask_domain``, its answer schema and
    effects ``answer`` (STARS, YES_NO, TEXT; none: its enum) and its question
    ``question`` when given; the domains folder, and the file of the counter server's
    calls."""
    folder = root / "domains" / name
    folder.mkdir(parents=True)
    _, calls = write_ask_inputs(folder)
    if answer:
        domain = (folder / "domain.yaml").read_text()
        start = domain.index("    answer: {type: enum")
        end = domain.index(_ENUM_BLOCK_END) + len(_ENUM_BLOCK_END)
        (folder / "domain.yaml").write_text(domain[:start] + answer + domain[end:])
    if question:
        bindings = (folder / "bindings.yaml").read_text()
        (folder / "bindings.yaml").write_text(
            bindings.replace("publish it as it is, or redact it first?", question)
        )
    return folder.parent, calls


def _inputs(folder: Path) -> RunInputs:
    return RunInputs(
        folder / "domain.yaml",
        folder / "problem.yaml",
        folder / "servers.json",
        folder / "bindings.yaml",
    )


# -- the API (ASGI transport, no socket) --------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def app_and_calls(tmp_path: Path) -> AsyncIterator[tuple[Any, Path]]:
    root, calls = _review_domains(tmp_path)
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    yield app, calls
    await app.state.controller.aclose()


async def _awaiting_answer(client: httpx.AsyncClient, app: Any) -> dict[str, Any]:
    """Create a run of the review problem, approve it, and wait until its engine stopped
    at the question (its task in the run table is done); the run's JSON."""
    made = await client.post("/api/runs", json={"domain": "review", "problem": "problem"})
    assert made.status_code == 201, made.text
    run = made.json()
    approved = await client.post(
        f"/api/runs/{run['run_id']}/approve", json={"plan_hash": run["plan_hash"]}
    )
    assert approved.status_code == 202, approved.text
    handle = app.state.controller.table.handle(run["run_id"])
    if handle is not None:
        with anyio.fail_after(60):
            await handle.done.wait()
    detail = await client.get(f"/api/runs/{run['run_id']}")
    return dict(detail.json())


async def _to_the_end(client: httpx.AsyncClient, run_id: str) -> list[dict[str, Any]]:
    """The run's SSE stream, read to its end (``RunFinished``): each event's type and JSON."""
    with anyio.fail_after(60):
        response = await client.get(f"/api/runs/{run_id}/events")
    assert response.status_code == 200
    return [{"type": e["event"], **json.loads(e["data"])} for e in sse_events(response.text)]


@pytest.mark.anyio
async def test_a_web_answer_is_recorded_with_who_gave_it_and_the_run_takes_its_branch(
    app_and_calls: tuple[Any, Path],
) -> None:
    app, calls = app_and_calls
    async with asgi_client(app) as client:
        run = await _awaiting_answer(client, app)
        run_id = run["run_id"]
        assert run["status"] == "awaiting answer"
        assert [(a["step"], a["action"]) for a in run["awaiting_answer"]] == [("s2", "review")]
        waiting = run["awaiting_answer"][0]
        assert waiting["question"] == QUESTION  # rendered, with the summary's output
        assert waiting["answer"] == ENUM
        assert waiting["assumed"] == "as_is"
        assert waiting["since"]
        assert work_calls(calls) == ["summarise-doc1"]  # nothing after the question ran
        listed = (await client.get("/api/runs")).json()
        assert [(r["run_id"], r["status"]) for r in listed] == [(run_id, "awaiting answer")]
        page = await client.get(f"/runs/{run_id}")
        assert 'id="questions"' in page.text

        answered = await client.post(
            f"/api/runs/{run_id}/answers", json={"step": "s2", "answer": "redact"}
        )
        assert answered.status_code == 202, answered.text
        assert answered.json() == {"run_id": run_id, "status": "running"}
        events = await _to_the_end(client, run_id)

        types = [e["type"] for e in events]
        assert types.index("AwaitingAnswer") < types.index("AnswerRecorded")
        asked = events[types.index("AwaitingAnswer")]
        assert (asked["step"], asked["question"], asked["answer"]) == ("s2", QUESTION, ENUM)
        recorded = events[types.index("AnswerRecorded")]
        assert (recorded["step"], recorded["answer"]) == ("s2", "redact")
        assert recorded["by"] == "web:127.0.0.1"
        assert events[-1]["type"] == "RunFinished"
        assert events[-1]["state"] == "succeeded", events[-1]
        # the answer's branch: redact, then index with the answer; summarise not again
        assert work_calls(calls) == ["summarise-doc1", "redact-doc1", "index-doc1-redact"]
        done = (await client.get(f"/api/runs/{run_id}")).json()
        assert (done["status"], done["awaiting_answer"]) == ("succeeded", [])
        listed = (await client.get("/api/runs")).json()
        assert listed[0]["status"] == "succeeded"


@pytest.mark.anyio
async def test_an_answer_outside_the_schema_is_a_422_with_its_reason_and_the_run_keeps_waiting(
    app_and_calls: tuple[Any, Path],
) -> None:
    app, calls = app_and_calls
    async with asgi_client(app) as client:
        run_id = (await _awaiting_answer(client, app))["run_id"]
        url = f"/api/runs/{run_id}/answers"
        refused = await client.post(url, json={"step": "s2", "answer": "shred"})
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert error["type"] == "AnswerError"
        assert "'shred' is not one of the choices" in error["message"]
        assert error["hint"] == "answer one of: as_is, redact"
        assert error["location"] == "argument answer"
        assert set(error) == {"type", "message", "location", "hint", "details"}
        for body in ({"step": "s2", "answer": 3}, {"step": "s2", "answer": None}):
            response = await client.post(url, json=body)
            assert response.status_code == 422, response.text
            assert response.json()["error"]["type"] == "AnswerError"
        missing = await client.post(url, json={"step": "s2"})  # no answer at all
        assert missing.status_code == 422
        assert missing.json()["error"]["type"] == "RequestValidationError"

        # a step that waits for no answer, a run there is not: 409, 404
        not_waiting = await client.post(url, json={"step": "s1", "answer": "redact"})
        assert not_waiting.status_code == 409, not_waiting.text
        error = not_waiting.json()["error"]
        assert error["type"] == "ExecutionError"
        assert "does not wait for an answer" in error["message"]
        assert error["hint"] == f"the steps of run {run_id} that wait for one: s2"
        unknown = await client.post(
            "/api/runs/r-000000000000/answers", json={"step": "s2", "answer": "redact"}
        )
        assert unknown.status_code == 404
        assert unknown.json()["error"]["type"] == "RunNotFoundError"

        # nothing was recorded: the run still waits, nothing more ran
        run = (await client.get(f"/api/runs/{run_id}")).json()
        assert run["status"] == "awaiting answer"
        assert [a["step"] for a in run["awaiting_answer"]] == ["s2"]
        logged = list(app.state.controller.engine.log.events(run_id))
        assert not [e for e in logged if isinstance(e, AnswerRecorded)]
        assert work_calls(calls) == ["summarise-doc1"]

        # and it takes a good answer all the same
        answered = await client.post(url, json={"step": "s2", "answer": "as_is"})
        assert answered.status_code == 202, answered.text
        events = await _to_the_end(client, run_id)
        assert events[-1]["state"] == "succeeded", events[-1]
        assert work_calls(calls) == ["summarise-doc1", "index-doc1-as_is"]
        again = await client.post(url, json={"step": "s2", "answer": "redact"})
        assert again.status_code == 409  # finished: it waits for no answer
        assert "has finished (succeeded)" in again.json()["error"]["message"]


@pytest.mark.anyio
async def test_an_answer_given_as_the_question_comes_waits_for_its_engine_to_stop(
    app_and_calls: tuple[Any, Path],
) -> None:
    """The page answers as soon as it sees ``AwaitingAnswer``, while the engine that
    asked may still be returning: the answer waits for it, then goes on with the run."""
    app, calls = app_and_calls
    async with asgi_client(app) as client:
        made = await client.post("/api/runs", json={"domain": "review", "problem": "problem"})
        run = made.json()
        feed = app.state.controller.feed(run["run_id"])
        approved = await client.post(
            f"/api/runs/{run['run_id']}/approve", json={"plan_hash": run["plan_hash"]}
        )
        assert approved.status_code == 202
        with anyio.fail_after(60):
            while not any(isinstance(e, AwaitingAnswer) for e in feed.events):
                await feed.wait()
        answered = await client.post(
            f"/api/runs/{run['run_id']}/answers", json={"step": "s2", "answer": "redact"}
        )
        assert answered.status_code == 202, answered.text
        events = await _to_the_end(client, run["run_id"])
        assert events[-1]["state"] == "succeeded", events[-1]
        assert work_calls(calls) == ["summarise-doc1", "redact-doc1", "index-doc1-redact"]


@pytest.mark.anyio
async def test_of_two_answers_sent_at_once_one_is_taken_and_the_other_a_409(
    app_and_calls: tuple[Any, Path],
) -> None:
    app, calls = app_and_calls
    async with asgi_client(app) as client:
        run_id = (await _awaiting_answer(client, app))["run_id"]
        codes: list[int] = []

        async def send(value: str) -> None:
            response = await client.post(
                f"/api/runs/{run_id}/answers", json={"step": "s2", "answer": value}
            )
            codes.append(response.status_code)

        async with anyio.create_task_group() as tg:
            tg.start_soon(send, "redact")
            tg.start_soon(send, "as_is")
        assert sorted(codes) == [202, 409]
        events = await _to_the_end(client, run_id)
        assert events[-1]["state"] == "succeeded", events[-1]
        assert [e["answer"] for e in events if e["type"] == "AnswerRecorded"] in (
            ["redact"],
            ["as_is"],
        )
        assert work_calls(calls)[-1] in ("index-doc1-redact", "index-doc1-as_is")


@pytest.mark.anyio
async def test_a_run_cancelled_while_it_waits_asks_no_more(
    app_and_calls: tuple[Any, Path],
) -> None:
    app, calls = app_and_calls
    async with asgi_client(app) as client:
        run_id = (await _awaiting_answer(client, app))["run_id"]
        cancelled = await client.post(f"/api/runs/{run_id}/cancel", json={})
        assert cancelled.status_code == 202, cancelled.text
        run = (await client.get(f"/api/runs/{run_id}")).json()
        assert (run["status"], run["awaiting_answer"]) == ("cancelled", [])
        refused = await client.post(
            f"/api/runs/{run_id}/answers", json={"step": "s2", "answer": "redact"}
        )
        assert refused.status_code == 409
        assert work_calls(calls) == ["summarise-doc1"]


# -- the live stream, over a socket ---------------------------------------------------------


def _sse_lines(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """The events of a live SSE response as they come: type and JSON."""
    kind, data = "", ""
    for line in response.iter_lines():
        if line.startswith("event: "):
            kind = line[len("event: ") :]
        elif line.startswith("data: "):
            data = line[len("data: ") :]
        elif not line and data:
            yield {"type": kind, **json.loads(data)}
            kind, data = "", ""


def test_the_live_stream_carries_the_question_then_the_answer_then_the_end(
    tmp_path: Path,
) -> None:
    root, calls = _review_domains(tmp_path)
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server:
        made = httpx.post(
            server.url + "/api/runs", json={"domain": "review", "problem": "problem"}, timeout=60
        )
        run = made.json()
        url = f"{server.url}/api/runs/{run['run_id']}"
        seen: list[str] = []
        with httpx.stream("GET", url + "/events", timeout=60) as stream:
            approved = httpx.post(
                url + "/approve", json={"plan_hash": run["plan_hash"]}, timeout=60
            )
            assert approved.status_code == 202, approved.text
            for event in _sse_lines(stream):
                seen.append(event["type"])
                if event["type"] == "AwaitingAnswer":  # the question, live: answer it
                    assert event["answer"] == ENUM
                    answered = httpx.post(  # it waits for the engine that asked to stop
                        url + "/answers",
                        json={"step": event["step"], "answer": "redact"},
                        timeout=60,
                    )
                    assert answered.status_code == 202, answered.text
                if event["type"] == "AnswerRecorded":
                    assert (event["answer"], event["by"]) == ("redact", "web:127.0.0.1")
                if event["type"] == "RunFinished":
                    assert event["state"] == "succeeded", event
    assert seen.index("AwaitingAnswer") < seen.index("AnswerRecorded") < seen.index("RunFinished")
    assert seen[-1] == "RunFinished"
    assert work_calls(calls) == ["summarise-doc1", "redact-doc1", "index-doc1-redact"]


# -- the run page, in Debian's headless chromium ----------------------------------------


@needs_chromium
@pytest.mark.e2e
def test_the_run_page_asks_the_question_live_and_its_form_answers_it(
    tmp_path: Path, browser_page: Any
) -> None:
    """The page is open while the run reaches its ask step: the form comes by SSE, the
    person picks ``redact`` and submits, and the page follows the run to its end."""
    page = browser_page
    root, calls = _review_domains(tmp_path)
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server:
        made = httpx.post(
            server.url + "/api/runs", json={"domain": "review", "problem": "problem"}, timeout=60
        )
        run = made.json()
        page.goto(f"{server.url}/runs/{run['run_id']}")
        page.wait_for_function(
            "() => document.getElementById('status-line').textContent === 'live'", timeout=30_000
        )
        assert page.locator("body").get_attribute("data-status") == "awaiting approval"
        approved = httpx.post(
            f"{server.url}/api/runs/{run['run_id']}/approve",
            json={"plan_hash": run["plan_hash"]},
            timeout=30,
        )
        assert approved.status_code == 202, approved.text

        form = page.locator("form.answer[data-step='s2']")
        form.wait_for(timeout=60_000)  # drawn from the AwaitingAnswer event
        page.wait_for_selector("body[data-status='awaiting answer']", timeout=30_000)
        assert page.locator("#state").inner_text() == "awaiting answer"
        assert QUESTION in form.inner_text()
        assert "one of: as_is, redact" in form.inner_text()
        assert form.get_by_label("as_is").is_checked()  # the declared default, preset
        assert "asking" in (page.locator("svg [data-step='s2']").get_attribute("class") or "")
        page.screenshot(path=str(ARTIFACTS / "run-awaiting-answer.png"))

        form.get_by_label("redact").check()
        form.get_by_role("button", name="Answer").click()
        page.wait_for_selector("body[data-status='succeeded']", timeout=60_000)
        assert page.locator("form.answer").count() == 0
        assert page.locator("#questions").is_hidden()
        # the replanned branch, drawn: redact ran; the index of the first plan was dropped
        page.wait_for_function(
            "() => { const g = [...document.querySelectorAll('svg [data-step]')];"
            " return g.some(n => n.textContent.includes('redact(doc1)')"
            "                    && n.dataset.state === 'succeeded')"
            " && g.every(n => ['succeeded', 'dropped'].includes(n.dataset.state)); }",
            timeout=30_000,
        )
        page.screenshot(path=str(ARTIFACTS / "run-answered.png"))
    assert work_calls(calls) == ["summarise-doc1", "redact-doc1", "index-doc1-redact"]
    assert (ARTIFACTS / "run-awaiting-answer.png").stat().st_size > 10_000


def _run_elsewhere(home: Path, inputs: RunInputs) -> RunOutcome:
    """An engine on ``home`` runs ``inputs`` (approved) to where it stops, in a thread of
    its own (this one runs the browser's event loop), and is closed."""
    outcomes: list[RunOutcome] = []

    def run() -> None:
        engine = Engine(home)
        try:
            outcomes.append(anyio.run(lambda: engine.run(inputs, approve=True)))
        finally:
            engine.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return outcomes[0]


@needs_chromium
@pytest.mark.e2e
def test_a_refused_number_shows_the_schemas_reason_and_a_good_one_runs_to_the_end(
    tmp_path: Path, browser_page: Any
) -> None:
    """A run that waited before the page was opened (an engine on the same home made
    it): its page shows the number form with its bounds; 9 is refused with the schema's
    reason, the run still waits; 4 goes on to the end."""
    page = browser_page
    root, calls = _review_domains(tmp_path, answer=STARS, question="how many stars?")
    outcome = _run_elsewhere(tmp_path / "home", _inputs(root / "review"))
    assert outcome.state == "awaiting answer"
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server:
        page.goto(server.url + "/runs")  # the runs list says it waits for an answer
        row = page.locator(f"tr[data-run='{outcome.run_id}']")
        row.wait_for(timeout=30_000)
        assert row.locator(".badge").inner_text() == "awaiting answer"
        page.goto(f"{server.url}/runs/{outcome.run_id}")
        form = page.locator("form.answer[data-step='s2']")
        form.wait_for(timeout=30_000)
        assert page.locator("body").get_attribute("data-status") == "awaiting answer"
        number = form.locator("input[type=number]")
        assert (number.get_attribute("min"), number.get_attribute("max")) == ("1", "5")
        assert number.input_value() == "3"  # the declared default
        assert "a whole number · >= 1 · <= 5" in form.inner_text()

        number.fill("9")
        form.get_by_role("button", name="Answer").click()
        page.wait_for_selector("body[data-answer-refused='s2']", timeout=30_000)
        error = form.locator(".answer-error")
        assert error.is_visible()
        assert "9 is above the maximum 5" in error.inner_text()  # the schema's reason
        assert page.locator("body").get_attribute("data-status") == "awaiting answer"
        page.screenshot(path=str(ARTIFACTS / "run-answer-refused.png"))

        number.fill("4")
        form.get_by_role("button", name="Answer").click()
        page.wait_for_selector("body[data-status='succeeded']", timeout=60_000)
        assert page.locator("form.answer").count() == 0
    assert work_calls(calls) == ["summarise-doc1", "index-doc1-4"]


@needs_chromium
@pytest.mark.e2e
def test_yes_no_and_text_answers_come_from_their_forms(tmp_path: Path, browser_page: Any) -> None:
    """A yes/no question (yes: redact first) and a text one (its limits shown, a text
    outside them refused with the schema's reason), each answered on its run's page."""
    page = browser_page
    root, yes_calls = _review_domains(tmp_path, name="yes-no", answer=YES_NO)
    _, text_calls = _review_domains(tmp_path, name="text", answer=TEXT, question="a tag?")
    home = tmp_path / "home"
    yes_no = _run_elsewhere(home, _inputs(root / "yes-no"))
    text = _run_elsewhere(home, _inputs(root / "text"))
    assert (yes_no.state, text.state) == ("awaiting answer", "awaiting answer")
    app = create_app(WebSettings(home=home, domains=root))
    with ServerThread(app) as server:
        page.goto(f"{server.url}/runs/{yes_no.run_id}")
        form = page.locator("form.answer[data-step='s2']")
        form.wait_for(timeout=30_000)
        assert form.get_by_label("no").is_checked()  # the declared default
        assert "yes or no" in form.inner_text()
        form.get_by_label("yes").check()
        page.screenshot(path=str(ARTIFACTS / "run-answer-yes-no.png"))
        form.get_by_role("button", name="Answer").click()
        page.wait_for_selector("body[data-status='succeeded']", timeout=60_000)

        page.goto(f"{server.url}/runs/{text.run_id}")
        form = page.locator("form.answer[data-step='s2']")
        form.wait_for(timeout=30_000)
        box = form.locator("input[type=text]")
        assert (box.get_attribute("minlength"), box.get_attribute("maxlength")) == ("3", "20")
        assert "at least 3 characters · at most 20 characters" in form.inner_text()
        box.fill("ok")
        form.get_by_role("button", name="Answer").click()
        page.wait_for_selector("body[data-answer-refused='s2']", timeout=30_000)
        assert "shorter than 3 characters" in form.locator(".answer-error").inner_text()
        box.fill("public")
        form.get_by_role("button", name="Answer").click()
        page.wait_for_selector("body[data-status='succeeded']", timeout=60_000)
    assert work_calls(yes_calls)[:2] == ["summarise-doc1", "redact-doc1"]
    assert work_calls(text_calls) == ["summarise-doc1", "index-doc1-public"]
