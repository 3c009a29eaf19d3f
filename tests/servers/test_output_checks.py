"""Tools' structured output against their output schemas, as the pool checks it: a
compiled validator first, the SDK's own validation whenever that one says no; the
requests the SDK would have driven itself (input rounds, stale headers, tools listed
after start) still go through the SDK's ``call_tool``."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import _server_helpers as sh
import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.types import CallToolResult, TextContent

from plansmith.binding import ToolSpec
from plansmith.errors import ToolCallError
from plansmith.servers import InProcessServer, ServerPool, StdioServer
from plansmith.servers._output_check import OutputChecks

pytestmark = pytest.mark.anyio

SCHEMA_SERVER = Path(__file__).parent / "_servers" / "schema_server.py"
RAW = Path(__file__).parent / "_servers" / "raw_server.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def schema_server() -> ModuleType:
    """The test server's module, its call counts cleared."""
    sys.path.insert(0, str(SCHEMA_SERVER.parent))
    module = importlib.import_module("schema_server")
    module.counts.clear()
    return module


def in_process(module: ModuleType) -> InProcessServer:
    return InProcessServer("schema", module.server)


def stdio() -> StdioServer:
    return StdioServer("schema", sys.executable, (str(SCHEMA_SERVER),))


async def call(config: Any, tool: str, args: dict[str, Any], tmp_path: Path) -> Any:
    """``tool``'s result, or its ``ToolCallError``, from a pool of ``config`` alone."""
    with (tmp_path / "err.log").open("w") as errlog:
        async with ServerPool(sh.servers(config), errlog=errlog) as pool:
            with anyio.fail_after(30):
                await pool.start()
                try:
                    return await pool.call("schema", tool, args, key="run/s1")
                except ToolCallError as error:
                    return error


@pytest.mark.parametrize("transport", ["memory", "stdio"])
async def test_structured_output_that_fits_the_schema_arrives(
    transport: str, schema_server: ModuleType, tmp_path: Path
) -> None:
    config = in_process(schema_server) if transport == "memory" else stdio()
    result = await call(config, "typed", {"give": {"n": 3}}, tmp_path)
    assert not isinstance(result, ToolCallError), result
    assert result.structured == {"n": 3}


@pytest.mark.parametrize("transport", ["memory", "stdio"])
@pytest.mark.parametrize(
    ("give", "says"),
    [
        ({"n": "three"}, "'three' is not of type 'integer'"),
        ({}, "'n' is a required property"),
        ([1, 2], "is not of type 'object'"),
    ],
)
async def test_structured_output_that_breaks_the_schema_fails_with_the_sdks_message(
    transport: str, give: Any, says: str, schema_server: ModuleType, tmp_path: Path
) -> None:
    config = in_process(schema_server) if transport == "memory" else stdio()
    error = await call(config, "typed", {"give": give}, tmp_path)
    assert isinstance(error, ToolCallError)
    assert error.error_class == "protocol_error"
    assert "Invalid structured content returned by tool typed" in error.message
    assert says in error.message


async def test_a_tool_with_a_schema_that_returns_no_structured_content_fails(
    schema_server: ModuleType, tmp_path: Path
) -> None:
    error = await call(in_process(schema_server), "typed", {"omit": True}, tmp_path)
    assert isinstance(error, ToolCallError)
    assert error.error_class == "protocol_error"
    assert "has an output schema but did not return structured content" in error.message


async def test_a_schema_with_a_remote_ref_is_not_fetched_and_fails_as_the_sdk_says(
    schema_server: ModuleType, tmp_path: Path
) -> None:
    error = await call(in_process(schema_server), "remote", {}, tmp_path)
    assert isinstance(error, ToolCallError)
    assert error.error_class == "protocol_error"
    assert "Invalid schema for tool remote" in error.message


async def test_a_nan_the_compiled_validator_refuses_is_accepted_as_the_sdk_accepts_it(
    tmp_path: Path,
) -> None:
    # the SDK's reader takes the literal NaN of a hand-written server's line as a float,
    # which python-jsonschema counts a number; the pool then sends it on as null
    raw = StdioServer("raw", sys.executable, (str(RAW),))
    with (tmp_path / "err.log").open("w") as errlog:
        async with ServerPool(sh.servers(raw), errlog=errlog, mode="legacy") as pool:
            with anyio.fail_after(30):
                await pool.start()
                result = await pool.call("raw", "nan_typed", {})
    assert result.structured == {"v": None}


async def test_a_call_refused_for_stale_headers_is_sent_again_and_succeeds(
    schema_server: ModuleType, tmp_path: Path
) -> None:
    async with ServerPool(sh.servers(in_process(schema_server))) as pool:
        with anyio.fail_after(30):
            await pool.start()
            result = await pool.call("schema", "mismatch", {})
            assert result.structured == {"calls": 2}
            assert schema_server.counts["mismatch"] == 2
            # the SDK listed the tools again: its results are the SDK's to check from now on
            assert not pool._conns["schema"].checks.listed("mismatch")
            assert pool._conns["schema"].checks.listed("typed")


async def test_an_answer_that_asks_for_input_is_driven_to_its_result(
    schema_server: ModuleType, tmp_path: Path
) -> None:
    result = await call(in_process(schema_server), "ask", {}, tmp_path)
    assert not isinstance(result, ToolCallError), result
    assert result.structured == {"rounds": 2}


async def test_a_tool_listed_after_start_is_checked_against_its_schema_too(
    schema_server: ModuleType, tmp_path: Path
) -> None:
    async with ServerPool(sh.servers(in_process(schema_server))) as pool:
        with anyio.fail_after(30):
            catalog = await pool.start()
            assert catalog.tool("schema", "added") is None
            await pool.call("schema", "add", {})
            with pytest.raises(ToolCallError) as failed:
                await pool.call("schema", "added", {})
    assert failed.value.error_class == "protocol_error"
    assert "Invalid structured content returned by tool added" in failed.value.message


def _result(structured: Any, *, fields_set: bool = True) -> CallToolResult:
    text = [TextContent(type="text", text="")]
    if not fields_set:
        return CallToolResult(content=text)
    return CallToolResult(content=text, structured_content=structured)


def test_the_compiled_check_says_yes_only_where_the_sdk_would() -> None:
    integer_n = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    checks = OutputChecks(
        (
            ToolSpec("typed", {}, integer_n),
            ToolSpec("free", {}, None),
            ToolSpec("remote", {}, {"$ref": "https://example.invalid/out.json"}),
            ToolSpec("dated", {}, {"properties": {"d": {"type": "string", "format": "date"}}}),
        )
    )
    assert checks.listed("typed")
    assert not checks.listed("other")
    checks.forget("free")
    assert not checks.listed("free")
    assert checks.passes("typed", _result({"n": 1}))
    assert not checks.passes("typed", _result({"n": "1"}))
    assert not checks.passes("typed", _result(None, fields_set=False))
    assert not checks.passes("typed", _result({1: 2}))  # a key it cannot read: the SDK decides
    error = CallToolResult(content=[TextContent(type="text", text="")], is_error=True)
    assert checks.passes("typed", error)  # error results are not checked (nor by the SDK)
    assert checks.passes("free", _result("anything"))  # no schema (forgotten or not)
    assert not checks.passes("remote", _result({"n": 1}))  # not compiled: the SDK decides
    assert checks.passes("dated", _result({"d": "not a date"}))  # formats are not asserted


async def test_only_results_the_compiled_check_refuses_reach_the_sdks_validation(
    schema_server: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    validated: list[str] = []
    sdk_check = ClientSession.validate_tool_result

    async def counted(self: ClientSession, name: str, result: CallToolResult) -> None:
        validated.append(name)
        await sdk_check(self, name, result)

    monkeypatch.setattr(ClientSession, "validate_tool_result", counted)
    async with ServerPool(sh.servers(in_process(schema_server))) as pool:
        with anyio.fail_after(30):
            await pool.start()
            for n in range(3):
                await pool.call("schema", "typed", {"give": {"n": n}})
            assert validated == []  # each passed the compiled check (~0.2 µs, not ~19)
            with pytest.raises(ToolCallError):
                await pool.call("schema", "typed", {"give": {"n": "x"}})
    assert validated == ["typed"]
