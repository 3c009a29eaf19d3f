"""tracing_from_env: the standard OTEL_* variables, off by default without importing
OpenTelemetry, and the run's spans exported over OTLP/HTTP to a real local receiver."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio
import pytest
from _otlp_receiver import otlp_receiver
from opentelemetry.sdk.trace import TracerProvider
from test_tracing_dag import diamond, in_memory, run_with

from plansmith.errors import InputError
from plansmith.execution import TraceSetup, tracing_from_env


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(
    "environ",
    [
        {},
        {"OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
        {"OTEL_TRACES_EXPORTER": "none"},
        {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"},
        {"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "console"},
    ],
)
def test_tracing_is_off_unless_an_exporter_or_endpoint_is_set(environ: dict[str, str]) -> None:
    assert tracing_from_env(environ) is None


def loaded_after(code: str) -> list[str]:
    """The ``opentelemetry`` modules loaded in a fresh interpreter after ``code``."""
    code += (
        "\nimport json, sys"
        "\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith('opentelemetry'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def test_tracing_off_imports_no_opentelemetry_in_execution() -> None:
    off = "from plansmith.execution import tracing_from_env\nassert tracing_from_env({}) is None"
    assert loaded_after(off) == []


def test_tracing_off_imports_no_opentelemetry_sdk_with_the_engine() -> None:
    # the mcp SDK itself imports the OpenTelemetry API (its own client and server spans)
    loaded = loaded_after("import plansmith.engine, plansmith.execution")
    assert "opentelemetry.trace" in loaded
    assert not [m for m in loaded if m.startswith(("opentelemetry.sdk", "opentelemetry.exporter"))]


def setup_of(environ: dict[str, str]) -> TraceSetup:
    setup = tracing_from_env(environ)
    assert setup is not None
    return setup


def test_endpoint_alone_turns_on_otlp_with_plansmith_as_the_default_service_name() -> None:
    setup = setup_of({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"})
    try:
        assert setup.exporters == ("otlp",)
        assert isinstance(setup.provider, TracerProvider)
        assert setup.provider.resource.attributes["service.name"] == "plansmith"
    finally:
        setup.shutdown()


def test_console_exporter_writes_the_run_span_with_the_service_name() -> None:
    code = (
        "from plansmith.execution import RunFinished, RunStarted, tracing_from_env\n"
        "setup = tracing_from_env({'OTEL_TRACES_EXPORTER': 'console',"
        " 'OTEL_SERVICE_NAME': 'lab-a'})\n"
        "view = setup.view()\n"
        "view(RunStarted(run_id='r9', seq=1))\n"
        "view(RunFinished(run_id='r9', seq=2))\n"
        "setup.shutdown()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    span = json.loads(done.stdout)  # the one span, as indented JSON
    assert span["name"] == "plansmith.run"
    assert span["attributes"]["plansmith.run.id"] == "r9"
    assert span["resource"]["attributes"]["service.name"] == "lab-a"


@pytest.mark.parametrize(
    ("environ", "hint"),
    [
        ({"OTEL_TRACES_EXPORTER": "zipkin-nope"}, "otlp, console or none"),
        (
            {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
            "http/protobuf",
        ),
    ],
)
def test_unknown_exporter_or_protocol_is_an_input_error_with_a_hint(
    environ: dict[str, str], hint: str
) -> None:
    with pytest.raises(InputError) as caught:
        tracing_from_env(environ)
    assert hint in (caught.value.hint or "")


@pytest.mark.anyio
@pytest.mark.parametrize("signal_endpoint", [False, True])
async def test_run_spans_arrive_at_a_local_otlp_http_receiver(signal_endpoint: bool) -> None:
    with otlp_receiver() as (receiver, url):
        environ = {"OTEL_SERVICE_NAME": "plansmith-test"}
        if signal_endpoint:  # used as is
            environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = url + "/v1/traces"
        else:  # the signal path is added
            environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = url + "/"
        setup = setup_of(environ)
        try:
            view = setup.view()
            outcome, _ = await run_with(
                diamond(), in_memory(), view, lambda inner: setup.wrap(inner, view)
            )
            assert outcome.state == "succeeded", outcome.reason
            assert await anyio.to_thread.run_sync(setup.flush)
            received = receiver.wait_for_spans(5)
        finally:
            setup.shutdown()
    assert receiver.paths
    assert set(receiver.paths) == {"/v1/traces"}
    assert len(received) == 5
    assert {r["service.name"] for r, _ in received} == {"plansmith-test"}
    spans = [span for _, span in received]
    (run,) = [s for s in spans if s.name == "plansmith.run"]
    steps = {
        next(a.value.string_value for a in s.attributes if a.key == "plansmith.step.id"): s
        for s in spans
        if s is not run
    }
    assert sorted(steps) == ["a", "b", "c", "d"]
    assert {s.trace_id for s in spans} == {run.trace_id}
    assert all(s.parent_span_id == run.span_id for s in steps.values())
    ids = {s.span_id: k for k, s in steps.items()}
    edges = {(ids[link.span_id], k) for k, s in steps.items() for link in s.links}
    assert edges == {("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")}
    for k in "abcd":  # what the server got in _meta names the exported step span
        meta = outcome.outputs[k]
        assert isinstance(meta, dict)
        assert isinstance(meta["meta"], dict)
        traceparent = str(meta["meta"]["traceparent"])
        assert traceparent.split("-")[1:3] == [run.trace_id.hex(), steps[k].span_id.hex()]
