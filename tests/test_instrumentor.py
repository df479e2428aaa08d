"""The instrumentor: entry point, auto-instrumentation, import order, symmetric (un)instrument."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from types import FunctionType
from typing import Any

import pytest
import wrapt
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_otel import McpInstrumentor
from mcp_otel.instrumentation.patching import Patch, Patcher
from tests.conftest import tool_call_spans
from tests.harness import HAS_FASTMCP, MCP_MAJOR, MCP_VERSION, REPO_ROOT, build_server, env_without_otel, open_session

# Every attribute the instrumentation may replace, on this major: (module, owner path, attribute).
TARGETS = [
    ("mcp.client.session", "ClientSession", "call_tool"),
    ("mcp.client.session", "ClientSession", "initialize"),
    ("mcp.client.stdio", None, "stdio_client"),
    ("mcp", None, "stdio_client"),
    ("mcp.client.streamable_http", "StreamableHTTPTransport", "post_writer"),
    ("mcp.server.stdio", None, "stdio_server"),
]
if MCP_MAJOR == 1:
    TARGETS += [
        ("mcp.shared.session", "BaseSession", "send_notification"),
        ("mcp.server.lowlevel.server", "Server", "_handle_request"),
        ("mcp.shared.session", "RequestResponder", "respond"),
        ("mcp.server.fastmcp.server", None, "stdio_server"),
    ]
else:
    TARGETS += [
        ("mcp.server.runner", "ServerRunner", "_on_request"),
        ("mcp.server._otel", "OpenTelemetryMiddleware", "__call__"),
        ("mcp.server.mcpserver.server", None, "stdio_server"),
        ("mcp.client.session", "ClientSession", "send_notification"),
        ("mcp.shared.jsonrpc_dispatcher", None, "otel_span"),
    ]
    if MCP_VERSION >= (2, 1):  # mcp.Client starts stdio servers itself from 2.1
        TARGETS.append(("mcp.client.client", None, "stdio_client"))
if HAS_FASTMCP:
    TARGETS += [
        ("fastmcp.server.mixins.transport", None, "stdio_server"),
        ("fastmcp.client.mixins.tools", None, "client_span"),
        ("fastmcp.server.providers.proxy", None, "client_span"),
        ("fastmcp.server.server", None, "server_span"),
    ]


def current_targets() -> dict[tuple[str, str | None, str], Any]:
    found = {}
    for module_name, owner_name, attribute in TARGETS:
        owner: Any = importlib.import_module(module_name)
        if owner_name:
            owner = getattr(owner, owner_name)
            found[(module_name, owner_name, attribute)] = owner.__dict__[attribute]
        else:
            found[(module_name, owner_name, attribute)] = getattr(owner, attribute)
    return found


def test_entry_point_is_registered_as_mcp_otel() -> None:
    (entry_point,) = [ep for ep in entry_points(group="opentelemetry_instrumentor") if ep.value.startswith("mcp_otel")]
    assert entry_point.name == "mcp_otel"
    assert entry_point.load() is McpInstrumentor


def test_instrumentation_dependencies_accept_the_installed_sdk() -> None:
    assert McpInstrumentor()._check_dependency_conflicts() is None


@pytest.mark.anyio
async def test_uninstrument_restores_every_target_and_cycles_never_double_wrap(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    originals = current_targets()
    for cycle in range(2):
        exporter.clear()
        instrumentor = instrument()
        patched = current_targets()
        for key, value in patched.items():
            assert value is not originals[key], f"{key} was not patched"
            assert value.__wrapped__ is originals[key], f"{key} is wrapped more than once"
        async with open_session("memory") as session:
            await session.call_tool("ok", {})
        spans = tool_call_spans(exporter.get_finished_spans())
        assert len(spans) == 1, (cycle, [(s.name, s.instrumentation_scope.name) for s in spans])
        exporter.clear()
        instrumentor.uninstrument()
        assert current_targets() == originals
        async with open_session("memory") as session:
            await session.call_tool("ok", {})
        assert [span for span in exporter.get_finished_spans() if span.instrumentation_scope.name == "mcp_otel"] == []


@pytest.mark.anyio
async def test_a_server_built_before_instrument_is_instrumented_and_restored(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    server = build_server()
    instrumentor = instrument()
    async with open_session("memory", server) as session:
        await session.call_tool("ok", {})
    ours = [span for span in exporter.get_finished_spans() if span.instrumentation_scope.name == "mcp_otel"]
    # The handshake and the call, each seen by both sides (and mcp 2.x's tools/list, with which
    # call_tool learns the tool's output schema).
    assert sorted((span.name, span.kind.name) for span in ours if span.name != "tools/list") == [
        ("initialize", "CLIENT"),
        ("initialize", "SERVER"),
        ("notifications/initialized", "CLIENT"),
        ("notifications/initialized", "SERVER"),
        ("tools/call ok", "CLIENT"),
        ("tools/call ok", "SERVER"),
    ]
    exporter.clear()
    instrumentor.uninstrument()
    async with open_session("memory", server) as session:
        await session.call_tool("ok", {})
    assert [span for span in exporter.get_finished_spans() if span.instrumentation_scope.name == "mcp_otel"] == []


@pytest.mark.skipif(MCP_MAJOR != 1, reason="mcp 1.x's own per-request steps")
def test_the_sdks_own_steps_of_every_request_are_plain_functions(instrument: Callable[..., Any]) -> None:
    """What only the SDK calls, on every request, is patched as a plain function: a wrapt proxy
    is bound anew on every call (patching.plain_method; the in-process cost target)."""
    originals = current_targets()
    instrument()
    for key in [
        ("mcp.server.lowlevel.server", "Server", "_handle_request"),
        ("mcp.shared.session", "RequestResponder", "respond"),
    ]:
        patched = current_targets()[key]
        assert patched is not originals[key]
        assert type(patched) is FunctionType, key  # not a wrapt proxy (whose class it claims)
        assert patched.__wrapped__ is originals[key]


def test_instrument_never_raises(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def broken(self: Patcher) -> None:
        raise RuntimeError("patching exploded")

    monkeypatch.setattr(Patcher, "start", broken)
    instrumentor = McpInstrumentor()
    instrumentor.instrument(max_name_length="many")
    try:
        assert "patching exploded" in caplog.text
        assert "max_name_length" in caplog.text
    finally:
        instrumentor.uninstrument()


def test_missing_patch_target_is_skipped(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, instrument: Callable[..., Any]
) -> None:
    from mcp_otel.instrumentation import client

    real_patches = client.ClientSide.patches

    def with_a_missing_target(self: Any) -> list[Patch]:
        return [Patch("mcp.client.session", "ClientSession.no_such_method", lambda *a: None), *real_patches(self)]

    monkeypatch.setattr(client.ClientSide, "patches", with_a_missing_target)
    instrument()
    assert "ClientSession.no_such_method not found" in caplog.text
    # The other patches still applied.
    assert isinstance(current_targets()[("mcp.client.session", "ClientSession", "call_tool")], wrapt.FunctionWrapper)


def test_opentelemetry_instrument_runs_an_uninstrumented_agent() -> None:
    """As people run it: opentelemetry-distro configures the SDK (mcp-otel registers no
    configurator), mcp-otel's instrumentor is found by its entry point."""
    from tests.cli.distro import distro_path

    command = [
        os.path.join(os.path.dirname(sys.executable), "opentelemetry-instrument"),
        sys.executable,
        "-m",
        "tests.agents.simple_agent",
    ]
    env = env_without_otel(
        PYTHONPATH=os.pathsep.join([str(REPO_ROOT), str(distro_path())]),
        OTEL_TRACES_EXPORTER="console",
        OTEL_METRICS_EXPORTER="none",
        OTEL_LOGS_EXPORTER="none",
        OTEL_SERVICE_NAME="agent",
    )
    completed = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    spans = _console_spans(completed.stdout)
    ours = [span for span in spans if span["name"].startswith("tools/call")]
    summary = [(span["name"], span["attributes"]["tool.outcome"], span["status"]["status_code"]) for span in ours]
    assert summary == [
        ("tools/call ok", "ok", "UNSET"),
        ("tools/call tool_error", "failed", "ERROR"),
        ("tools/call slow", "cancelled", "UNSET"),
    ]
    assert all(span["kind"] == "SpanKind.CLIENT" for span in ours)
    assert all(span["attributes"]["network.transport"] == "pipe" for span in ours)


def test_instrumenting_before_mcp_is_imported() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "tests.agents.instrument_first"],
        env=env_without_otel(PYTHONPATH=str(REPO_ROOT)),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    spans = [json.loads(line) for line in completed.stdout.splitlines()]
    ours = [
        (s["name"], s["attributes"].get("mcp.request.outcome"), s["attributes"].get("network.transport")) for s in spans
    ]
    assert [span for span in ours if span[0].startswith("tools/call")] == [
        ("tools/call ok", "ok", "pipe"),
        ("tools/call tool_error", "failed", "pipe"),
        ("tools/call slow", "cancelled", "pipe"),
    ]


def _console_spans(text: str) -> list[dict[str, Any]]:
    """The JSON objects the console span exporter printed, one after another."""
    decoder = json.JSONDecoder()
    spans, index = [], 0
    while True:
        start = text.find("{", index)
        if start < 0:
            return spans
        span, index = decoder.raw_decode(text, start)
        spans.append(span)
