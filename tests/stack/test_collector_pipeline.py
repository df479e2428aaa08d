"""The collector's span-metrics branch on its own: which spans become span metrics (mcp-otel's
request spans, every method), and the outcome a span without one gets (ADR-191 rule 5: from
tool.outcome where an older version wrote only that, else from its status)."""

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
    MCP_REQUEST_OUTCOME,
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
def span_metrics(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, ...], float]]:
    """Sends a handful of spans through the collector; yields (server, method, request outcome,
    tool outcome) -> calls."""
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

    def span(tracer: Any, name: str, attributes: dict[str, Any], error: bool = False) -> None:
        with tracer.start_as_current_span(name, kind=SpanKind.CLIENT, attributes=attributes) as current:
            if error:
                current.set_status(Status(StatusCode.ERROR))

    for outcome in ("ok", "failed", "cancelled"):  # as this version writes them
        span(
            ours,
            "tools/call t",
            {**call, MCP_SERVER_NAME: "current", TOOL_OUTCOME: outcome, MCP_REQUEST_OUTCOME: outcome},
        )
    span(
        ours,
        "resources/read",
        {MCP_METHOD_NAME: "resources/read", MCP_SERVER_NAME: "current", MCP_REQUEST_OUTCOME: "cancelled"},
    )
    # Written before mcp.request.outcome existed: tool.outcome says it.
    span(ours, "tools/call t", {**call, MCP_SERVER_NAME: "tool-only", TOOL_OUTCOME: "cancelled"})
    # Written before any outcome attribute existed: the outcome comes from the status.
    span(ours, "tools/call t", {**call, MCP_SERVER_NAME: "legacy"}, error=True)
    span(ours, "tools/call t", {**call, MCP_SERVER_NAME: "legacy"})
    # Not MCP request spans of ours: no span metrics.
    span(theirs, "tools/call t", {**call, MCP_SERVER_NAME: "theirs", TOOL_OUTCOME: "ok"})
    span(ours, "something else", {MCP_SERVER_NAME: "no-method"})
    provider.shutdown()


LABELS = ("mcp_server_name", "mcp_method_name", "mcp_request_outcome", "tool_outcome")


def _wait_for_series(server: Prometheus, log: Path) -> dict[tuple[str, ...], float]:
    selector = f'{{__name__=~"{"|".join(SPAN_METRICS_CALLS)}", service_name="{SERVICE}"}}'

    def series() -> list[dict[str, Any]]:
        return server.query(f"sum by ({', '.join(LABELS)}) ({selector})", time.time())

    wait_until(lambda: sum(float(sample["value"][1]) for sample in series()) >= 7, 60, "span metrics", log)
    time.sleep(16)  # one more flush: anything else that was coming has come
    return {tuple(s["metric"].get(label, "") for label in LABELS): float(s["value"][1]) for s in series()}


def test_only_our_request_spans_become_span_metrics(span_metrics: dict[tuple[str, ...], float]) -> None:
    assert {server for server, *_ in span_metrics} == {"current", "tool-only", "legacy"}


def test_an_outcome_is_kept_as_written(span_metrics: dict[tuple[str, ...], float]) -> None:
    assert {key: n for key, n in span_metrics.items() if key[0] == "current"} == {
        ("current", "tools/call", "ok", "ok"): 1,
        ("current", "tools/call", "failed", "failed"): 1,
        ("current", "tools/call", "cancelled", "cancelled"): 1,
        ("current", "resources/read", "cancelled", ""): 1,  # tool.outcome is the tool calls' alone
    }


def test_a_span_without_an_outcome_gets_the_one_it_had(span_metrics: dict[tuple[str, ...], float]) -> None:
    assert {key: n for key, n in span_metrics.items() if key[0] != "current"} == {
        ("tool-only", "tools/call", "cancelled", "cancelled"): 1,  # from tool.outcome
        ("legacy", "tools/call", "failed", "failed"): 1,  # from the status
        ("legacy", "tools/call", "ok", "ok"): 1,
    }
