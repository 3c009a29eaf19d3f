"""A stdio MCP server written by hand (no SDK): it answers with lines the SDK's own
server would never write, for the tests of what the client does with them.

Speaks the initialize handshake (use the pool with ``mode="legacy"``). Tools:
``echo`` (its arguments, as structured content), ``deep`` (structured content nested
``depth`` levels: deeper than the SDK's parser reads past about 200), ``nan`` (the
literals ``NaN``, ``Infinity`` and ``1e400`` in the structured content, as
``json.dumps`` writes them), ``nan_typed`` (``{"v": NaN}``, with an outputSchema whose ``v``
is a number), ``banner`` (a line that is not JSON-RPC before its answer), ``garbled`` (no
answer but a parse error with ``"id": null``, as a server that could not read the request
writes), ``hold`` (no answer yet: a progress notification says it arrived, when the call
asked for progress), ``bad_utf8`` (an answer whose line holds the byte 0xff, which is not
UTF-8, then the answers of the calls ``hold`` kept, each one its arguments), ``huge``
(an answer of about ``mb`` MB, its structured content ``{"pad": "xx…"}``, then the answers
of the calls ``hold`` kept).
Standard library only.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOLS = [
    {"name": name, "inputSchema": {"type": "object", "additionalProperties": True}}
    for name in ("echo", "deep", "nan", "banner", "garbled", "hold", "bad_utf8", "huge")
] + [
    {
        "name": "nan_typed",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"v": {"type": "number"}}},
    }
]


#: the calls ``hold`` has not answered yet: their ids and arguments
_held: list[tuple[Any, dict[str, Any]]] = []


def write(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def write_bytes(line: bytes) -> None:
    sys.stdout.buffer.write(line + b"\n")
    sys.stdout.buffer.flush()


def answer(request_id: Any, result: dict[str, Any]) -> None:
    write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}))


def call(request_id: Any, name: str, arguments: dict[str, Any], meta: dict[str, Any]) -> None:
    text = [{"type": "text", "text": "ok"}]
    if name == "hold":
        _held.append((request_id, arguments))
        token = meta.get("progressToken")
        if token is not None:
            params = {"progressToken": token, "progress": 0}
            write(
                json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
            )
        return
    if name == "bad_utf8":
        head = f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"result":{{"content":'
        write_bytes(head.encode() + b'[{"type":"text","text":"caf\xff"}]}}')
        for held, given in _held:
            answer(held, {"content": text, "structuredContent": {"got": given}})
        _held.clear()
        return
    if name == "huge":
        pad = "x" * int(float(arguments.get("mb", 1)) * 1_000_000)
        answer(request_id, {"content": text, "structuredContent": {"pad": pad}})
        for held, given in _held:
            answer(held, {"content": text, "structuredContent": {"got": given}})
        _held.clear()
        return
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
            call(
                request_id, params["name"], params.get("arguments") or {}, params.get("_meta") or {}
            )
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
