"""One long answer line over stdio: the MCP SDK's ``stdio_client`` against the pool's
``stdio_transport`` (``plansmith.servers._stdio``).

A tiny server (standard library only) writes a line saying it is ready, waits for one
line on its stdin, then writes one JSON-RPC answer of N MB (a string of that many ``x``)
on one line. Timed: from the client's request to the parsed answer in the client's
hands (the server's write, the pipe, the transport's reading and parsing). Best of
``--reps`` runs per size and transport, each on a fresh process.

Usage: .venv/bin/python bench/bench_stdio_lines.py [--sizes 1,5,10,20] [--reps 3]
Prints a row per size: seconds with the SDK's reader, with the pool's, and their ratio.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
from mcp import StdioServerParameters, stdio_client
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCNotification, JSONRPCResponse

from plansmith.servers._stdio import stdio_transport

SERVER = """
import sys
mb = float(sys.argv[1])
sys.stdout.write('{"jsonrpc":"2.0","id":0,"result":{}}\\n')
sys.stdout.flush()
sys.stdin.readline()
pad = "x" * int(mb * 1_000_000)
sys.stdout.write('{"jsonrpc":"2.0","id":1,"result":{"pad":"' + pad + '"}}\\n')
sys.stdout.flush()
sys.stdin.read()
"""

Transport = Callable[[StdioServerParameters], AbstractAsyncContextManager[Any]]


async def one(transport: Transport, mb: float) -> float:
    params = StdioServerParameters(command=sys.executable, args=["-c", SERVER, str(mb)])
    async with transport(params) as (read, write):
        ready = await read.receive()
        assert isinstance(ready, SessionMessage)
        began = time.perf_counter()
        await write.send(SessionMessage(JSONRPCNotification(jsonrpc="2.0", method="go")))
        answer = await read.receive()
        took = time.perf_counter() - began
    assert isinstance(answer, SessionMessage), answer
    message = answer.message
    assert isinstance(message, JSONRPCResponse)
    assert len(message.result["pad"]) == int(mb * 1_000_000)
    return took


async def main(sizes: list[float], reps: int) -> None:
    transports: dict[str, Transport] = {"sdk": stdio_client, "pool": stdio_transport}
    print(f"{'MB':>5} {'SDK stdio_client s':>19} {'pool stdio_transport s':>23} {'ratio':>7}")
    for mb in sizes:
        best = {}
        for name, transport in transports.items():
            best[name] = min([await one(transport, mb) for _ in range(reps)])
        ratio = best["sdk"] / best["pool"]
        print(f"{mb:>5g} {best['sdk']:>19.3f} {best['pool']:>23.3f} {ratio:>6.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,5,10,20", help="line sizes in MB, comma-separated")
    parser.add_argument("--reps", type=int, default=3, help="runs per size and transport")
    args = parser.parse_args()
    anyio.run(main, [float(s) for s in args.sizes.split(",")], args.reps)
