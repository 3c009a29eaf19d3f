"""A tiny OTLP/HTTP trace receiver on 127.0.0.1 for the tracing tests.

It accepts ``POST /v1/traces`` (protobuf, optionally gzip), decodes each request with
``opentelemetry.proto`` and keeps the resource spans; ``wait_for_spans`` blocks on a
condition (with a deadline) until enough spans arrived.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


class OtlpReceiver:
    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []
        self.changed = threading.Condition()

    def spans(self) -> list[tuple[dict[str, Any], Any]]:
        """Every span received, with its resource's attributes."""
        with self.changed:
            out: list[tuple[dict[str, Any], Any]] = []
            for request in self.requests:
                for rs in request.resource_spans:
                    resource = {a.key: a.value.string_value for a in rs.resource.attributes}
                    for scope in rs.scope_spans:
                        out.extend((resource, span) for span in scope.spans)
            return out

    def wait_for_spans(self, n: int, timeout: float = 20.0) -> list[tuple[dict[str, Any], Any]]:
        deadline = time.monotonic() + timeout
        with self.changed:
            while len(self.spans()) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.changed.wait(left)
            return self.spans()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                with receiver.changed:
                    receiver.requests.append(request)
                    receiver.paths.append(self.path)
                    receiver.changed.notify_all()
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


@contextmanager
def otlp_receiver() -> Iterator[tuple[OtlpReceiver, str]]:
    """A running receiver and its base URL (``http://127.0.0.1:PORT``)."""
    receiver = OtlpReceiver()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), receiver.handler())
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)
