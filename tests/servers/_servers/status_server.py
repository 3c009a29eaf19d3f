"""A minimal MCP server over HTTP on loopback whose ``tools/call`` answers with the HTTP
statuses it is given, then with a result: fault injection for what the SDK reports of a
gateway's or a server's HTTP error.

Usage: python status_server.py PORT STATUS[,STATUS...]   e.g. 503,500 (then results)
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STATUSES = [int(s) for s in sys.argv[2].split(",") if s]
BODIES = {500: b"internal oops", 502: b"bad gateway", 503: b"busy, try later"}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        method = request.get("method")
        if method == "tools/call" and STATUSES:
            status = STATUSES.pop(0)
            self._send(status, BODIES.get(status, b""), "text/plain")
            return
        if "id" not in request:  # a notification
            self._send(202, b"", "text/plain")
            return
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "status", "version": "1"},
            }
        elif method == "tools/list":
            schema = {"type": "object", "properties": {"name": {"type": "string"}}}
            result = {"tools": [{"name": "work", "inputSchema": schema}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "done"}], "isError": False}
        else:
            self._send(
                200,
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": request["id"],
                        "error": {"code": -32601, "message": "Method not found"},
                    }
                ).encode(),
                "application/json",
            )
            return
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        self._send(200, json.dumps(reply).encode(), "application/json")

    def do_GET(self) -> None:
        self._send(405, b"", "text/plain")

    def do_DELETE(self) -> None:
        self._send(200, b"", "text/plain")


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
