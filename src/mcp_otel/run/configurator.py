"""The OpenTelemetry SDK configuration of mcp-otel's own processes: ``mcp-otel run``'s agent
and ``mcp-otel proxy``. The SDK's own configurator, reading the standard ``OTEL_*`` variables,
plus, when ``MCP_OTEL_RUN_FILE`` names a file, spans and metrics written there as OTLP JSON
lines (:mod:`mcp_otel.run.otlp_file`, loaded only when named). :func:`exporters_environment` says which exporters each
signal gets, the same way for both.

Exit is bounded: with the collector down or hanging, the SDK's shutdown would wait out the
export in flight and then the export timeout again for the last spans and the last metrics. Here
each OTLP exporter gets one budget, its export timeout (``OTEL_EXPORTER_OTLP_{TRACES,METRICS}_TIMEOUT``,
else ``OTEL_EXPORTER_OTLP_TIMEOUT``, else 10 s, as the SDK resolves it), counted from the moment
the process starts exiting; an OTLP export that would start after it gives up at once (the local
file still gets everything). Exit is thus delayed by at most the longest of those timeouts.

``mcp-otel run``'s agent runs it at start-up (:func:`agent_python_path`); the proxy runs it
in-process. mcp-otel registers no configurator entry point: ``opentelemetry-instrument`` alone
never runs it.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.sdk._configuration import _OTelSDKConfigurator
from opentelemetry.sdk.environment_variables import (
    OTEL_EXPORTER_OTLP_METRICS_TIMEOUT,
    OTEL_EXPORTER_OTLP_TIMEOUT,
    OTEL_EXPORTER_OTLP_TRACES_TIMEOUT,
)

from mcp_otel.model.config import FILE_EXPORTER, RUN_FILE_ENV, RUN_FILE_KEEP_ENV, RUN_FILE_MAX_BYTES_ENV
from mcp_otel.model.safety import report_once

# Put first on the agent's PYTHONPATH: its sitecustomize configures the SDK with RunConfigurator.
# The name ends as opentelemetry-instrument's directory does, so that a recipe that leaves
# auto-instrumentation out of a child's PYTHONPATH (docs/proxy.md) leaves this out too.
AUTO_INSTRUMENTATION = Path(__file__).with_name("run_auto_instrumentation")
_EXPORTER_VARIABLES = {"traces": "OTEL_TRACES_EXPORTER", "metrics": "OTEL_METRICS_EXPORTER"}
_ENDPOINTS = {
    "traces": ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
    "metrics": ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"),
}
_PROTOCOLS = {
    "traces": ("OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
    "metrics": ("OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"),
}


def exporters_environment(
    environ: Mapping[str, str], output: Path, *, always_file: bool, rotate: tuple[int, int] | None = None
) -> dict[str, str]:
    """The variables that make the SDK's configuration export what mcp-otel's processes export,
    to be laid over ``environ``. Per signal: the exporters ``OTEL_TRACES_EXPORTER`` /
    ``OTEL_METRICS_EXPORTER`` name (``none``: none); when they name none, OTLP when an endpoint
    is set for the signal (over HTTP unless ``OTEL_EXPORTER_OTLP_*PROTOCOL`` says otherwise: the
    ``sdk`` extra brings the HTTP exporter) and the OTLP JSON lines file ``output``. With
    ``always_file`` (``mcp-otel run``, whose summary reads it) the file is added in every case.
    ``rotate``: (bytes, generations) past which the file rotates and how many it keeps."""
    env = {RUN_FILE_ENV: str(output)}
    if rotate is not None:
        env[RUN_FILE_MAX_BYTES_ENV], env[RUN_FILE_KEEP_ENV] = (str(value) for value in rotate)
    for signal, variable in _EXPORTER_VARIABLES.items():
        named = [name.strip() for name in environ.get(variable, "").split(",") if name.strip()]
        if named:
            names = [name for name in named if name.lower() != "none"]
        else:
            if any(environ.get(endpoint) for endpoint in _ENDPOINTS[signal]):
                names = ["otlp" if any(environ.get(p) for p in _PROTOCOLS[signal]) else "otlp_proto_http"]
            else:
                names = []
        if always_file or not named:
            names.append(FILE_EXPORTER)
        env[variable] = ",".join(dict.fromkeys(names)) or "none"
    env["OTEL_LOGS_EXPORTER"] = environ.get("OTEL_LOGS_EXPORTER") or "none"
    return env


def agent_python_path(python_path: str | None, cwd: str) -> str:
    """The agent's ``PYTHONPATH``, laid out as ``opentelemetry-instrument`` lays out its own:
    :data:`AUTO_INSTRUMENTATION` first, then the working directory unless already there, then the
    user's entries."""
    entries = python_path.split(os.pathsep) if python_path else []
    if cwd not in entries:
        entries.insert(0, cwd)
    ours = str(AUTO_INSTRUMENTATION)
    return os.pathsep.join([ours, *(entry for entry in entries if entry != ours)])


def sdk_disabled(environ: Mapping[str, str]) -> bool:
    """``OTEL_SDK_DISABLED=true``: no telemetry at all (the SDK's own rule: only "true")."""
    return environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"


class RunConfigurator(_OTelSDKConfigurator):
    """The SDK's configurator, each OTLP exporter's time at exit bounded (:attr:`exit_clock`,
    started at exit, or by whoever shuts the providers down first)."""

    exit_clock: _ExitClock | None = None

    def _configure(self, **kwargs: Any) -> None:
        # The file exporters (FILE_EXPORTER) find the run's file themselves: older SDKs'
        # configurators pass exporters no arguments.
        super()._configure(**kwargs)  # type: ignore[no-untyped-call]
        try:
            self.exit_clock = bound_exit(trace.get_tracer_provider(), metrics.get_meter_provider())
        except Exception as exc:
            report_once("could not bound the exporters' time at exit", exc)


class _ExitClock:
    """When the process started exiting (``None`` until then)."""

    def __init__(self) -> None:
        self.started: float | None = None

    def start(self) -> None:
        self.started = time.monotonic()


class _BoundedExporter:
    """An OTLP exporter whose exports, once the process exits, end ``seconds`` after that: one
    that would start later fails at once, one still running then is abandoned (else: the exporter)."""

    def __init__(self, inner: Any, clock: _ExitClock, seconds: float, failure: Any) -> None:
        self._inner = inner
        self._clock = clock
        self._seconds = seconds
        self._failure = failure

    def export(self, *args: Any, **kwargs: Any) -> Any:
        started = self._clock.started
        if started is None:
            return self._inner.export(*args, **kwargs)
        remaining = started + self._seconds - time.monotonic()
        if remaining <= 0:
            return self._failure
        outcome = [self._failure]

        def export() -> None:
            try:
                outcome[0] = self._inner.export(*args, **kwargs)
            except Exception as exc:
                report_once("an exporter failed at exit", exc)

        # A daemon thread: what the budget abandons does not keep the process alive.
        worker = threading.Thread(target=export, name="mcp-otel-exit-export", daemon=True)
        worker.start()
        worker.join(remaining)
        return self._failure if worker.is_alive() else outcome[0]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


DEFAULT_EXPORT_TIMEOUT = 10.0  # seconds, the SDK's
_SIGNAL_TIMEOUT = {"traces": OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, "metrics": OTEL_EXPORTER_OTLP_METRICS_TIMEOUT}


def export_timeout(signal: str) -> float:
    """The export timeout of the SDK's OTLP exporter for ``signal`` ("traces", "metrics"),
    resolved as the SDK does: its own variable, else the shared one, else the default (also
    when the value is not a number)."""
    raw = (
        os.environ.get(_SIGNAL_TIMEOUT[signal]) or os.environ.get(OTEL_EXPORTER_OTLP_TIMEOUT) or DEFAULT_EXPORT_TIMEOUT
    )
    try:
        return float(raw)
    except ValueError:
        return DEFAULT_EXPORT_TIMEOUT


def exporters_of(tracer_provider: Any, meter_provider: Any) -> Iterator[tuple[Any, str, str, Any]]:
    """Where the providers keep each exporter: (the object holding it, its attribute, the signal,
    the signal's failure result). SDK internals, feature-checked: what is not found is skipped."""
    from opentelemetry.sdk.metrics.export import MetricExportResult
    from opentelemetry.sdk.trace.export import SpanExportResult

    processors = getattr(getattr(tracer_provider, "_active_span_processor", None), "_span_processors", ())
    for processor in processors:
        batch = getattr(processor, "_batch_processor", None)  # SDK 1.3x: the processor holds it itself
        holder, attribute = (processor, "span_exporter") if batch is None else (batch, "_exporter")
        yield holder, attribute, "traces", SpanExportResult.FAILURE
    readers: Any = getattr(meter_provider, "_metric_readers", None)
    if readers is None:  # SDK 1.3x: in its configuration
        readers = getattr(getattr(meter_provider, "_sdk_config", None), "metric_readers", ())
    for reader in readers:
        yield reader, "_exporter", "metrics", MetricExportResult.FAILURE


def bound_exit(tracer_provider: Any, meter_provider: Any) -> _ExitClock | None:
    """Bound the providers' OTLP exporters at exit (anything unexpected leaves the exporters as
    they are)."""
    clock = _ExitClock()
    wrapped = 0
    for holder, attribute, signal, failure in exporters_of(tracer_provider, meter_provider):
        exporter = getattr(holder, attribute, None)
        if type(exporter).__module__.startswith("opentelemetry.exporter.otlp.proto"):
            setattr(holder, attribute, _BoundedExporter(exporter, clock, export_timeout(signal), failure))
            wrapped += 1
    if not wrapped:
        return None
    # Registered after the providers' own exit handlers, so it runs before them (atexit is LIFO).
    atexit.register(clock.start)
    return clock
