"""A server that writes a line that is not JSON-RPC to stdout (a banner) is logged in one
line, not with the SDK's traceback, and the session goes on."""

from __future__ import annotations

import logging
import sys

import _server_helpers as sh
import anyio
import pytest

from plansmith.servers import ServerPool, StdioServer

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


BANNER = (
    "import runpy, sys; print('starting counter v1.0', flush=True);"
    f" runpy.run_path({str(sh.COUNTER)!r}, run_name='__main__')"
)


async def test_a_servers_banner_on_stdout_is_one_log_line_and_the_calls_go_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    banner = StdioServer("counter", sys.executable, ("-c", BANNER))
    with caplog.at_level(logging.WARNING):
        async with ServerPool(sh.servers(banner)) as pool:
            with anyio.fail_after(30):
                await pool.start()
                result = await pool.call("counter", "echo", {"x": 3}, key="run/s1")
    assert not result.is_error
    parse = [r for r in caplog.records if "Failed to parse JSONRPC message" in r.getMessage()]
    assert len(parse) == 1
    assert parse[0].exc_info is None
    assert "input_value='starting counter v1.0'" in parse[0].getMessage()
    assert "Traceback" not in caplog.text
