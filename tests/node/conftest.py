"""What the tests of the npm package ``mcp-otel`` (node/) with the Python one share: the
TypeScript programs they start (ts_agent.cjs, ts_server.cjs: the MCP TypeScript SDK, v1 or v2,
instrumented by the built package, telemetry.cjs), and every span, whichever language wrote it,
as one record.

They need node/'s dependencies installed and the package built (the Makefile builds it before
pytest runs); without them these tests are skipped when run by hand, and fail under make.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan

from tests.harness import REPO_ROOT
from tests.processes import needs, no_python_sdk

NODE_PACKAGE = REPO_ROOT / "node"
PROGRAMS = Path(__file__).resolve().parent
AGENT = PROGRAMS / "ts_agent.cjs"
SERVER = PROGRAMS / "ts_server.cjs"
# Where the TypeScript programs write their spans, one JSON line each (telemetry.cjs).
TS_SPAN_FILE_ENV = "MCP_OTEL_TS_SPAN_FILE"
# The MCP TypeScript SDK's generations: v1 @modelcontextprotocol/sdk, v2 @modelcontextprotocol/client|server.
GENERATIONS = ("v1", "v2")


def _unavailable() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not (NODE_PACKAGE / "node_modules").is_dir():
        return "node/node_modules is missing: `make node` installs it"
    if not (NODE_PACKAGE / "dist" / "cjs" / "index.js").is_file():
        return "node/dist is missing: `make node` builds it"
    return None


UNAVAILABLE = _unavailable()
needs_node = needs(UNAVAILABLE)
# Each generation, as the parameter of a test whose other side is not Python either (a Go or Rust
# program): no Python SDK in it, so it runs once.
TYPESCRIPT_PEERS = [pytest.param(generation, marks=[needs_node, no_python_sdk]) for generation in GENERATIONS]


@dataclass(frozen=True)
class Span:
    """A finished span as both languages' tests read it: ids in lowercase hex, kind and status by name."""

    name: str
    kind: str  # CLIENT, SERVER ...
    trace_id: str
    span_id: str
    parent_id: str | None
    status: str  # UNSET, OK, ERROR
    attributes: Mapping[str, Any]

    def picked(self, keys: Iterable[str]) -> dict[str, Any]:
        """Those of ``keys`` the span has, with their values."""
        return {key: self.attributes[key] for key in keys if key in self.attributes}


def ts_spans(path: Path) -> list[Span]:
    """The spans a TypeScript program wrote to ``path`` (telemetry.cjs), in the order they ended."""
    if not path.exists():
        return []
    spans = []
    for line in path.read_text(encoding="utf-8").splitlines():
        span = json.loads(line)
        spans.append(
            Span(
                span["name"],
                span["kind"],
                span["trace_id"],
                span["span_id"],
                span["parent_id"],
                span["status"],
                span["attributes"],
            )
        )
    return spans


def python_file_spans(path: Path) -> list[Span]:
    """The spans a Python test server wrote to its span file (tests/servers/span_file.py)."""
    spans = []
    for line in path.read_text(encoding="utf-8").splitlines():
        span = json.loads(line)
        parent = span["parent_id"]
        spans.append(
            Span(
                span["name"],
                span["kind"].removeprefix("SpanKind."),
                span["context"]["trace_id"].removeprefix("0x"),
                span["context"]["span_id"].removeprefix("0x"),
                parent.removeprefix("0x") if parent else None,
                span["status"]["status_code"],
                span["attributes"],
            )
        )
    return spans


def python_spans(spans: Iterable[ReadableSpan]) -> list[Span]:
    """Spans of this process (the in-memory exporter's)."""
    found = []
    for span in spans:
        context, parent = span.get_span_context(), span.parent
        assert context is not None
        found.append(
            Span(
                span.name,
                span.kind.name,
                f"{context.trace_id:032x}",
                f"{context.span_id:016x}",
                f"{parent.span_id:016x}" if parent else None,
                span.status.status_code.name,
                dict(span.attributes or {}),
            )
        )
    return found


def tool_calls(spans: Iterable[Span], kind: str) -> list[Span]:
    """The tools/call spans of ``kind``."""
    return [span for span in spans if span.kind == kind and span.attributes.get("mcp.method.name") == "tools/call"]


def child_of(parent: Span, spans: Iterable[Span]) -> Span:
    """The one span of ``spans`` whose parent is ``parent``."""
    (child,) = [span for span in spans if span.parent_id == parent.span_id]
    return child
