"""OTLP JSON lines, written by mcp-otel itself: the exporters of ``mcp-otel run``'s file.

One line per export: an ``ExportTraceServiceRequest`` or ``ExportMetricsServiceRequest`` in
OTLP's JSON encoding (protobuf's JSON mapping with lowerCamelCase names, enums as integers, and
trace and span ids in hex, as the OTLP specification says), which is what the OpenTelemetry OTLP
JSON file exporter writes and what ``mcp-otel report`` reads.

Why not that exporter (``opentelemetry-exporter-otlp-json-file``): its first release needs the
SDK 1.45.1, and agent frameworks pin older ones (google-adk 2.13: ``opentelemetry-sdk<=1.44``),
so ``mcp-otel[sdk]`` could not be installed beside them. These encode with the OTLP protobuf
encoders that the SDK's own OTLP exporters use (``opentelemetry-exporter-otlp-proto-common``,
there from SDK 1.30 on) and protobuf's JSON mapping; the metrics exporter reads the same
temporality and aggregation settings as the OTLP exporters (``OTLPMetricExporterMixin``).
Spans, written by the batch on every request the proxy relays, are encoded straight to that
JSON (:func:`spans_json_line`): through protobuf messages and ``MessageToDict`` they cost more
CPU than the relay's own serving (``tests/run/test_otlp_file.py`` holds the two equal).
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import os
import threading
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import IO, Any

import msgspec
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import INVALID_SPAN_CONTEXT

from mcp_otel.model.config import RUN_FILE_ENV, RUN_FILE_KEEP_ENV, RUN_FILE_MAX_BYTES_ENV
from mcp_otel.model.safety import report_once

fcntl: ModuleType | None
try:  # POSIX (the proxy's relay is POSIX's too); elsewhere files are not locked
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

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


class LineStream:
    """One file shared by the span and metric exporters, and by every process that writes it (two
    desktop clients running the same server both proxy it to one file; an agent's servers under
    ``mcp-otel run``): each line is written whole, with one ``write`` to the file opened for
    appending, holding the file's exclusive lock (``flock``), so no line is torn or lost between
    processes.

    With ``max_bytes``, a line that would take the file past it first rotates it, as logging's
    ``RotatingFileHandler`` names generations: ``PATH`` becomes ``PATH.1``, ``PATH.1`` becomes
    ``PATH.2``, ... up to ``PATH.KEEP``; the oldest is dropped. A writer whose file was rotated
    by another process finds out once it holds the lock, and goes on in the new one."""

    def __init__(self, path: str, max_bytes: int | None = None, keep: int = 0) -> None:
        self._path = path
        self._max_bytes = max_bytes
        self._keep = keep
        self._fd = self._open()
        self._lock = threading.Lock()
        self._closed = False

    def _open(self) -> int:
        return os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    @property
    def closed(self) -> bool:
        return self._closed

    def write(self, text: str) -> int:
        data = text.encode("utf-8")
        with self._lock:
            if self._closed:
                raise ValueError(f"{self._path} is closed")
            self._lock_current_file()
            try:
                if self._max_bytes is not None:
                    size = os.fstat(self._fd).st_size
                    if size and size + len(data) > self._max_bytes:  # a line bigger than that: alone in a file
                        self._rotate()
                view = memoryview(data)
                while view:
                    view = view[os.write(self._fd, view) :]
            finally:
                if fcntl is not None:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
        return len(text)

    def _lock_current_file(self) -> None:
        """Hold the lock of the file now at the path: the one we hold may have been rotated away
        (or removed) by another writer while we waited for its lock."""
        while fcntl is not None:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            held = os.fstat(self._fd)
            try:
                named = os.stat(self._path)
            except FileNotFoundError:
                named = None
            if named is not None and (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino):
                return
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = self._open()

    def _rotate(self) -> None:
        """Under the lock: the generations moved up, a new file at the path, its lock held. Only
        the generations there are moved, found in one listing of the directory: the lock that
        every writer waits on is held for what there is, not for every number up to ``keep`` (a
        stat call each: with ``--keep-files 100000``, a quarter of a second of CPU a rotation,
        seconds under load, which held both proxies' exports back until their exit flush was
        killed by the client with spans still queued)."""
        for generation in self._generations_to_move():
            older = self._path if generation == 0 else f"{self._path}.{generation}"
            with contextlib.suppress(FileNotFoundError):  # removed by hand since
                os.replace(older, f"{self._path}.{generation + 1}")
        if self._keep == 0:
            os.truncate(self._path, 0)
            return
        rotated = self._fd
        self._fd = self._open()
        if fcntl is not None:
            fcntl.flock(self._fd, fcntl.LOCK_EX)  # a writer that opened it since may write its line first
        os.close(rotated)  # and with it its lock: its waiters find it rotated

    def _generations_to_move(self) -> list[int]:
        """The generations there that move up one, newest last (0: the file itself): those below
        ``keep``, named as :meth:`_rotate` names them (``PATH.N``, ``N`` in decimal, no leading
        zero). ``PATH.KEEP`` is replaced by the one before it (the oldest dropped); any beyond
        it (``keep`` lowered since) are left alone."""
        if self._keep == 0:
            return []
        directory, name = os.path.split(self._path)
        prefix = name + "."
        found = []
        for entry in os.listdir(directory or "."):
            suffix = entry[len(prefix) :] if entry.startswith(prefix) else ""
            if suffix.isascii() and suffix.isdigit() and suffix == str(int(suffix)) and 0 < int(suffix) < self._keep:
                found.append(int(suffix))
        return [*sorted(found, reverse=True), 0]

    def flush(self) -> None:
        """Nothing is held: each line is written as it comes."""

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                os.close(self._fd)


_run_streams: dict[str, LineStream] = {}
_run_streams_lock = threading.Lock()


def run_file_stream() -> LineStream:
    """The stream of the file named by ``MCP_OTEL_RUN_FILE``, one per process and path."""
    path = os.environ.get(RUN_FILE_ENV)
    if not path:
        raise ValueError(f"{RUN_FILE_ENV} names no file to write telemetry to")
    max_bytes = os.environ.get(RUN_FILE_MAX_BYTES_ENV)
    keep = int(os.environ.get(RUN_FILE_KEEP_ENV) or 0)
    with _run_streams_lock:
        stream = _run_streams.get(path)
        if stream is None:
            stream = _run_streams[path] = LineStream(path, int(max_bytes) if max_bytes else None, keep)
        return stream


class _Lines:
    """Writes whole lines until shut down, to the file at ``path`` (its own), to ``stream``, or
    else to the run's file; a failed write is logged, never raised."""

    def __init__(self, path: str | os.PathLike[str] | None, stream: IO[str] | LineStream | None) -> None:
        self._owned = LineStream(os.fspath(path)) if path is not None else None
        self._stream = self._owned or stream or run_file_stream()
        self._shutdown = False

    def write(self, line_of: Any, data: Any) -> bool:
        if self._shutdown or self._stream.closed:
            return False
        try:
            self._stream.write(line_of(data))
            self._stream.flush()
            return True
        except Exception as exc:
            report_once("could not write telemetry to the run's file", exc)
            return False

    def shutdown(self) -> None:
        self._shutdown = True
        if self._owned is not None:
            self._owned.close()


class JsonLinesSpanExporter(SpanExporter):
    """Spans as OTLP JSON lines (one line per batch) in the file at ``path``, on ``stream``, or
    else in the run's file."""

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, stream: IO[str] | LineStream | None = None
    ) -> None:
        self._lines = _Lines(path, stream)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        return SpanExportResult.SUCCESS if self._lines.write(spans_json_line, spans) else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self._lines.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _metrics_json_line(metrics_data: MetricsData) -> str:
    return otlp_json_line(encode_metrics(metrics_data))


def _metric_preferences() -> dict[str, Any]:
    """The OTLP exporters' temporality and aggregation, from the same settings
    (``OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE``, ...); the SDK's defaults where the
    installed version's helper cannot be found."""
    try:
        from opentelemetry.exporter.otlp.proto.common._internal.metrics_encoder import OTLPMetricExporterMixin

        mixin = OTLPMetricExporterMixin()
        mixin._common_configuration(None, None)
        return {
            "preferred_temporality": mixin._preferred_temporality,  # type: ignore[attr-defined]
            "preferred_aggregation": mixin._preferred_aggregation,  # type: ignore[attr-defined]
        }
    except Exception as exc:
        report_once("could not read the OTLP metric exporter's settings; the SDK's defaults apply", exc)
        return {}


class JsonLinesMetricExporter(MetricExporter):
    """Metrics as OTLP JSON lines (one line per collection with points) in the file at ``path``,
    on ``stream``, or else in the run's file."""

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, stream: IO[str] | LineStream | None = None
    ) -> None:
        super().__init__(**_metric_preferences())
        self._lines = _Lines(path, stream)

    def export(self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
        if not metrics_data.resource_metrics:
            return MetricExportResult.SUCCESS
        ok = self._lines.write(_metrics_json_line, metrics_data)
        return MetricExportResult.SUCCESS if ok else MetricExportResult.FAILURE

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self._lines.shutdown()
