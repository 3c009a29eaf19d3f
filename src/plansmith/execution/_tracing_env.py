"""Tracing set up from the standard OpenTelemetry environment variables.

``tracing_from_env(os.environ)`` returns ``None`` (tracing off: nothing is imported,
wrapped or subscribed) unless ``OTEL_TRACES_EXPORTER`` names an exporter or an OTLP
endpoint is set (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT``).
``OTEL_SDK_DISABLED=true`` and ``OTEL_TRACES_EXPORTER=none`` keep it off.

Read here: ``OTEL_TRACES_EXPORTER`` (``otlp``, ``console``, or any exporter installed under
the SDK's ``opentelemetry_traces_exporter`` entry points; a comma list),
``OTEL_SERVICE_NAME`` (default ``plansmith``), ``OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL``
(``http/protobuf``, the default; ``grpc`` when ``opentelemetry-exporter-otlp-proto-grpc``
is installed) and the endpoints. The SDK reads the rest itself from the process
environment: ``OTEL_EXPORTER_OTLP_[TRACES_]HEADERS``, ``..._TIMEOUT``, ``..._COMPRESSION``,
``..._CERTIFICATE``, ``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_TRACES_SAMPLER[_ARG]``,
``OTEL_BSP_*`` and ``OTEL_PROPAGATORS``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from plansmith.errors import InputError, Location
from plansmith.execution._invoker import ToolInvoker
from plansmith.execution._tracing import TraceView

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

__all__ = ["TraceSetup", "tracing_from_env"]

DEFAULT_SERVICE_NAME = "plansmith"
_HINT = "pip install plansmith[otel]"


@dataclass(frozen=True, slots=True)
class TraceSetup:
    """A tracer provider with its exporters; one per engine, a ``view`` per run."""

    provider: TracerProvider
    exporters: tuple[str, ...]

    def view(self) -> TraceView:
        """A new ``TraceView`` for a run, recording through this provider."""
        return TraceView(self.provider)

    def wrap(self, invoker: ToolInvoker, view: TraceView) -> ToolInvoker:
        """``invoker`` with the trace context of ``view``'s step spans in each call's ``_meta``."""
        from plansmith.execution._tracing_invoker import TracingInvoker  # noqa: PLC0415

        return TracingInvoker(invoker, view)

    def flush(self, timeout_ms: int = 30_000) -> bool:
        """Export every finished span now (False: the exporters did not finish in time)."""
        return bool(self.provider.force_flush(timeout_ms))

    def shutdown(self) -> None:
        """Flush and stop the exporters (at engine close)."""
        self.provider.shutdown()


def _names(environ: Mapping[str, str]) -> list[str]:
    listed = [n.strip().lower() for n in environ.get("OTEL_TRACES_EXPORTER", "").split(",")]
    names = [n for n in listed if n]
    endpoint = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    )
    if not names and endpoint:
        names = ["otlp"]
    return [n for n in names if n != "none"]


def tracing_from_env(environ: Mapping[str, str] | None = None) -> TraceSetup | None:
    """The trace setup the ``OTEL_*`` variables of ``environ`` ask for (None: tracing off).

    Raises ``InputError`` when tracing is asked for but OpenTelemetry or the named
    exporter is not installed, or the OTLP protocol is not one the SDK has.
    """
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    names = _names(env)
    if not names:
        return None
    try:
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource  # noqa: PLC0415
        from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
        from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: PLC0415
    except ImportError as error:
        raise _input_error("tracing needs OpenTelemetry, which is not installed", _HINT) from error
    asked = env.get("OTEL_SERVICE_NAME", "").strip()
    resource = Resource.create({SERVICE_NAME: asked} if asked else {})
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE_NAME}))
    exporters = [_exporter(name, env) for name in names]
    provider = TracerProvider(resource=resource)
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return TraceSetup(provider, tuple(names))


def _input_error(message: str, hint: str) -> InputError:
    return InputError(message, location=Location(file="OTEL_TRACES_EXPORTER"), hint=hint)


def _exporter(name: str, env: Mapping[str, str]) -> SpanExporter:
    if name == "otlp":
        return _otlp(env)
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter  # noqa: PLC0415

        return ConsoleSpanExporter()
    found = list(entry_points(group="opentelemetry_traces_exporter", name=name))
    if not found:
        raise _input_error(
            f"no trace exporter named {name!r} is installed",
            "set OTEL_TRACES_EXPORTER to otlp, console or none, or install the exporter",
        )
    made: SpanExporter = found[0].load()()
    return made


def _otlp(env: Mapping[str, str]) -> SpanExporter:
    protocol = (
        env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    traces_endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or None
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None
    module: Any
    if protocol == "http/protobuf":
        package = "opentelemetry-exporter-otlp-proto-http"
        try:
            from opentelemetry.exporter.otlp.proto.http import trace_exporter  # noqa: PLC0415
        except ImportError as error:
            raise _input_error(f"{package} is not installed", _HINT) from error
        module = trace_exporter
        if traces_endpoint is None and base is not None:  # the spec: the signal path added
            traces_endpoint = base.removesuffix("/") + "/v1/traces"
    elif protocol == "grpc":
        package = "opentelemetry-exporter-otlp-proto-grpc"
        try:
            from opentelemetry.exporter.otlp.proto.grpc import (  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415
                trace_exporter as grpc_exporter,
            )
        except ImportError as error:
            raise _input_error(f"{package} is not installed", f"pip install {package}") from error
        module = grpc_exporter
        traces_endpoint = traces_endpoint or base
    else:
        raise _input_error(
            f"OTLP protocol {protocol!r} is not supported",
            "set OTEL_EXPORTER_OTLP_PROTOCOL to http/protobuf (or grpc)",
        )
    exporter: SpanExporter = module.OTLPSpanExporter(endpoint=traces_endpoint)
    return exporter
