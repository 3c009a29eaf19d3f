"""A fake OpenAI-compatible chat endpoint for the research tests: a real HTTP server on
127.0.0.1 (standard library, in a thread) that answers ``POST /v1/chat/completions``
with canned texts and records every request body."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeChatEndpoint", "fake_chat_endpoint"]


class FakeChatEndpoint:
    """Where the fake endpoint listens (``base_url`` ends in ``/v1``), what it answers
    (by a word of the system prompt: the first of ``answers`` whose key is in it, else
    the one under ``""``), and the request bodies it got."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.requests: list[dict[str, Any]] = []
        self.base_url = ""

    def answer(self, body: dict[str, Any]) -> str:
        system = " ".join(
            str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system"
        )
        for word, text in self.answers.items():
            if word and word in system:
                return text
        return self.answers.get("", "")

    def env(self, model: str = "fake-model") -> dict[str, str]:
        return {"PLANSMITH_LLM_BASE_URL": self.base_url, "PLANSMITH_LLM_MODEL": model}


@contextmanager
def fake_chat_endpoint(answers: dict[str, str]) -> Iterator[FakeChatEndpoint]:
    endpoint = FakeChatEndpoint(answers)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/chat/completions":
                self.send_response(404)
                self.end_headers()
                return
            endpoint.requests.append(body)
            data = json.dumps(
                {
                    "id": "fake",
                    "object": "chat.completion",
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": endpoint.answer(body)},
                        }
                    ],
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    endpoint.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()
