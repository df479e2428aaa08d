"""The collector's span-metrics branch on its own: which spans become span metrics, and the
outcome a tool-call span without tool.outcome gets (ADR-191 rule 5: read from its status)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

from mcp_otel.semconv import (
    INSTRUMENTATION_SCOPE,
    MCP_METHOD_NAME,
    MCP_SERVER_NAME,
    METHOD_TOOLS_CALL,
    SPAN_METRICS_CALLS,
    TOOL_OUTCOME,
)
from tests.processes import LOOPBACK, free_port, running, wait_until
from tests.stack.stack import COLLECTOR, COLLECTOR_CONFIG, Prometheus, program, prometheus

# The stack's assets do not depend on the SDK major: checked once, in the mcp 2.x run.
pytestmark = pytest.mark.mcp2

SERVICE = "pipeline-test"


@pytest.fixture(scope="module")
def span_metrics(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, str], float]]:
    """Sends a handful of spans through the collector; yields (server, outcome) -> calls."""
    directory = tmp_path_factory.mktemp("pipeline")
    grpc, http, traces = free_port(), free_port(), free_port()
    with prometheus(directory, with_rules=False) as server:
        env = {
            **os.environ,
            "MCP_OTEL_COLLECTOR_GRPC": f"{LOOPBACK}:{grpc}",
            "MCP_OTEL_COLLECTOR_HTTP": f"{LOOPBACK}:{http}",
            "MCP_OTEL_TRACES_OTLP": f"{LOOPBACK}:{traces}",  # nobody listens: traces are not asked about here
            "MCP_OTEL_PROMETHEUS_REMOTE_WRITE": f"{server.url}/api/v1/write",
        }
        command = [program(COLLECTOR), "--config", str(COLLECTOR_CONFIG)]
        with running(command, ports=[grpc, http], env=env, log=directory / "collector.log"):
            _send_spans(f"http://{LOOPBACK}:{http}/v1/traces")
            yield _wait_for_series(server, directory / "collector.log")


def _send_spans(endpoint: str) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    ours, theirs = provider.get_tracer(INSTRUMENTATION_SCOPE), provider.get_tracer("some.other.instrumentation")
    call = {MCP_METHOD_NAME: METHOD_TOOLS_CALL}
    for outcome in ("ok", "failed", "cancelled"):
        with ours.start_as_current_span(
            "tools/call t", kind=SpanKind.CLIENT, attributes={**call, MCP_SERVER_NAME: "current", TOOL_OUTCOME: outcome}
        ):
            pass
    # Written before tool.outcome existed: the outcome comes from the status.
    with ours.start_as_current_span(
        "tools/call t", kind=SpanKind.CLIENT, attributes={**call, MCP_SERVER_NAME: "legacy"}
    ) as span:
        span.set_status(Status(StatusCode.ERROR))
    with ours.start_as_current_span(
        "tools/call t", kind=SpanKind.CLIENT, attributes={**call, MCP_SERVER_NAME: "legacy"}
    ):
        pass
    # Not tool calls of ours: no span metrics.
    with theirs.start_as_current_span(
        "tools/call t", kind=SpanKind.CLIENT, attributes={**call, MCP_SERVER_NAME: "theirs", TOOL_OUTCOME: "ok"}
    ):
        pass
    with ours.start_as_current_span(
        "tools/list", kind=SpanKind.CLIENT, attributes={MCP_METHOD_NAME: "tools/list", MCP_SERVER_NAME: "list"}
    ):
        pass
    provider.shutdown()


def _wait_for_series(server: Prometheus, log: Path) -> dict[tuple[str, str], float]:
    selector = f'{{__name__=~"{"|".join(SPAN_METRICS_CALLS)}", service_name="{SERVICE}"}}'

    def series() -> list[dict[str, Any]]:
        return server.query(f"sum by (mcp_server_name, tool_outcome) ({selector})", time.time())

    wait_until(lambda: sum(float(sample["value"][1]) for sample in series()) >= 5, 60, "span metrics", log)
    time.sleep(16)  # one more flush: anything else that was coming has come
    return {(s["metric"]["mcp_server_name"], s["metric"]["tool_outcome"]): float(s["value"][1]) for s in series()}


def test_only_our_tool_call_spans_become_span_metrics(span_metrics: dict[tuple[str, str], float]) -> None:
    assert {server for server, _ in span_metrics} == {"current", "legacy"}


def test_an_outcome_is_kept_as_written(span_metrics: dict[tuple[str, str], float]) -> None:
    assert {key: n for key, n in span_metrics.items() if key[0] == "current"} == {
        ("current", "ok"): 1,
        ("current", "failed"): 1,
        ("current", "cancelled"): 1,
    }


def test_a_span_without_an_outcome_gets_the_one_its_status_gave(span_metrics: dict[tuple[str, str], float]) -> None:
    assert {key: n for key, n in span_metrics.items() if key[0] == "legacy"} == {
        ("legacy", "failed"): 1,
        ("legacy", "ok"): 1,
    }
