"""OTLP JSON, encoded by mcp-otel itself: one ``ExportTraceServiceRequest`` or
``ExportMetricsServiceRequest`` per line, in OTLP's JSON encoding (protobuf's JSON mapping with
lowerCamelCase names, enums as integers, and trace and span ids in hex, as the OTLP specification
says), for the file exporters of :mod:`mcp_otel.run.otlp_file`.

Metrics go through the OTLP protobuf encoders and ``MessageToDict`` (:func:`otlp_json_line`).
Spans, written by the batch on every request the proxy relays, are encoded straight to that JSON
(:func:`spans_json_line`): through protobuf messages they cost more CPU than the relay's own
serving (``tests/run/test_otlp_file.py`` holds the two equal).
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec
from google.protobuf.json_format import MessageToDict
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import INVALID_SPAN_CONTEXT

from mcp_otel.model.safety import report_once

# The fields protobuf's JSON mapping writes in base64 and OTLP's JSON encoding in hex.
_ID_FIELDS = frozenset({"traceId", "spanId", "parentSpanId"})


def otlp_json_line(message: Any) -> str:
    """One OTLP protobuf request as a line of OTLP JSON."""
    return json.dumps(_hex_ids(MessageToDict(message, use_integers_for_enums=True)), separators=(",", ":")) + "\n"


def spans_json_line(spans: Sequence[ReadableSpan]) -> str:
    """The spans as ``otlp_json_line(encode_spans(spans))`` writes them, without protobuf: grouped
    by resource and then by scope in the order first seen, defaults left out (proto3's JSON
    mapping), 64-bit integers as strings, ids in hex, enums as integers."""
    grouped: dict[Resource, dict[InstrumentationScope | None, list[dict[str, Any]]]] = {}
    for span in spans:
        grouped.setdefault(span.resource, {}).setdefault(span.instrumentation_scope or None, []).append(_span(span))
    resource_spans = []
    for resource, scopes in grouped.items():
        scope_spans = []
        for scope, encoded in scopes.items():
            entry: dict[str, Any] = {"scope": _scope(scope), "spans": encoded}
            if scope is not None and scope.schema_url:
                entry["schemaUrl"] = scope.schema_url
            scope_spans.append(entry)
        item: dict[str, Any] = {"resource": _with_attributes({}, resource.attributes), "scopeSpans": scope_spans}
        if resource.schema_url:
            item["schemaUrl"] = resource.schema_url
        resource_spans.append(item)
    request = {"resourceSpans": resource_spans}
    try:
        return msgspec.json.encode(request).decode() + "\n"  # a fifth of json's time, same JSON
    except (UnicodeEncodeError, msgspec.EncodeError):  # a lone surrogate: json escapes it
        return json.dumps(request, separators=(",", ":")) + "\n"


def _span(span: ReadableSpan) -> dict[str, Any]:
    context = span.get_span_context() or INVALID_SPAN_CONTEXT
    encoded: dict[str, Any] = {"traceId": f"{context.trace_id:032x}", "spanId": f"{context.span_id:016x}"}
    if context.trace_state:
        encoded["traceState"] = ",".join(f"{key}={value}" for key, value in context.trace_state.items())
    if span.parent:
        encoded["parentSpanId"] = f"{span.parent.span_id:016x}"
    if span.name:
        encoded["name"] = span.name
    encoded["kind"] = span.kind.value + 1  # OTLP's SpanKind counts UNSPECIFIED first
    if span.start_time:
        encoded["startTimeUnixNano"] = str(span.start_time)
    if span.end_time:
        encoded["endTimeUnixNano"] = str(span.end_time)
    _with_attributes(encoded, span.attributes, span.dropped_attributes)
    if span.events:
        encoded["events"] = [
            _with_attributes(
                {"timeUnixNano": str(event.timestamp), "name": event.name}, event.attributes, event.dropped_attributes
            )
            for event in span.events
        ]
    if span.dropped_events:
        encoded["droppedEventsCount"] = span.dropped_events
    if span.links:
        encoded["links"] = [
            _with_attributes(
                {"traceId": f"{link.context.trace_id:032x}", "spanId": f"{link.context.span_id:016x}"},
                link.attributes,
                link.dropped_attributes,
            )
            | {"flags": _span_flags(link.context)}
            for link in span.links
        ]
    if span.dropped_links:
        encoded["droppedLinksCount"] = span.dropped_links
    status: dict[str, Any] = {}
    if span.status.status_code.value:
        status["code"] = span.status.status_code.value
    if span.status.description:
        status["message"] = span.status.description
    encoded["status"] = status
    encoded["flags"] = _span_flags(span.parent)
    return encoded


def _span_flags(parent: Any) -> int:
    """OTLP's span flags: whether the parent is remote is known (0x100), and whether it is (0x200)."""
    return 0x300 if parent is not None and parent.is_remote else 0x100


def _scope(scope: InstrumentationScope | None) -> dict[str, Any]:
    encoded: dict[str, Any] = {}
    if scope is not None:
        if scope.name:
            encoded["name"] = scope.name
        if scope.version:
            encoded["version"] = scope.version
        _with_attributes(encoded, scope.attributes)
    return encoded


def _with_attributes(encoded: dict[str, Any], attributes: Any, dropped: int = 0) -> dict[str, Any]:
    if attributes:
        values = []
        for key, value in attributes.items():
            try:
                values.append({"key": key, "value": _value(value)})
            except TypeError as exc:  # as the protobuf encoder: that attribute alone is left out
                report_once("could not encode a span attribute", exc)
        if values:
            encoded["attributes"] = values
    if dropped:
        encoded["droppedAttributesCount"] = dropped
    return encoded


def _value(value: Any) -> dict[str, Any]:
    """An attribute's value as OTLP's ``AnyValue``."""
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value if math.isfinite(value) else _NON_FINITE[str(value)]}
    if isinstance(value, bytes):
        return {"bytesValue": base64.b64encode(value).decode("ascii")}
    if isinstance(value, Sequence):
        return {"arrayValue": {"values": [_value(item) for item in value]} if value else {}}
    if isinstance(value, Mapping):
        pairs = [{"key": str(key), "value": _value(item)} for key, item in value.items()]
        return {"kvlistValue": {"values": pairs} if pairs else {}}
    raise TypeError(f"an attribute value of type {type(value).__name__}")


_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}  # protobuf's JSON mapping


def _hex_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: base64.b64decode(item).hex() if key in _ID_FIELDS and isinstance(item, str) else _hex_ids(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(item) for item in value]
    return value
