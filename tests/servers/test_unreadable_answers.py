"""What a server writes that the SDK cannot read, or that JSON cannot hold, over stdio:
an answer nested too deep fails its one call (a protocol_error, at once: no hang), NaN
and the infinities arrive as null, and a string that cannot be sent never reaches the
transport (the server, and the calls in flight on it, go on)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import _server_helpers as sh
import anyio
import pytest
from mcp.shared.message import SessionMessage
from mcp.types import (
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)
from mcp_types import jsonrpc_message_adapter

sys.path.insert(0, str(Path(__file__).parent.parent / "execution"))
import _exec_helpers as h

from plansmith.binding import ToolCatalog, ToolSpec, bind
from plansmith.errors import ToolCallError
from plansmith.execution import (
    MemoryRunLog,
    Runner,
    StepFailed,
    StepStarted,
    StepSucceeded,
    ToolResult,
)
from plansmith.execution._event_fast import event_json
from plansmith.model import Step
from plansmith.servers import McpInvoker, ServerPool, StdioServer
from plansmith.servers._unreadable import _InFlight, answered, response_id

pytestmark = pytest.mark.anyio

RAW = Path(__file__).parent / "_servers" / "raw_server.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def raw(name: str = "raw") -> StdioServer:
    return StdioServer(name, sys.executable, (str(RAW),))


async def test_an_answer_nested_too_deep_to_read_fails_its_call_at_once(tmp_path: Path) -> None:
    with (tmp_path / "err.log").open("w") as errlog:
        async with ServerPool(sh.servers(raw()), errlog=errlog, mode="legacy") as pool:
            with anyio.fail_after(30):
                await pool.start()
            with anyio.fail_after(10), pytest.raises(ToolCallError) as failed:
                await pool.call("raw", "deep", {"depth": 300})
            assert failed.value.error_class == "protocol_error"
            assert "the server's answer could not be read" in failed.value.message
            assert "recursion limit exceeded" in failed.value.message
            # the same session goes on: the server was not restarted
            with anyio.fail_after(10):
                result = await pool.call("raw", "echo", {"x": 1})
            assert result.structured == {"got": {"x": 1}}
            assert pool._conns["raw"].generation == 1


async def _call_raw(tmp_path: Path, tool: str) -> ToolResult:
    """``tool`` of a freshly started raw server, called once without arguments."""
    with (tmp_path / "err.log").open("w") as errlog:
        async with ServerPool(sh.servers(raw()), errlog=errlog, mode="legacy") as pool:
            with anyio.fail_after(30):
                await pool.start()
                return await pool.call("raw", tool, {})


async def test_a_stray_line_before_an_answer_is_dropped_and_the_call_gets_its_answer(
    tmp_path: Path,
) -> None:
    result = await _call_raw(tmp_path, "banner")
    assert result.structured == {"v": "after"}


async def test_nan_and_the_infinities_in_structured_content_arrive_as_null(
    tmp_path: Path,
) -> None:
    result = await _call_raw(tmp_path, "nan")
    assert result.structured == {"v": None, "w": None, "x": None, "list": [1.5, None], "ok": 2.5}


async def test_a_structured_nan_is_recorded_and_sent_on_as_null(tmp_path: Path) -> None:
    bindings = """\
bindings:
  work:
    server: raw
    tool: nan
    arguments: {}
    outputs: {v: "$.structured.v", list: "$.structured.list"}
  finish:
    server: raw
    tool: echo
    arguments: {v: "${work(x).v}", list: "${work(x).list}", t: "v=${work(x).v}"}
    outputs: {got: "$.structured.got"}
"""
    plan = h.plan([Step("s0", "work", ("i0",)), Step("s1", "finish", ("i0",), after=("s0",))])
    with (tmp_path / "err.log").open("w") as errlog:
        async with ServerPool(sh.servers(raw()), errlog=errlog, mode="legacy") as pool:
            with anyio.fail_after(30):
                catalog = await pool.start()
                bound = bind(plan, h.domain(), h.bindings(bindings), catalog, env={})
                log, state = h.start_run(bound, MemoryRunLog())
                outcome = await Runner(McpInvoker(pool), log, state).run()
    assert outcome.state == "succeeded", outcome.reason
    for event in log.events("run-1"):  # each line JSON, as a strict reader takes it
        json.loads(event_json(event), parse_constant=not_json)
    assert outcome.outputs["s0"] == {"v": None, "list": [1.5, None]}
    assert outcome.outputs["s1"] == {"got": {"v": None, "list": [1.5, None], "t": "v=null"}}


def not_json(name: str) -> object:
    raise AssertionError(f"{name} in an event's JSON")


def test_the_id_of_an_unreadable_response_is_found_at_any_depth() -> None:
    deep = '{"k":' * 10_000 + "1" + "}" * 10_000
    assert response_id(f'{{"jsonrpc":"2.0","id":7,"result":{deep}}}') == 7
    assert response_id('{"result":{"id":99,"v":[{"id":3}]},"id":"a\\"b"}') == 'a"b'
    assert response_id('{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"x"}') == 5


@pytest.mark.parametrize(
    "line",
    [
        "a banner line",
        'INFO {"id": 3}',
        '[{"jsonrpc":"2.0","id":1,"result":{}}]',
        '{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{}}',
        '{"method":"x","id":4}',
        '{"jsonrpc":"2.0","id":null,"error":{}}',
        '{"jsonrpc":"2.0","id":{"a":1},"result":{}}',
        '{"jsonrpc":"2.0","result":{"id":3}}',
    ],
)
def test_a_line_that_answers_no_request_of_ours_gives_no_id(line: str) -> None:
    assert response_id(line) is None


COUNTER_TEXT = (
    h.JSON_TEXT_BINDINGS
    + """\
  alt:
    server: counter
    tool: sleep
    arguments: {seconds: 0.5}
"""
)


async def test_a_lone_surrogate_fails_only_its_step_and_the_server_goes_on(
    tmp_path: Path,
) -> None:
    # s0 sleeps on the server while s2's arguments, read by s1 from its JSON text, hold a
    # lone surrogate: s2 fails before its call; s0, and the server, are not disturbed
    plan = h.plan(
        [
            Step("s0", "alt", ("i0",)),
            Step("s1", "work", ("a\\ud800b",)),
            Step("s2", "finish", ("a\\ud800b",), after=("s1",)),
        ]
    )
    catalog = ToolCatalog(
        (
            (
                "counter",
                tuple(ToolSpec(t, {"type": "object"}) for t in ("echo_text", "echo", "sleep")),
            ),
        )
    )
    bound = bind(plan, h.domain(), h.bindings(COUNTER_TEXT), catalog, env={})
    with (tmp_path / "err.log").open("w") as errlog:
        async with ServerPool(sh.servers(sh.stdio()), errlog=errlog) as pool:
            with anyio.fail_after(30):
                await pool.start()
                log, state = h.start_run(bound, MemoryRunLog())
                await Runner(McpInvoker(pool), log, state).run()
                after = await pool.call("counter", "echo", {"x": "still here"})
            assert pool._conns["counter"].generation == 1  # never restarted
    events = list(log.events("run-1"))
    assert {e.step for e in events if isinstance(e, StepSucceeded)} == {"s0", "s1"}
    (failed,) = [e for e in events if isinstance(e, StepFailed)]
    assert (failed.step, failed.error_class, failed.attempt) == ("s2", "protocol_error", 1)
    assert [e.step for e in events if isinstance(e, StepStarted)].count("s2") == 1
    assert after.structured == {"value": "still here"}


def sdk_parse_error(line: str) -> Exception:
    """The error the SDK's stdio transport hands the session for ``line``."""
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as error:
        return error
    raise AssertionError(f"the SDK reads {line!r}")


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('{"jsonrpc":"2.0","id":3,"result":' + '{"k":' * 300 + "1" + "}" * 300 + "}", "recursion"),
        ('{"jsonrpc":"2.0","id":3,"result":{"s":"\\ud800"}}', "hex escape"),
        ('{"jsonrpc":"2.0","id":3,"result":"not an object"}', "not a JSON-RPC message"),
    ],
)
def test_an_unreadable_response_becomes_a_parse_error_for_its_request(line: str, said: str) -> None:
    answer = answered(sdk_parse_error(line))
    assert isinstance(answer, SessionMessage)
    error = answer.message
    assert isinstance(error, JSONRPCError)
    assert (error.id, error.error.code) == (3, PARSE_ERROR)
    assert error.error.message.startswith("the server's answer could not be read: ")
    assert said in error.error.message


def test_an_unreadable_line_that_answers_no_request_is_passed_on_as_it_is() -> None:
    for line in (
        "a banner",
        '{"jsonrpc":"2.0","method":"x","params":' + "[" * 300 + "]" * 300 + "}",
    ):
        error = sdk_parse_error(line)
        assert answered(error) is error
    other = RuntimeError("not a parser's error")
    assert answered(other) is other


async def test_an_error_naming_no_request_fails_the_one_call_in_flight(tmp_path: Path) -> None:
    with (tmp_path / "err.log").open("w") as errlog:
        async with ServerPool(sh.servers(raw()), errlog=errlog, mode="legacy") as pool:
            with anyio.fail_after(30):
                await pool.start()
            with anyio.fail_after(10), pytest.raises(ToolCallError) as failed:
                await pool.call("raw", "garbled", {})  # no timeout of its own: it hung
            assert failed.value.error_class == "protocol_error"
            assert "the server answered a request it could not read" in failed.value.message
            assert "Parse error: unexpected byte 0xff" in failed.value.message
            with anyio.fail_after(10):  # the session goes on
                result = await pool.call("raw", "echo", {"x": 1})
            assert result.structured == {"got": {"x": 1}}


def _request(request_id: int) -> SessionMessage:
    return SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/call"))


def _no_id_error() -> SessionMessage:
    error = ErrorData(code=-32600, message="Invalid Request")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error))


def test_an_error_naming_no_request_is_left_alone_unless_one_request_is_in_flight() -> None:
    in_flight = _InFlight()
    dropped = _no_id_error()
    assert in_flight.received(dropped) is dropped  # none in flight
    in_flight.sent(_request(1))
    in_flight.sent(_request(2))
    assert in_flight.received(dropped) is dropped  # two: whose is it?
    answer = JSONRPCResponse(jsonrpc="2.0", id=1, result={})
    in_flight.received(SessionMessage(answer))
    cancel = JSONRPCNotification(
        jsonrpc="2.0", method="notifications/cancelled", params={"requestId": 2}
    )
    in_flight.sent(SessionMessage(cancel))
    assert in_flight.received(dropped) is dropped  # 1 answered, 2 cancelled: none
    in_flight.sent(_request(3))
    given = in_flight.received(dropped)
    assert isinstance(given.message, JSONRPCError)
    assert given.message.id == 3
    assert given.message.error.code == -32600
    assert "Invalid Request" in given.message.error.message


async def test_an_answer_that_is_not_utf8_fails_its_call_and_no_other(tmp_path: Path) -> None:
    # ``hold`` is in flight (its progress says the server has it) when ``bad_utf8``'s
    # answer holds the byte 0xff; the server answers ``hold`` right after that line
    arrived = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        arrived.set()

    held: list[ToolResult] = []

    async def hold() -> None:
        held.append(await pool.call("raw", "hold", {"n": 1}, on_progress=on_progress))

    with (tmp_path / "err.log").open("w") as errlog:
        async with ServerPool(sh.servers(raw()), errlog=errlog, mode="legacy") as pool:
            with anyio.fail_after(30):
                await pool.start()
            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(hold)
                    await arrived.wait()
                    with pytest.raises(ToolCallError) as failed:
                        await pool.call("raw", "bad_utf8", {})
            assert failed.value.error_class == "protocol_error"
            assert "server 'raw'" in failed.value.message
            assert "not valid UTF-8 (byte 0xff at character" in failed.value.message, (
                failed.value.message
            )
            assert [r.structured for r in held] == [{"got": {"n": 1}}]
            with anyio.fail_after(10):  # the same session goes on
                result = await pool.call("raw", "echo", {"x": 1})
            assert result.structured == {"got": {"x": 1}}
            assert pool._conns["raw"].generation == 1
