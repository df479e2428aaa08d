"""Where the proxy's telemetry goes, and what its service is called.

Configured as ``mcp-otel run``'s agent is (:mod:`mcp_otel.run.configurator`, the SDK's own
configurator and ``OTEL_*`` variables), in the proxy's process: ``OTEL_TRACES_EXPORTER`` /
``OTEL_METRICS_EXPORTER`` (``otlp``, ``console``, ``none``, any exporter's entry point name),
``OTEL_SDK_DISABLED``, ``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES``, the OTLP endpoints,
headers and protocol. When a signal names no exporter, it goes to the OTLP JSON lines file that
``mcp-otel report`` reads (``--output``; by default one file per proxied server in the per-user
state directory, ``$XDG_STATE_HOME/mcp-otel/proxy``, else ``~/.local/state/mcp-otel/proxy``), and
to OTLP too when an endpoint is set. The file rotates past a size (``--max-file-size``), keeping
a few generations beside it (``--keep-files``), and several proxies of one name can write it at
once. The proxy's stdout is the protocol, so a console exporter writes to stderr. Exports run on
the SDK's background threads: the relay never waits for them.

Telemetry fails open: when it cannot be set up (the SDK or an exporter not installed, the file
not writable, a setting the SDK refuses), the proxy relays all the same, without telemetry, and
says once on stderr why and what to install.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from opentelemetry.metrics import Meter, NoOpMeter
from opentelemetry.trace import NoOpTracer, Tracer

from mcp_otel.model.safety import report_once
from mcp_otel.run.service_names import names_the_service
from mcp_otel.semconv import INSTRUMENTATION_SCOPE
from mcp_otel.version import __version__

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
SDK_MISSING = "the OpenTelemetry SDK is not installed here: pip install 'mcp-otel[sdk]'"
_SIGNALS = ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER")
# The file's size past which it rotates, and the generations kept beside it (NAME.jsonl.1 ...):
# about 20,000 requests a file, at most 80 MiB a server in all.
FILE_MAX_BYTES = 20 * 1024 * 1024
FILE_KEEP = 3


def state_directory(environ: Mapping[str, str] = os.environ) -> Path:
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "mcp-otel" / "proxy"


def default_output(name: str, environ: Mapping[str, str] = os.environ) -> Path:
    return state_directory(environ) / f"{_UNSAFE.sub('_', name) or 'server'}.jsonl"


def missing_requirement() -> str | None:
    """Why a proxy started from this environment could not export, or ``None``."""
    try:
        import mcp_otel.run.configurator  # noqa: F401 (the SDK, the OTLP encoders, the file exporters)
    except ImportError:
        return SDK_MISSING
    return None


class ProxyTelemetry:
    """The proxy's tracer and meter, their exporters, and their bounded shutdown. Never raises:
    without telemetry, :meth:`tracer` and :meth:`meter` are the API's no-op ones."""

    def __init__(
        self,
        output: Path,
        service_name: str,
        environ: Mapping[str, str] = os.environ,
        rotate: tuple[int, int] = (FILE_MAX_BYTES, FILE_KEEP),
    ) -> None:
        self._tracer_provider: Any = None
        self._meter_provider: Any = None
        self._exit: Any = None
        try:
            self._configure(output, service_name, environ, rotate)
        except Exception as exc:
            _say(f"could not set up telemetry ({type(exc).__name__}: {exc})")

    def _configure(self, output: Path, service_name: str, environ: Mapping[str, str], rotate: tuple[int, int]) -> None:
        if missing_requirement() is not None:
            _say(SDK_MISSING)
            return
        from opentelemetry import metrics, trace

        from mcp_otel.model.config import FILE_EXPORTER
        from mcp_otel.run.configurator import RunConfigurator, exporters_environment, sdk_disabled

        if sdk_disabled(environ):
            return
        settings = exporters_environment(environ, output, always_file=False, rotate=rotate)
        if not names_the_service(environ):
            settings["OTEL_SERVICE_NAME"] = service_name
        if any(FILE_EXPORTER in settings[variable].split(",") for variable in _SIGNALS):
            try:
                output.parent.mkdir(parents=True, exist_ok=True)
                output.open("a").close()
            except OSError as exc:
                _say(f"cannot write {output} ({exc.strerror or exc}: {exc.filename})")
                return
        if (missing := _missing_exporter(settings, environ)) is not None:
            _say(missing)
            return
        configurator = RunConfigurator()  # type: ignore[no-untyped-call]
        try:
            with _environment(settings):  # only while configuring: the server is started with the proxy's own
                configurator.configure()  # type: ignore[no-untyped-call]
        except Exception as exc:
            _say(f"the OpenTelemetry settings cannot be used here: {exc}")
            return
        self._tracer_provider = trace.get_tracer_provider()
        self._meter_provider = metrics.get_meter_provider()
        self._exit = configurator.exit_clock
        _console_to_stderr(self._tracer_provider, self._meter_provider)

    def tracer(self) -> Tracer:
        if self._tracer_provider is None:
            return NoOpTracer()
        tracer: Tracer = self._tracer_provider.get_tracer(INSTRUMENTATION_SCOPE, __version__)
        return tracer

    def meter(self) -> Meter:
        if self._meter_provider is None:
            return NoOpMeter(INSTRUMENTATION_SCOPE)
        meter: Meter = self._meter_provider.get_meter(INSTRUMENTATION_SCOPE, __version__)
        return meter

    def flush(self) -> None:
        """Export what there is now (each exporter within its own timeout)."""
        for provider in (self._tracer_provider, self._meter_provider):
            try:
                if provider is not None:
                    provider.force_flush()
            except Exception as exc:
                report_once("could not export the telemetry so far", exc)

    def shutdown(self) -> None:
        """Export what is left: the file at once, OTLP within its export timeout."""
        if self._exit is not None:
            self._exit.start()
        for provider in (self._meter_provider, self._tracer_provider):
            try:
                if provider is not None:
                    provider.shutdown()
            except Exception as exc:
                report_once("could not export the last telemetry", exc)


# What to install for the exporters people name most (their entry points' distributions).
_EXPORTER_PACKAGES = {
    "otlp_proto_grpc": "opentelemetry-exporter-otlp-proto-grpc",
    "otlp_proto_http": "opentelemetry-exporter-otlp-proto-http",
    "zipkin_json": "opentelemetry-exporter-zipkin-json",
    "zipkin_proto": "opentelemetry-exporter-zipkin-proto-http",
    "prometheus": "opentelemetry-exporter-prometheus",
}
_GROUPS = {
    "OTEL_TRACES_EXPORTER": ("traces", "opentelemetry_traces_exporter"),
    "OTEL_METRICS_EXPORTER": ("metrics", "opentelemetry_metrics_exporter"),
}


def _missing_exporter(settings: Mapping[str, str], environ: Mapping[str, str]) -> str | None:
    """The first exporter ``settings`` name that is not installed, and what to install, or ``None``.
    ``otlp`` is the exporter of its protocol, as the SDK resolves it (grpc unless set otherwise)."""
    from importlib.metadata import entry_points

    for variable, (signal, group) in _GROUPS.items():
        installed = {entry.name for entry in entry_points(group=group)}
        for name in filter(None, settings[variable].split(",")):
            if name == "none":
                continue
            if name == "otlp":
                protocol = environ.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL") or environ.get(
                    "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"
                )
                name = "otlp_proto_http" if protocol.strip().startswith("http") else "otlp_proto_grpc"
            if name not in installed:
                package = _EXPORTER_PACKAGES.get(name, "the package that provides it")
                return f"{variable} names the exporter {name!r}, which is not installed here: pip install {package}"
    return None


@contextlib.contextmanager
def _environment(settings: Mapping[str, str]) -> Iterator[None]:
    """``settings`` in ``os.environ`` (which the SDK reads) for the duration, then as it was."""
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _console_to_stderr(tracer_provider: Any, meter_provider: Any) -> None:
    """The SDK's console exporters write to stdout, which is the protocol here: to stderr instead."""
    from mcp_otel.run.configurator import exporters_of

    for holder, attribute, _signal, _failure in exporters_of(tracer_provider, meter_provider):
        exporter = getattr(holder, attribute, None)
        if exporter is not None and type(exporter).__name__ in ("ConsoleSpanExporter", "ConsoleMetricExporter"):
            exporter.out = sys.stderr


_said: set[str] = set()


def _say(problem: str) -> None:
    """Once per problem, on stderr (where a proxy's words go): the traffic is relayed all the same."""
    if problem not in _said:
        _said.add(problem)
        print(f"mcp-otel proxy: relaying without telemetry: {problem}", file=sys.stderr, flush=True)
