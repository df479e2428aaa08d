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
The lines are encoded by :mod:`mcp_otel.run.otlp_json`; this module owns the file (its
rotation, its lock) and the exporters that write it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import IO, Any

from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from mcp_otel.model.config import RUN_FILE_ENV, RUN_FILE_KEEP_ENV, RUN_FILE_MAX_BYTES_ENV
from mcp_otel.model.safety import report_once
from mcp_otel.run.otlp_json import otlp_json_line, spans_json_line

fcntl: ModuleType | None
try:  # POSIX (the proxy's relay is POSIX's too); elsewhere files are not locked
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None


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
