"""Shared fixtures: the real OpenTelemetry SDK with an in-memory exporter, and the instrumentor.

The tracer provider is installed globally because mcp 2.x and fastmcp make their own spans with
the global provider; tests must see those spans to prove that we suppress (or keep) them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_otel import McpInstrumentor
from mcp_otel.model import safety
from tests.harness import MCP_MAJOR, REPO_ROOT, env_without_otel
from tests.processes import LOOPBACK, free_port, running
from tests.servers.span_file import SPAN_FILE_ENV


class PausableExporter(InMemorySpanExporter):
    """The in-memory exporter; a test can pause it so that nothing accumulates (the soak test)."""

    paused = False

    def export(self, spans: Any) -> SpanExportResult:
        return SpanExportResult.SUCCESS if self.paused else super().export(spans)


EXPORTER = PausableExporter()
PROVIDER = TracerProvider()
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))
trace.set_tracer_provider(PROVIDER)

# Property tests run without Hypothesis's per-example deadline (200 ms by default): a timing check
# fails at random on a loaded machine (seen at 468 ms with the load at 25), and speed is the
# benchmarks' to measure, not a test's.
settings.register_profile("mcp-otel", deadline=None)
settings.load_profile("mcp-otel")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for major in (1, 2):
            if item.get_closest_marker(f"mcp{major}") and major != MCP_MAJOR:
                item.add_marker(pytest.mark.skip(reason=f"needs mcp {major}.x (installed: {MCP_MAJOR}.x)"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    EXPORTER.clear()
    yield EXPORTER
    EXPORTER.clear()


@pytest.fixture(autouse=True)
def _fresh_report_once() -> None:
    safety._reported.clear()


@pytest.fixture
def instrument(exporter: InMemorySpanExporter) -> Iterator[Callable[..., McpInstrumentor]]:
    """Call it (with settings as keyword arguments) to instrument; uninstrumented afterwards."""
    instrumentor = McpInstrumentor()

    def _instrument(**settings: Any) -> McpInstrumentor:
        instrumentor.instrument(**{"tracer_provider": PROVIDER, **settings})
        return instrumentor

    yield _instrument
    if instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.uninstrument()


@dataclass
class HttpServer:
    url: str
    span_file: Path

    def spans(self) -> list[dict[str, Any]]:
        """The spans the server exported so far."""
        if not self.span_file.exists():
            return []
        return [json.loads(line) for line in self.span_file.read_text().splitlines()]


@contextmanager
def serving_http(module: str, directory: Path) -> Iterator[HttpServer]:
    """A test server module (``python -m module http PORT``) over streamable HTTP: an instrumented
    subprocess on 127.0.0.1 writing its spans to a file in ``directory``, stopped by PID afterwards."""
    port = free_port()
    span_file = directory / "spans.jsonl"
    command = [sys.executable, "-m", module, "http", str(port)]
    env = env_without_otel(PYTHONPATH=str(REPO_ROOT), **{SPAN_FILE_ENV: str(span_file)})
    with running(command, ports=[port], env=env, cwd=REPO_ROOT, timeout=30):
        yield HttpServer(f"http://{LOOPBACK}:{port}/mcp", span_file)


@pytest.fixture(scope="session")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """The high-level test server over streamable HTTP."""
    with serving_http("tests.servers.highlevel_server", tmp_path_factory.mktemp("http-server")) as server:
        yield server


def tool_call_spans(spans: Any, kind: trace.SpanKind = trace.SpanKind.CLIENT) -> list[ReadableSpan]:
    """Every exported span of ``kind`` that describes a tools/call, whoever made it."""
    return [
        span for span in spans if span.kind == kind and (span.attributes or {}).get("mcp.method.name") == "tools/call"
    ]
