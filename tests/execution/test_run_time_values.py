"""Values that reach a step at run time: a string that cannot be sent, JSON text that
cannot be read (too deep, NaN), an environment variable that is not set. Each fails the
one step it reaches, located and not retried, or reads as the documented null."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import _exec_helpers as h
import anyio
import pytest

from plansmith.binding import bind
from plansmith.execution import (
    FakeInvoker,
    Runner,
    StepFailed,
    StepRetrying,
    StepSucceeded,
    ToolCall,
    ToolResult,
    finite_json,
    parse_json_text,
)
from plansmith.model import Step

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


TEXT_BINDINGS = h.JSON_TEXT_BINDINGS


async def answer_text(call: ToolCall) -> ToolResult:
    if call.tool == "echo_text":
        return ToolResult(None, str(call.arguments["text"]))
    return ToolResult({"value": call.arguments.get("x")}, "")


def failures(events: Sequence[object]) -> dict[str, StepFailed]:
    return {e.step: e for e in events if isinstance(e, StepFailed)}


async def test_a_lone_surrogate_from_an_upstream_output_fails_the_step_that_would_send_it() -> None:
    # ``\ud800`` in the text is JSON's escape, which json.loads reads as a lone surrogate
    plan = h.plan(
        [
            Step("s0", "work", ("a\\ud800b",)),
            Step("s1", "finish", ("a\\ud800b",), after=("s0",)),
            Step("s2", "work", ("fine",)),
        ]
    )
    invoker = FakeInvoker(answer_text)
    log, state = h.start_run(h.bound(plan, TEXT_BINDINGS))
    with anyio.fail_after(10):
        outcome = await Runner(invoker, log, state).run()
    events = list(log.events("run-1"))
    failed = failures(events)
    assert list(failed) == ["s1"]
    assert failed["s1"].error_class == "protocol_error"
    assert failed["s1"].attempt == 1  # not retried, though its binding allows 3 retries
    message = failed["s1"].message
    assert message.startswith("step s1: the argument at arguments/x cannot be sent")
    assert "'a\\ud800b' holds a lone surrogate" in message
    assert "it came from ${work(x).done} (an output of an upstream step)" in message
    assert not [e for e in events if isinstance(e, StepRetrying)]
    assert [c.step for c in invoker.calls if c.tool == "echo"] == []  # never sent
    assert {e.step for e in events if isinstance(e, StepSucceeded)} == {"s0", "s2"}
    assert outcome.state == "failed"


#: an environment variable's value is a secret; this one's last byte is not UTF-8, which
#: ``os.environ`` reads as a lone surrogate
SECRET = "ZZSECRET"


@pytest.mark.parametrize(
    ("arguments", "where"),
    [
        ('{name: "${env.PS_TOKEN}"}', "arguments/name"),
        ('{name: "tok=${env.PS_TOKEN}"}', "arguments/name"),
        ('{name: a, extra: [1, {k: "Bearer ${env.PS_TOKEN}"}]}', "arguments/extra/1/k"),
    ],
    ids=["whole", "text-around", "nested"],
)
async def test_a_lone_surrogate_in_an_environment_variable_fails_its_step_without_its_value(
    arguments: str, where: str
) -> None:
    bindings = h.BINDINGS.replace('arguments: {name: "${x}"}', f"arguments: {arguments}")
    bound = bind(h.chain(1), h.domain(), h.bindings(bindings), h.CATALOG, env={"PS_TOKEN": "t"})
    invoker = FakeInvoker(h.work_ok)
    log, state = h.start_run(bound)
    with anyio.fail_after(10):
        outcome = await Runner(invoker, log, state, env={"PS_TOKEN": SECRET + "\udcff"}).run()
    events = list(log.events("run-1"))
    failed = failures(events)["s0"]
    assert failed.error_class == "protocol_error"
    assert failed.message == (
        f"step s0: the argument at {where} cannot be sent: the value of ${{env.PS_TOKEN}}"
        " holds a lone surrogate (bytes that are not UTF-8)"
    )
    assert outcome.state == "failed"
    assert outcome.reason is not None
    assert SECRET not in outcome.reason
    assert [e.seq for e in events if SECRET in json.dumps(e.to_dict())] == []
    assert invoker.calls == []


async def test_a_string_holding_an_environment_variable_is_not_shown_when_it_cannot_be_sent() -> (
    None
):
    # the surrogate is the upstream output's; the text around it is the variable's value
    arg = "a\\ud800b"  # JSON's escape, which json.loads reads as a lone surrogate
    plan = h.plan([Step("s0", "work", (arg,)), Step("s1", "finish", (arg,), after=("s0",))])
    bindings = TEXT_BINDINGS.replace('"${work(x).done}"', '"${env.PS_TOKEN}:${work(x).done}"')
    env = {"PS_TOKEN": SECRET}
    bound = bind(plan, h.domain(), h.bindings(bindings), h.CATALOG, env=env)
    log, state = h.start_run(bound)
    with anyio.fail_after(10):
        outcome = await Runner(FakeInvoker(answer_text), log, state, env=env).run()
    events = list(log.events("run-1"))
    message = failures(events)["s1"].message
    assert message == (
        "step s1: the argument at arguments/x cannot be sent: the string, which holds the"
        " value of ${env.PS_TOKEN} (not shown), holds a lone surrogate, which is not Unicode"
        " text (JSON-RPC is UTF-8); it came from ${work(x).done} (an output of an upstream"
        " step)"
    )
    assert outcome.reason is not None
    assert SECRET not in outcome.reason
    assert [e.seq for e in events if SECRET in json.dumps(e.to_dict())] == []


async def test_a_big_integer_from_an_upstream_output_is_sent_as_it_is() -> None:
    big = 123456789012345678901234567890  # past 64 bits: orjson refuses it, the SDK sends it
    plan = h.plan([Step("s0", "work", (str(big),)), Step("s1", "finish", (str(big),))])
    bindings = TEXT_BINDINGS.replace('\'{"done": "${x}"}\'', "'{\"done\": ${x}}'")
    invoker = FakeInvoker(answer_text)
    log, state = h.start_run(h.bound(plan, bindings))
    with anyio.fail_after(10):
        outcome = await Runner(invoker, log, state).run()
    assert outcome.state == "succeeded", outcome.reason
    assert [c.arguments for c in invoker.calls if c.tool == "echo"] == [{"x": big}]


async def test_json_text_nested_too_deep_to_parse_reads_as_null_and_fails_only_its_step() -> None:
    deep = '{"k":' * 100_000 + "1" + "}" * 100_000  # json.loads: RecursionError

    async def answer(call: ToolCall) -> ToolResult:
        return ToolResult(None, deep)

    bindings = TEXT_BINDINGS.replace("$.json.done", "$.json.k")
    log, state = h.start_run(h.bound(h.plan([Step("s0", "work", ("x",))]), bindings))
    with anyio.fail_after(10):
        outcome = await Runner(FakeInvoker(answer), log, state).run()
    assert outcome.state == "failed"
    failed = failures(list(log.events("run-1")))["s0"]
    assert failed.error_class == "extraction_error"
    assert "$.json.k matched nothing" in failed.message
    assert ToolResult(None, deep).document()["json"] is None


@pytest.mark.parametrize(
    "text",
    [
        '{"v": NaN}',
        '{"v": Infinity}',
        '{"v": -Infinity}',
        '{"v": 1e400}',  # past a float's range: json.loads gives inf
        '{"k":' * 5000 + "1" + "}" * 5000,
    ],
)
def test_text_that_is_not_json_we_read_gives_json_null(text: str) -> None:
    assert parse_json_text(text) is None
    assert ToolResult(None, text).document()["json"] is None


def test_json_text_keeps_its_values_as_json_loads_reads_them() -> None:
    text = '{"a": 1.5, "big": 123456789012345678901234567890, "s": "\\u00e9", "n": null}'
    assert parse_json_text(text) == json.loads(text)
    assert parse_json_text("[1e308, -0.0, 2]") == [1e308, -0.0, 2]


def test_finite_json_replaces_nan_and_infinities_with_null_and_copies_only_then() -> None:
    clean = {"a": [1.5, {"b": 2}], "c": "NaN"}
    assert finite_json(clean) is clean
    nan = math.nan
    value = {"v": nan, "w": [1.0, -math.inf, {"x": math.inf}], "ok": 2.5}
    assert finite_json(value) == {"v": None, "w": [1.0, None, {"x": None}], "ok": 2.5}
    assert value["v"] is nan  # the argument is left as it was


async def test_an_environment_variable_unset_where_the_run_goes_on_fails_its_step() -> None:
    bindings = h.BINDINGS.replace(
        'arguments: {name: "${x}"}', 'arguments: {name: "${env.PS_TOKEN}"}'
    )
    bound = bind(h.chain(1), h.domain(), h.bindings(bindings), h.CATALOG, env={"PS_TOKEN": "t"})
    invoker = FakeInvoker(h.work_ok)
    log, state = h.start_run(bound)
    with anyio.fail_after(10):  # resumed from a shell without it
        outcome = await Runner(invoker, log, state, env={}).run()
    assert outcome.state == "failed"
    events = list(log.events("run-1"))
    failed = failures(events)["s0"]
    assert failed.error_class == "extraction_error"
    assert failed.attempt == 1
    assert failed.message == (
        "step s0: ${env.PS_TOKEN}: environment variable PS_TOKEN is not set"
        " (export PS_TOKEN=... in the shell that runs or resumes the run)"
    )
    assert not [e for e in events if isinstance(e, StepRetrying)]  # retries: 2, none made
    assert invoker.calls == []


async def test_an_environment_variable_set_where_the_run_goes_on_is_sent() -> None:
    bindings = h.BINDINGS.replace(
        'arguments: {name: "${x}"}', 'arguments: {name: "${env.PS_TOKEN}"}'
    )
    bound = bind(h.chain(1), h.domain(), h.bindings(bindings), h.CATALOG, env={"PS_TOKEN": "t"})
    invoker = FakeInvoker(h.work_ok)
    log, state = h.start_run(bound)
    with anyio.fail_after(10):
        outcome = await Runner(invoker, log, state, env={"PS_TOKEN": ""}).run()
    assert outcome.state == "succeeded"
    assert [c.arguments for c in invoker.calls] == [{"name": ""}]  # set, though empty
