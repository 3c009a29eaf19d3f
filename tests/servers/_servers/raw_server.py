"""A stdio MCP server written by hand (no SDK): it answers with lines the SDK's own
server would never write, for the tests of what the client does with them.

Speaks the initialize handshake (use the pool with ``mode="legacy"``). Tools:
``echo`` (its arguments, as structured content), ``deep`` (structured content nested
``depth`` levels: deeper than the SDK's parser reads past about 200), ``nan`` (the
literals ``NaN``, ``Infinity`` and ``1e400`` in the structured content, as
``json.dumps`` writes them), ``nan_typed`` (``{"v": NaN}``, with an outputSchema whose ``v``
is a number), ``banner`` (a line that is not JSON-RPC before its answer), ``garbled`` (no
answer but a parse error with ``"id": null``, as a server that could not read the request
writes).
Standard library only.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOLS = [
    {"name": name, "inputSchema": {"type": "object", "additionalProperties": True}}
    for name in ("echo", "deep", "nan", "banner", "garbled")
] + [
    {
        "name": "nan_typed",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"v": {"type": "number"}}},
    }
]


def write(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def answer(request_id: Any, result: dict[str, Any]) -> None:
    write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}))


def call(request_id: Any, name: str, arguments: dict[str, Any]) -> None:
    text = [{"type": "text", "text": "ok"}]
    if name == "deep":
        depth = int(arguments.get("depth", 300))
        nested = '{"k":' * depth + "1" + "}" * depth
        write(
            f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"result":'
            f'{{"content":{json.dumps(text)},"structuredContent":{{"v":{nested}}}}}}}'
        )
    elif name == "nan":
        write(
            f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"result":'
            f'{{"content":{json.dumps(text)},"structuredContent":'
            '{"v":NaN,"w":Infinity,"x":1e400,"list":[1.5,-Infinity],"ok":2.5}}}'
        )
    elif name == "nan_typed":
        write(
            f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"result":'
            f'{{"content":{json.dumps(text)},"structuredContent":{{"v":NaN}}}}}}'
        )
    elif name == "garbled":
        write(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32700, "message": "Parse error: unexpected byte 0xff"},
                }
            )
        )
    elif name == "banner":
        write("a line that is not JSON-RPC")
        answer(request_id, {"content": text, "structuredContent": {"v": "after"}})
    else:
        answer(request_id, {"content": text, "structuredContent": {"got": arguments}})


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        request_id = message.get("id")
        if request_id is None:
            continue  # a notification
        if method == "initialize":
            answer(
                request_id,
                {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "raw", "version": "1"},
                },
            )
        elif method == "tools/list":
            answer(request_id, {"tools": TOOLS})
        elif method == "tools/call":
            params = message["params"]
            call(request_id, params["name"], params.get("arguments") or {})
        else:
            write(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "error": {"code": -32601, "message": f"no method {method}"},
                    }
                )
            )


if __name__ == "__main__":
    main()
