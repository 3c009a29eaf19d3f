"""A stdio MCP server written by hand (no SDK) that fails a start the way its argument
says, for the tests of ``plansmith tools``:

- ``notools``: answers ``initialize``, and lists no tools;
- ``refuse``: answers ``initialize`` with a JSON-RPC error;
- ``nolist``: answers ``initialize``, and ``tools/list`` with "method not found".

Every other request is "method not found" (so the SDK's ``server/discover`` probe falls
back to ``initialize``). Standard library only.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _answer(request_id: Any, result: Any = None, error: Any = None) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
    if error is not None:
        message["error"] = error
    else:
        message["result"] = result
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


_UNKNOWN = {"code": -32601, "message": "method not found"}


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "notools"
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if "id" not in message:
            continue  # a notification
        method, request_id = message.get("method"), message["id"]
        if method == "initialize" and mode == "refuse":
            _answer(request_id, error={"code": -32603, "message": "not today"})
        elif method == "initialize":
            _answer(
                request_id,
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "bare", "version": "0.1"},
                },
            )
        elif method == "tools/list" and mode == "notools":
            _answer(request_id, {"tools": []})
        else:
            _answer(request_id, error=_UNKNOWN)


if __name__ == "__main__":
    main()
