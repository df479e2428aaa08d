"""Privacy: by default no tool argument, result or error text reaches any span, event, metric or
log, on either side of a call. Opt-in capture records arguments and results, secret-looking keys
redacted at any depth, cut to the configured length."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcp_otel.model.config import Settings
from mcp_otel.model.content import REDACTED, arguments_attributes, redacted, result_attributes
from mcp_otel.semconv import GEN_AI_TOOL_CALL_ARGUMENTS, GEN_AI_TOOL_CALL_RESULT
from tests.conftest import tool_call_spans
from tests.harness import open_session
from tests.server.test_server_spans import call

pytestmark = pytest.mark.anyio

SECRET = f"s3cr3t-{uuid.uuid4().hex}"


async def _calls_carrying_the_secret() -> None:
    async with open_session("memory") as session:
        await call(session, "ok", {"query": SECRET, "password": SECRET})
        for how in ("ok", "tool_error", "rpc_error", "crash"):
            await call(session, "echo", {"text": SECRET, "how": how})


async def test_nothing_of_a_call_is_recorded_by_default(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    reader = InMemoryMetricReader()
    instrument(meter_provider=MeterProvider(metric_readers=[reader]))
    await _calls_carrying_the_secret()
    spans = exporter.get_finished_spans()
    assert len(tool_call_spans(spans, SpanKind.CLIENT)) == len(tool_call_spans(spans, SpanKind.SERVER)) == 5
    for span in spans:  # ours, and any the SDK made: names, attributes, events, status, links
        assert SECRET not in span.to_json(), span.name
    metrics = reader.get_metrics_data()
    assert metrics is not None
    assert SECRET not in metrics.to_json()
    # Our own log records (the MCP SDK itself logs a crashing handler's traceback).
    ours = [caplog.handler.format(record) for record in caplog.records if record.name.startswith("mcp_otel")]
    assert all(SECRET not in text for text in ours)


async def test_the_secret_would_be_seen_if_it_were_recorded(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """The test above can fail: with capture on, the planted secret is in the spans."""
    instrument(capture_content=True)
    await _calls_carrying_the_secret()
    assert any(SECRET in span.to_json() for span in exporter.get_finished_spans())


async def test_opt_in_capture_redacts_secret_keys_and_cuts_long_values(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    instrument(capture_content=True, max_content_length=300)
    arguments = {"text": "visible", "how": "tool_error", "api_key": SECRET, "nested": [{"Authorization": SECRET}]}
    async with open_session("memory") as session:
        await call(session, "echo", arguments)
        await call(session, "echo", {"text": "x" * 10_000})
    spans = exporter.get_finished_spans()
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        first, second = tool_call_spans(spans, kind)
        assert first.attributes is not None
        assert second.attributes is not None
        assert json.loads(str(first.attributes[GEN_AI_TOOL_CALL_ARGUMENTS])) == {
            "text": "visible",
            "how": "tool_error",
            "api_key": REDACTED,
            "nested": [{"Authorization": REDACTED}],
        }
        result = json.loads(str(first.attributes[GEN_AI_TOOL_CALL_RESULT]))
        assert (result["isError"], result["content"][0]["text"]) == (True, "visible")
        for key in (GEN_AI_TOOL_CALL_ARGUMENTS, GEN_AI_TOOL_CALL_RESULT):
            value = str(second.attributes[key])
            assert (len(value), value[-1]) == (300, "…")
        assert SECRET not in first.to_json()


async def test_with_capture_a_json_rpc_errors_message_is_its_description(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    instrument(capture_content=True)
    async with open_session("memory") as session:
        await call(session, "echo", {"text": "the error's message", "how": "rpc_error"})
    spans = exporter.get_finished_spans()
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        [span] = tool_call_spans(spans, kind)
        assert span.attributes is not None
        assert GEN_AI_TOOL_CALL_RESULT not in span.attributes  # an error is no result
        assert span.status.description == "the error's message"


@pytest.mark.parametrize(
    ("environ", "captured"),
    [
        ({}, False),
        ({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}, True),
        ({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"}, True),
        ({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "EVENT_ONLY"}, False),
        ({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"}, False),
        (
            {
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
                "OTEL_INSTRUMENTATION_MCP_CAPTURE_CONTENT": "false",
            },
            False,
        ),
        ({"OTEL_INSTRUMENTATION_MCP_CAPTURE_CONTENT": "true"}, True),
        ({"OTEL_INSTRUMENTATION_MCP_CAPTURE_CONTENT": "maybe"}, False),  # invalid: the default, logged
    ],
)
def test_capture_follows_our_setting_then_the_genai_one(environ: dict[str, str], captured: bool) -> None:
    assert Settings.load(environ).capture_content is captured


def test_redaction_reaches_every_depth_and_keeps_the_rest() -> None:
    value = {"user": "ann", "Password": "p", "items": [{"token": "t", "n": 1}, ("x", {"client_secret": "s"})]}
    assert redacted(value) == {
        "user": "ann",
        "Password": REDACTED,
        "items": [{"token": REDACTED, "n": 1}, ["x", {"client_secret": REDACTED}]],
    }


def test_capture_fails_open() -> None:
    class Hostile:
        @property
        def content(self) -> Any:
            raise RuntimeError("no")

        def model_dump(self, **kwargs: Any) -> Any:
            raise RuntimeError("no")

    settings = Settings.load({}, capture_content=True)
    assert result_attributes(Hostile(), settings) == {}
    assert arguments_attributes(Hostile(), settings) == {}
