"""The OpenTelemetry SDK configurator behind ``mcp-otel run``: the SDK's own configuration from
the environment, plus, when ``MCP_OTEL_RUN_FILE`` names a file, spans and metrics written there
as OTLP JSON lines (the OpenTelemetry OTLP JSON file exporter).

``mcp-otel run`` selects it with ``OTEL_PYTHON_CONFIGURATOR=mcp_otel``. Loaded any other way
(without the variable) it configures exactly what the SDK's default configurator does.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from opentelemetry.sdk._configuration import _OTelSDKConfigurator

RUN_FILE_ENV = "MCP_OTEL_RUN_FILE"
FILE_EXPORTER = "otlp_json_file"  # the file exporter's entry point name, for traces and metrics


class LineStream:
    """One file shared by the span and metric exporters: each line is written whole."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 (open for the life of the process)
        self._lock = threading.Lock()

    @property
    def closed(self) -> bool:
        return self._file.closed

    def write(self, text: str) -> int:
        with self._lock:
            written = self._file.write(text)
            self._file.flush()
            return written

    def flush(self) -> None:
        with self._lock:
            self._file.flush()


class RunConfigurator(_OTelSDKConfigurator):
    def _configure(self, **kwargs: Any) -> None:
        path = os.environ.get(RUN_FILE_ENV)
        if path:
            from opentelemetry.exporter.otlp.json.file import FileMetricExporter, FileSpanExporter

            stream = LineStream(path)
            kwargs["exporter_args_map"] = {FileSpanExporter: {"stream": stream}, FileMetricExporter: {"stream": stream}}
        super()._configure(**kwargs)  # type: ignore[no-untyped-call]
