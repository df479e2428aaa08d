"""The collector's span-metrics branch on its own: which spans become span metrics (mcp-otel's
request spans, every method; not notifications, nor requests answered with no result yet), the
outcome a span without one gets (docs/decisions.md rule 5: from tool.outcome where an older version wrote
only that, else from its status), and a server's caller fault counted by its JSON-RPC code (it has
no error.type)."""

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
    ERROR_TYPE,
    INSTRUMENTATION_SCOPE,
    MCP_METHOD_NAME,
    MCP_REQUEST_OUTCOME,
    MCP_REQUEST_RESULT_TYPE,
    MCP_SERVER_NAME,
    METHOD_CANCELLED,
    METHOD_SERVER_DISCOVER,
    METHOD_TOOLS_CALL,
    NEGOTIATION_CODES,
    RPC_RESPONSE_STATUS_CODE,
    SPAN_METRICS_CALLS,
    TOOL_OUTCOME,
    URL_ELICITATION_REQUIRED_CODE,
    ResultType,
    prometheus_label,
)
from tests.processes import LOOPBACK, free_port, running, wait_until
from tests.stack.stack import COLLECTOR, COLLECTOR_CONFIG, Prometheus, program, prometheus

# The stack's assets do not depend on the SDK major: checked once, in the mcp 2.x run.
pytestmark = pytest.mark.mcp2

SERVICE = "pipeline-test"


@pytest.fixture(scope="module")
def span_metrics(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, ...], float]]:
    """Sends a handful of spans through the collector; yields (server, method, request outcome,
    tool outcome, error type, JSON-RPC code) -> calls."""
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

    def span(
        tracer: Any, name: str, attributes: dict[str, Any], error: bool = False, kind: SpanKind = SpanKind.CLIENT
    ) -> None:
        with tracer.start_as_current_span(name, kind=kind, attributes=attributes) as current:
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
    # A server's caller fault: failed, status UNSET, no error.type; the code says whose fault.
    fault = {MCP_SERVER_NAME: "current", TOOL_OUTCOME: "failed", MCP_REQUEST_OUTCOME: "failed"}
    span(ours, "tools/call t", {**call, **fault, RPC_RESPONSE_STATUS_CODE: "-32602"}, kind=SpanKind.SERVER)
    # The client's side of a server's failure: its error.type is the code.
    failure = {**fault, ERROR_TYPE: "-32603", RPC_RESPONSE_STATUS_CODE: "-32603"}
    span(ours, "tools/call t", {**call, **failure}, error=True)
    # A notification, both sides: no answer, no outcome, not a request to count.
    notification = {MCP_METHOD_NAME: METHOD_CANCELLED, MCP_SERVER_NAME: "notification"}
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        span(ours, METHOD_CANCELLED, notification, kind=kind)
    # Answered with no result yet, by a JSON-RPC error that says so: no outcome, no call to count.
    unfinished = {MCP_SERVER_NAME: "unfinished"}
    span(
        ours,
        "tools/call t",
        {
            **call,
            **unfinished,
            MCP_REQUEST_RESULT_TYPE: ResultType.INPUT_REQUIRED.value,
            RPC_RESPONSE_STATUS_CODE: str(URL_ELICITATION_REQUIRED_CODE),
        },
    )
    for code in sorted(NEGOTIATION_CODES):
        span(
            ours,
            METHOD_SERVER_DISCOVER,
            {
                MCP_METHOD_NAME: METHOD_SERVER_DISCOVER,
                **unfinished,
                MCP_REQUEST_RESULT_TYPE: ResultType.NEGOTIATION.value,
                RPC_RESPONSE_STATUS_CODE: str(code),
            },
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


LABELS = tuple(
    prometheus_label(name)
    for name in (
        MCP_SERVER_NAME,
        MCP_METHOD_NAME,
        MCP_REQUEST_OUTCOME,
        TOOL_OUTCOME,
        ERROR_TYPE,
        RPC_RESPONSE_STATUS_CODE,
    )
)


def _wait_for_series(server: Prometheus, log: Path) -> dict[tuple[str, ...], float]:
    selector = f'{{__name__=~"{"|".join(SPAN_METRICS_CALLS)}", service_name="{SERVICE}"}}'

    def series() -> list[dict[str, Any]]:
        return server.query(f"sum by ({', '.join(LABELS)}) ({selector})", time.time())

    wait_until(lambda: sum(float(sample["value"][1]) for sample in series()) >= 9, 60, "span metrics", log)
    time.sleep(16)  # one more flush: anything else that was coming has come
    return {tuple(s["metric"].get(label, "") for label in LABELS): float(s["value"][1]) for s in series()}


def test_only_our_request_spans_become_span_metrics(span_metrics: dict[tuple[str, ...], float]) -> None:
    # Not "theirs", "no-method", "notification" or "unfinished" (-32042, a server/discover probe's
    # negotiation).
    assert {server for server, *_ in span_metrics} == {"current", "tool-only", "legacy"}


def test_an_outcome_is_kept_as_written(span_metrics: dict[tuple[str, ...], float]) -> None:
    assert {key: n for key, n in span_metrics.items() if key[0] == "current"} == {
        ("current", "tools/call", "ok", "ok", "", ""): 1,
        ("current", "tools/call", "failed", "failed", "", ""): 1,
        ("current", "tools/call", "cancelled", "cancelled", "", ""): 1,
        ("current", "resources/read", "cancelled", "", "", ""): 1,  # tool.outcome is the tool calls' alone
        # Status UNSET and no error.type: still failed, its code on the counter.
        ("current", "tools/call", "failed", "failed", "", "-32602"): 1,
        ("current", "tools/call", "failed", "failed", "-32603", "-32603"): 1,
    }


def test_a_span_without_an_outcome_gets_the_one_it_had(span_metrics: dict[tuple[str, ...], float]) -> None:
    assert {key: n for key, n in span_metrics.items() if key[0] != "current"} == {
        ("tool-only", "tools/call", "cancelled", "cancelled", "", ""): 1,  # from tool.outcome
        ("legacy", "tools/call", "failed", "failed", "", ""): 1,  # from the status
        ("legacy", "tools/call", "ok", "ok", "", ""): 1,
    }
