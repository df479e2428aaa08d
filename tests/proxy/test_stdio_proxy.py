"""``mcp-otel proxy`` in front of an uninstrumented stdio server (this major's lowlevel test
server), driven by this process's instrumented client: the proxy's SERVER spans state what an
instrumented server would (the server-side table of tests/server/test_server_spans.py), in the
client's trace, with one point per request, and the bytes go through unchanged."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from benchmarks.proxy import CLI_ON_ASYNCIO
from mcp_otel.proxy.stdio import STOP_WAIT
from mcp_otel.semconv import (
    MCP_CLIENT_OPERATION_DURATION,
    MCP_CLIENT_SESSION_DURATION,
    MCP_REQUEST_INPUT_RESPONSES,
    MCP_SERVER_OPERATION_DURATION,
    MCP_SERVER_SESSION_DURATION,
)
from tests.conftest import tool_call_spans
from tests.harness import MCP_MAJOR, REPO_ROOT, env_without_otel, stdio_parameters
from tests.processes import missing
from tests.proxy import otlp
from tests.proxy.test_http_proxy import outcome_of
from tests.semconv.checker import Point, Span, point_violations, same_as_spans, span_violations
from tests.server.test_server_spans import (
    CLIENT_CANCEL,
    DISCONNECT,
    SERVER_CASES,
    Expect,
    ServerCase,
    assert_server_span,
)
from tests.servers.tools import SERVER_NAME, SERVER_VERSION
from tests.test_person_in_the_loop import ACCEPT, DECLINED, ELICIT, Person
from tests.test_person_in_the_loop import CASES as PERSON_CASES

pytestmark = pytest.mark.anyio

MCP_OTEL = str(Path(sys.executable).with_name("mcp-otel"))
# The proxy on asyncio's own event loop, as where uvloop is not installed.
ON_ASYNCIO = [sys.executable, "-c", CLI_ON_ASYNCIO]


@pytest.fixture(params=["uvloop", "asyncio"])
def mcp_otel(request: pytest.FixtureRequest) -> list[str]:
    """The proxy's command on each event loop it runs on (the relay is the loop's callbacks)."""
    return [MCP_OTEL] if request.param == "uvloop" else ON_ASYNCIO


def proxied(output: Path, module: str | None = None, span_file: Path | None = None, *options: str) -> Any:
    """A test server's stdio parameters (by default the lowlevel one; instrumented, writing to
    ``span_file``, if given), with the proxy in front (writing to ``output``)."""
    from mcp.client.stdio import StdioServerParameters

    server = stdio_parameters(module, span_file)
    arguments = ["proxy", *options, "--output", str(output), "--", server.command, *server.args]
    return StdioServerParameters(command=MCP_OTEL, args=arguments, env=server.env, cwd=server.cwd)


@asynccontextmanager
async def proxied_session(output: Path, module: str | None = None, **callbacks: Any) -> AsyncIterator[ClientSession]:
    from mcp.client.stdio import stdio_client

    async with (
        stdio_client(proxied(output, module), errlog=sys.stderr) as streams,
        ClientSession(*streams, **callbacks) as session,
    ):
        await session.initialize()
        yield session


def finished(output: Path) -> list[dict[str, Any]]:
    """The proxy's spans, once it has exited (its last export holds the session's duration, a
    server's or, as the client, a client's)."""
    sessions = (MCP_SERVER_SESSION_DURATION, MCP_CLIENT_SESSION_DURATION)
    otlp.wait_for(output, lambda path: any(otlp.points(path, name) for name in sessions))
    return otlp.spans(output)


def proxy_expectation(case: ServerCase) -> Expect | None:
    """What the proxy says of a case: what an instrumented server says over stdio, except where
    the wire shows more than the server process could (mcp 1.x servers before 1.27 ran on after
    the client hung up, and were stopped before ending the span: the proxy sees the hang-up)."""
    if case.id in ("disconnect", "timeout"):
        return DISCONNECT if case.id == "disconnect" or MCP_MAJOR == 1 else CLIENT_CANCEL
    return case.expect("stdio")


@pytest.mark.parametrize("case", SERVER_CASES, ids=lambda case: case.id)
async def test_proxy_server_span(
    case: ServerCase, instrument: Callable[..., Any], exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    expect = proxy_expectation(case)
    if expect is None:
        pytest.skip(f"{case.id} does not apply over stdio on mcp {MCP_MAJOR}.x")
    instrument()
    output = tmp_path / "proxy.jsonl"
    async with proxied_session(output) as session:
        await session.list_tools()
        await case.drive(session, exporter)

    servers = [s for s in finished(output) if s["kind"] == "SpanKind.SERVER" and "tools/call" in s["name"]]
    assert len(servers) == (2 if case.id == "cancel_after_response" else 1), [s["name"] for s in servers]
    span = servers[0]
    assert_server_span(span, expect, case.tool)
    assert span["attributes"]["network.transport"] == "pipe"
    assert span["scope"] == "mcp_otel"
    # The instrumented client's span is the parent: one trace, one span per side.
    client = next(s for s in tool_call_spans(exporter.get_finished_spans()) if s.name == f"tools/call {case.tool}")
    assert span["context"]["trace_id"] == f"0x{client.get_span_context().trace_id:032x}"
    assert span["parent_id"] == f"0x{client.get_span_context().span_id:016x}"
    assert span["attributes"]["jsonrpc.request.id"] == client.attributes["jsonrpc.request.id"]


async def test_every_request_and_one_point_each(tmp_path: Path) -> None:
    """An uninstrumented client: every request has its SERVER span (the handshake's too, which
    learns the server's name from its answer); the points count
    each request once, with its span's outcome; the service is named after the server."""
    output = tmp_path / "proxy.jsonl"
    async with proxied_session(output) as session:
        await session.list_tools()
        for tool in ("ok", "ok", "tool_error", "rpc_error"):
            with suppress(Exception):
                await session.call_tool(tool, {})
    spans = finished(output)
    summary = sorted((s["name"], s["attributes"].get("mcp.request.outcome")) for s in spans)
    assert summary == [
        ("initialize", "ok"),
        ("notifications/initialized", None),  # a span of its own, no outcome
        ("tools/call ok", "ok"),
        ("tools/call ok", "ok"),
        ("tools/call rpc_error", "failed"),
        ("tools/call tool_error", "failed"),
        ("tools/list", "ok"),
    ]
    assert {s["kind"] for s in spans} == {"SpanKind.SERVER"}
    assert {s["scope"] for s in spans} == {"mcp_otel"}
    assert {s["service"] for s in spans} == {server_module_name()}
    assert {(s["attributes"]["mcp.server.name"], s["attributes"]["mcp.server.version"]) for s in spans} == {
        (SERVER_NAME, SERVER_VERSION)
    }
    points = otlp.points(output, MCP_SERVER_OPERATION_DURATION)
    counted = sorted(
        (
            p["attributes"]["mcp.method.name"],
            p["attributes"].get("gen_ai.tool.name"),
            p["attributes"]["mcp.request.outcome"],
            p["count"],
        )
        for p in points
    )
    assert counted == [
        ("initialize", None, "ok", 1),
        ("tools/call", "ok", "ok", 2),
        ("tools/call", "rpc_error", "failed", 1),
        ("tools/call", "tool_error", "failed", 1),
        ("tools/list", None, "ok", 1),
    ]
    (session_point,) = otlp.points(output, MCP_SERVER_SESSION_DURATION)
    assert session_point["attributes"]["mcp.server.name"] == SERVER_NAME
    assert "error.type" not in session_point["attributes"]
    # Every span and point as the MCP conventions say (tests/semconv), the caller fault's too.
    checked = [
        Span(
            s["name"],
            s["kind"].removeprefix("SpanKind."),
            s["status"]["status_code"],
            s["status"]["description"],
            s["attributes"],
        )
        for s in spans
    ]
    measured = [Point(MCP_SERVER_OPERATION_DURATION, p["attributes"]) for p in points]
    measured.append(Point(MCP_SERVER_SESSION_DURATION, session_point["attributes"]))
    violations = [v for span in checked for v in span_violations(span)]
    violations += [v for point in measured for v in point_violations(point)] + same_as_spans(checked, measured)
    assert violations == []


def server_module_name() -> str:
    return stdio_parameters().args[1]  # python -m tests.servers.vN_server -> its module name


async def test_the_server_dying_fails_its_calls_in_flight(tmp_path: Path) -> None:
    """The server process exits mid-call: the call failed with it (a server fault), and the
    session ended with it."""
    output = tmp_path / "proxy.jsonl"
    async with proxied_session(output) as session:
        with suppress(Exception):
            await session.call_tool("die", {})
    (span,) = [s for s in finished(output) if s["name"] == "tools/call die"]
    assert span["status"]["status_code"] == "ERROR"
    assert span["attributes"]["tool.outcome"] == "failed"
    assert span["attributes"]["error.type"] == "shutdown"
    (session_point,) = otlp.points(output, MCP_SERVER_SESSION_DURATION)
    assert session_point["attributes"]["error.type"] == "shutdown"


# What the stand-in server does: copies stdin to stdout as it comes, writes to stderr, exits 3.
ECHO = (
    "import sys\n"
    "sys.stderr.write('echo: started\\n'); sys.stderr.flush()\n"
    "while chunk := sys.stdin.buffer.read1(65536):\n"
    "    sys.stdout.buffer.write(chunk); sys.stdout.buffer.flush()\n"
    "sys.exit(3)\n"
)
WIRE = (
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}\n'
    b"not json at all\n"
    b"\xff\xfe\x00 not utf-8\r\n"
    b'[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]\n'
    b'{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":true}}\n'
    + b'{"jsonrpc":"2.0","id":"'
    + b"x" * 300_000
    + b'","method":"tools/call"}\n'
    + b'{"jsonrpc":"2.0","id":4,"method":"tools/call"'  # no newline: the stream just ends
)


def test_bytes_pass_through_unchanged(mcp_otel: list[str], tmp_path: Path) -> None:
    """Malformed lines, bytes that are not UTF-8, batches, a long line, a last line without its
    newline: relayed as they are, both ways; the server's stderr passes through; the proxy
    exits with the server's status; its own output is on stderr only."""
    output = tmp_path / "proxy.jsonl"
    command = [*mcp_otel, "proxy", "--name", "echo", "--output", str(output), "--", sys.executable, "-c", ECHO]
    completed = subprocess.run(
        command, input=WIRE, capture_output=True, timeout=60, env=env_without_otel(), cwd=REPO_ROOT
    )
    assert completed.stdout == WIRE
    assert completed.returncode == 3
    assert b"echo: started" in completed.stderr
    assert b"Traceback" not in completed.stderr
    otlp.wait_for(output, lambda path: otlp.points(path, MCP_SERVER_SESSION_DURATION))
    assert {s["service"] for s in otlp.spans(output)} <= {"echo"}


def test_stdin_and_stdout_that_are_files(mcp_otel: list[str], tmp_path: Path) -> None:
    """Not pipes (a shell's redirections): the client's bytes read from a file to its end, the
    server's written to a file, unchanged; the file's end is the client's hanging up."""
    sent, received = tmp_path / "wire.in", tmp_path / "wire.out"
    sent.write_bytes(WIRE)
    command = [*mcp_otel, "proxy", "--output", str(tmp_path / "proxy.jsonl"), "--", sys.executable, "-c", ECHO]
    with sent.open("rb") as stdin, received.open("wb") as stdout:
        completed = subprocess.run(command, stdin=stdin, stdout=stdout, timeout=60, env=env_without_otel())
    assert completed.returncode == 3
    assert received.read_bytes() == WIRE


# Sleeps, then reads its stdin to the end: its length, its digest, and how much more memory its
# parent (the proxy) held at its peak than when it started the server (kB).
SLOW_READER = (
    "import hashlib, os, sys, time\n"
    "def peak():\n"
    "    status = open(f'/proc/{os.getppid()}/status').read().splitlines()\n"
    "    return next(int(line.split()[1]) for line in status if line.startswith('VmHWM:'))\n"
    "before = peak()\n"
    "time.sleep(1)\n"
    "digest, size = hashlib.sha256(), 0\n"
    "while chunk := sys.stdin.buffer.read1(65536):\n"
    "    digest.update(chunk); size += len(chunk)\n"
    "print(size, digest.hexdigest(), peak() - before)\n"
)


def test_a_server_that_reads_slowly_holds_the_client_back(mcp_otel: list[str], tmp_path: Path) -> None:
    """The client writes 64 MiB while the server reads nothing: the proxy stops reading the
    client while the server's pipe is full, so it never holds the bytes itself (its peak memory
    grows by far less than them: 1 MiB here, 64 MiB without), and the server gets every byte,
    in order."""
    sent = bytes(range(256)) * (64 * 4096)
    command = [*mcp_otel, "proxy", "--output", str(tmp_path / "proxy.jsonl"), "--", sys.executable, "-c", SLOW_READER]
    completed = subprocess.run(command, input=sent, capture_output=True, timeout=120, env=env_without_otel())
    assert completed.returncode == 0, completed.stderr
    size, digest, grown_kb = completed.stdout.split()
    assert (int(size), digest.decode()) == (len(sent), hashlib.sha256(sent).hexdigest())
    assert int(grown_kb) * 1024 < len(sent) / 8, f"the proxy held {int(grown_kb) // 1024} MiB more"


def _echoed(tmp_path: Path, output: Path, **settings: str) -> subprocess.CompletedProcess[bytes]:
    """WIRE sent through the proxy in front of ECHO, with the ``OTEL_*`` ``settings``."""
    command = [MCP_OTEL, "proxy", "--name", "echo", "--output", str(output), "--", sys.executable, "-c", ECHO]
    env = {**env_without_otel(), **settings}
    return subprocess.run(command, input=WIRE, capture_output=True, timeout=60, env=env, cwd=tmp_path)


def _relaying_without_telemetry(stderr: bytes) -> list[str]:
    return [line for line in stderr.decode(errors="replace").splitlines() if "relaying without telemetry" in line]


def test_console_exporters_write_to_stderr_and_the_protocol_is_untouched(tmp_path: Path) -> None:
    """``OTEL_TRACES_EXPORTER=console``: the spans on stderr (stdout is the protocol), the bytes
    relayed unchanged; both signals named, so no file."""
    output = tmp_path / "proxy.jsonl"
    completed = _echoed(tmp_path, output, OTEL_TRACES_EXPORTER="console", OTEL_METRICS_EXPORTER="console")
    assert completed.stdout == WIRE
    assert completed.returncode == 3
    stderr = completed.stderr.decode(errors="replace")
    assert '"name": "tools/call x"' in stderr  # the SDK's console span
    assert '"service.name": "echo"' in stderr
    assert '"mcp.server.operation.duration"' in stderr  # the SDK's console metrics
    assert not output.exists()
    assert _relaying_without_telemetry(completed.stderr) == []


def test_the_sdk_disabled_means_no_telemetry_and_the_same_bytes(tmp_path: Path) -> None:
    output = tmp_path / "proxy.jsonl"
    completed = _echoed(tmp_path, output, OTEL_SDK_DISABLED="true")
    assert completed.stdout == WIRE
    assert completed.returncode == 3
    assert not output.exists()
    assert _relaying_without_telemetry(completed.stderr) == []  # the user's choice: nothing to say


def test_the_service_is_named_as_the_settings_say(tmp_path: Path) -> None:
    output = tmp_path / "proxy.jsonl"
    completed = _echoed(tmp_path, output, OTEL_RESOURCE_ATTRIBUTES="service.name=mine,deployment.environment=dev")
    assert completed.stdout == WIRE
    otlp.wait_for(output, lambda path: otlp.points(path, MCP_SERVER_SESSION_DURATION))
    assert {s["service"] for s in otlp.spans(output)} == {"mine"}


@pytest.mark.parametrize(
    ("settings", "output", "said"),
    [
        (
            {"OTEL_TRACES_EXPORTER": "nosuch"},
            "proxy.jsonl",
            "OTEL_TRACES_EXPORTER names the exporter 'nosuch', which is not installed here: "
            "pip install the package that provides it",
        ),
        (
            {"OTEL_METRICS_EXPORTER": "otlp"},  # grpc, as the SDK resolves it: not in the sdk extra
            "proxy.jsonl",
            "OTEL_METRICS_EXPORTER names the exporter 'otlp_proto_grpc', which is not installed here: "
            "pip install opentelemetry-exporter-otlp-proto-grpc",
        ),
        ({}, "not-a-directory/proxy.jsonl", "cannot write {output} (File exists: {output.parent})"),
    ],
    ids=["unknown exporter", "otlp over grpc", "unwritable file"],
)
def test_telemetry_that_cannot_be_set_up_leaves_the_traffic_as_it_is(
    settings: dict[str, str], output: str, said: str, tmp_path: Path
) -> None:
    """Fail open: the bytes relayed unchanged, the server's status, and one line on stderr that
    says why nothing is recorded and what to do."""
    (tmp_path / "not-a-directory").write_text("")
    completed = _echoed(tmp_path, tmp_path / output, **settings)
    assert completed.stdout == WIRE
    assert completed.returncode == 3
    expected = "mcp-otel proxy: relaying without telemetry: " + said.format(output=tmp_path / output)
    assert _relaying_without_telemetry(completed.stderr) == [expected]
    assert b"Traceback" not in completed.stderr


def _every_generation(output: Path) -> list[dict[str, Any]]:
    """The spans of ``output`` and of every generation it was rotated into (each line parsed:
    a torn one fails here)."""
    from mcp_otel.run.calls import with_generations

    return [span for path in with_generations(output) for span in otlp.spans(path)]


def _proxy_process(output: Path) -> int:
    """The pid of the proxy writing ``output``."""
    for entry in Path("/proc").iterdir():
        with suppress(OSError):
            command = (entry / "cmdline").read_bytes() if entry.name.isdigit() else b""
            if str(output).encode() in command and b"proxy" in command:
                return int(entry.name)
    raise AssertionError(f"no proxy writes {output}")


def _resources(pid: int) -> tuple[int, int]:
    """A process's open file descriptors and resident memory (KiB)."""
    status = Path(f"/proc/{pid}/status").read_text()
    resident = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    return len(list(Path(f"/proc/{pid}/fd").iterdir())), resident


# Exports every 50 ms and a file of 64 KiB: the proxy's file rotates every few exports.
_ROTATING = ("--max-file-size", "0.0625", "--keep-files", "100000")


async def test_the_file_rotates_under_a_long_run_and_every_span_is_kept_once(tmp_path: Path) -> None:
    """3,000 calls through a proxy whose file rotates every few exports: every call's span is in
    one generation, once; the proxy holds no more files and no more memory as it rotates."""
    from mcp.client.stdio import stdio_client

    output = tmp_path / "proxy.jsonl"
    parameters = proxied(output, None, None, *_ROTATING)
    parameters.env = {**(parameters.env or {}), "OTEL_BSP_SCHEDULE_DELAY": "50"}
    seen = []
    async with stdio_client(parameters, errlog=sys.stderr) as streams, ClientSession(*streams) as session:
        await session.initialize()
        pid = _proxy_process(output)
        for calls in range(1, 3_001):
            await session.call_tool("ok", {})
            if calls in (1_000, 3_000):
                await anyio.sleep(0.3)  # the exports so far written
                seen.append(_resources(pid))
    spans = [span for span in _every_generation(output) if span["name"] == "tools/call ok"]
    assert len(spans) == 3_000
    assert len({span["context"]["span_id"] for span in spans}) == 3_000
    from mcp_otel.run.calls import with_generations

    assert len(with_generations(output)) > 5  # about 2 MB of spans in files of 64 KiB
    (files_before, memory_before), (files_after, memory_after) = seen
    assert files_after == files_before
    assert memory_after - memory_before < 8 * 1024


# As _ROTATING, every generation kept however many there could be: a rotation costs what is
# there, not what --keep-files allows.
_KEEPING_ALL = ("--max-file-size", "0.0625", "--keep-files", str(10**9))


async def test_two_proxies_of_one_name_write_one_file_at_once(tmp_path: Path) -> None:
    """Two clients (two desktop apps) each start the same server behind its own proxy, both
    writing one rotating file: every span of both is there once, no line torn. Each proxy's
    last spans are written by the flush at the client's hang-up, which the client's stdio
    transport cuts short 4 s later (stdin closed, 2 s, SIGTERM, 2 s, SIGKILL). Rotations once
    cost a stat call for every generation --keep-files allows, under the lock both proxies
    wait on: 100,000 took seconds a rotation on loaded cores, both proxies' exports fell
    hundreds of spans behind, and their exit flushes were killed with them still queued;
    with 10**9 kept, the first rotation never ends and every span after it is lost."""
    from mcp.client.stdio import stdio_client

    output = tmp_path / "proxy.jsonl"

    async def client(calls: int) -> None:
        parameters = proxied(output, None, None, "--name", "tools", *_KEEPING_ALL)
        parameters.env = {**(parameters.env or {}), "OTEL_BSP_SCHEDULE_DELAY": "50"}
        async with stdio_client(parameters, errlog=sys.stderr) as streams, ClientSession(*streams) as session:
            await session.initialize()
            for _ in range(calls):
                await session.call_tool("ok", {})

    async with anyio.create_task_group() as group:
        group.start_soon(client, 800)
        group.start_soon(client, 800)
    spans = [span for span in _every_generation(output) if span["name"] == "tools/call ok"]
    assert len(spans) == 1_600
    assert len({span["context"]["span_id"] for span in spans}) == 1_600
    assert {span["service"] for span in spans} == {"tools"}


@pytest.mark.parametrize("size", [100_000, 150_000])
def test_a_server_that_exits_after_writing_loses_no_byte_to_a_slow_client(
    mcp_otel: list[str], size: int, tmp_path: Path
) -> None:
    """The server writes more than the pipes hold and exits while the client is not reading:
    the proxy still delivers every byte before it exits (it once ended holding the tail, lost
    when it exited). The client reads only once the server is gone and the proxy had time to
    exit; its stdin stays open, as a client's does until it has what it wants."""
    server_command = [sys.executable, str(REPO_ROOT / "tests" / "servers" / "last_words.py"), str(size)]
    command = [*mcp_otel, "proxy", "--output", str(tmp_path / "proxy.jsonl"), "--", *server_command]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proxy:
        assert proxy.stdout is not None
        assert proxy.stderr is not None
        server = int(proxy.stderr.readline())
        deadline = time.monotonic() + 30
        while _alive(server) and time.monotonic() < deadline:
            time.sleep(0.05)
        with suppress(subprocess.TimeoutExpired):
            proxy.wait(timeout=2)  # the time it once took to exit with bytes unsent
        received = proxy.stdout.read(size + 100)
        assert proxy.stdin is not None
        proxy.stdin.close()
        assert proxy.wait(timeout=30) == 0
    assert len(received) == size + 72
    assert received.endswith(b'"}}\n')


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, exited but not yet reaped, does not)."""
    with suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    return False


# A stand-in server that says when it is told to stop, and exits 7.
STOPPABLE = (
    "import signal, sys, time\n"
    "def stop(number, frame):\n"
    "    sys.stderr.write(f'stopped by {number}\\n'); sys.stderr.flush(); sys.exit(7)\n"
    "signal.signal(signal.SIGTERM, stop)\n"
    "sys.stderr.write('ready\\n'); sys.stderr.flush()\n"
    "time.sleep(60)\n"
)


def test_a_signal_to_the_proxy_reaches_the_server(mcp_otel: list[str], tmp_path: Path) -> None:
    """SIGTERM sent to the proxy goes to the server, and the proxy exits with its status."""
    command = [*mcp_otel, "proxy", "--output", str(tmp_path / "proxy.jsonl"), "--", sys.executable, "-c", STOPPABLE]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proxy:
        assert proxy.stderr is not None
        assert proxy.stderr.readline() == b"ready\n"
        proxy.send_signal(signal.SIGTERM)
        assert proxy.wait(timeout=30) == 7
        assert proxy.stderr.read().startswith(f"stopped by {signal.SIGTERM.value}".encode())


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


@pytest.mark.parametrize(
    ("sender", "expected"),
    [
        # The client (the process that started the proxy) ends it, its stdin still open, as
        # @ai-sdk/mcp's close() does: it left, abandoning its call.
        ("client", ("UNSET", "cancelled", None, "disconnect")),
        # Anyone else (an operator, a service manager): the server shut down under its call.
        ("another process", ("ERROR", "failed", "shutdown", None)),
    ],
)
def test_sigterm_by_the_client_is_its_leaving_by_anyone_else_a_shutdown(
    sender: str, expected: tuple[str, str, str | None, str | None], tmp_path: Path
) -> None:
    """SIGTERM with a call in flight goes on to the server either way, and the proxy exits with
    its status; who sent it says whose the call's end was (docs/proxy.md, "When it stops")."""
    output = tmp_path / "proxy.jsonl"
    server = stdio_parameters()
    command = [MCP_OTEL, "proxy", "--output", str(output), "--", server.command, *server.args]
    version = "2025-06-18"
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=server.env, cwd=server.cwd
    ) as proxy:
        assert proxy.stdin is not None
        assert proxy.stdout is not None
        initialize = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        proxy.stdin.write(_line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}))
        proxy.stdin.flush()
        assert json.loads(proxy.stdout.readline())["id"] == 1
        call = {"name": "slow", "arguments": {"seconds": 60}}
        proxy.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proxy.stdin.write(_line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}))
        proxy.stdin.write(_line({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        proxy.stdin.flush()
        # The ping's answer: the proxy has relayed the call before it (one stream, in order).
        assert json.loads(proxy.stdout.readline()) == {"jsonrpc": "2.0", "id": 3, "result": {}}
        if sender == "client":
            proxy.send_signal(signal.SIGTERM)
        else:
            subprocess.run(["kill", "-TERM", str(proxy.pid)], check=True)
        assert proxy.wait(timeout=30) == 128 + signal.SIGTERM  # the server's status: SIGTERM ended it
    (span,) = [s for s in finished(output) if s["name"] == "tools/call slow"]
    assert outcome_of(span) == expected


# A server that works on once its stdin has ended: exits 7 half a second later, or runs until
# SIGTERM ends it, or until SIGKILL does (it ignores SIGTERM).
BUSY = (
    "import signal, sys, time\n"
    "if sys.argv[1] == 'ignores SIGTERM':\n"
    "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "sys.stderr.write('ready\\n'); sys.stderr.flush()\n"
    "sys.stdin.buffer.read()\n"
    "time.sleep(0.5 if sys.argv[1] == 'exits' else 60)\n"
    "sys.exit(7)\n"
)


@pytest.mark.parametrize(
    ("server", "status", "after"),
    [
        ("exits", 7, 0.5),
        ("dies on SIGTERM", 128 + signal.SIGTERM, STOP_WAIT),
        ("ignores SIGTERM", 128 + signal.SIGKILL, 2 * STOP_WAIT),
    ],
)
def test_a_server_working_on_after_the_client_left(
    mcp_otel: list[str], server: str, status: int, after: float, tmp_path: Path
) -> None:
    """The client closes the proxy's stdin and the server works on: it has STOP_WAIT seconds,
    then SIGTERM, then as long again, then SIGKILL, and the proxy exits with its status, saying
    nothing (it once exited 1 with a CancelledError's traceback once STOP_WAIT had passed)."""
    command = [*mcp_otel, "proxy", "--output", str(tmp_path / "proxy.jsonl"), "--", sys.executable, "-c", BUSY, server]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_without_otel()
    ) as proxy:
        assert proxy.stdin is not None
        assert proxy.stdout is not None
        assert proxy.stderr is not None
        assert proxy.stderr.readline() == b"ready\n"
        proxy.stdin.close()
        left = time.monotonic()
        exited = proxy.wait(timeout=30)
        took = time.monotonic() - left
        assert (exited, proxy.stdout.read(), proxy.stderr.read()) == (status, b"", b"")
    # Not before its time (less a millisecond: uvloop's timers count whole ones), nor long after.
    assert after - 0.01 <= took < after + 5, took


ENV = "/usr/bin/env"  # not Python, so it shows its environment as it was given
# What the client gives the proxy besides PATH and HOME.
ENVIRONMENTS: dict[str, dict[bytes, bytes]] = {
    "no locale (as desktop clients)": {},
    "LC_CTYPE=C, no LANG": {b"LC_CTYPE": b"C"},
    "a locale set": {b"LANG": b"C.UTF-8", b"LC_ALL": b"C.UTF-8", b"LC_CTYPE": b"POSIX"},
    "Python's and OpenTelemetry's settings": {
        b"PYTHONUTF8": b"1",
        b"PYTHONDONTWRITEBYTECODE": b"1",
        b"OTEL_RESOURCE_ATTRIBUTES": b"service.name=mine",
        b"OTEL_BSP_SCHEDULE_DELAY": b"50",
    },
    "bytes that are not UTF-8": {b"CAF\xc9": b"\xff\xfe not utf-8", b"EMPTY": b"", b"EQUALS": b"a=b=c"},
}


def _client_environment(extra: dict[bytes, bytes], tmp_path: Path) -> dict[bytes, bytes]:
    return {b"PATH": os.environb[b"PATH"], b"HOME": bytes(tmp_path), **extra}


@pytest.mark.parametrize("extra", ENVIRONMENTS.values(), ids=ENVIRONMENTS)
def test_the_server_gets_the_environment_the_client_gave(
    mcp_otel: list[str], extra: dict[bytes, bytes], tmp_path: Path
) -> None:
    """Byte for byte and in order, what the server's environment is without the proxy: nothing
    added, removed or changed by the proxy's interpreter (its locale coercion once gave every
    server LC_CTYPE=C.UTF-8 where the client set no locale, as desktop clients do)."""
    env = _client_environment(extra, tmp_path)
    direct = subprocess.run([ENV, "-0"], env=env, capture_output=True, timeout=60, check=True)
    command = [*mcp_otel, "proxy", "--output", str(tmp_path / "proxy.jsonl"), "--", ENV, "-0"]
    proxied = subprocess.run(command, input=b"", env=env, capture_output=True, timeout=60)
    assert (proxied.returncode, proxied.stderr) == (0, b"")
    assert proxied.stdout == direct.stdout
    assert direct.stdout == b"".join(name + b"=" + value + b"\0" for name, value in env.items())


# Where there is no /proc (macOS, BSD): the environment the proxy gives the server, written as
# `env -0` would, names sorted.
WITHOUT_PROC = (
    "import os, sys\n"
    "from pathlib import Path\n"
    "from mcp_otel.proxy import stdio\n"
    "stdio.STARTED_WITH = Path('/no/such/proc')\n"
    "given = stdio.server_environment()\n"
    "environment = os.environb if given is None else given\n"
    "sys.stdout.buffer.write(b''.join(k + b'=' + v + b'\\0' for k, v in sorted(environment.items())))\n"
)


# The client's variables besides PATH and HOME, and those the proxy does not give the server as
# given where there is no /proc: those only that coercion overwrote or, where UTF-8 mode was
# asked for and LANG is unset, left as it sets them (the documented limits).
WITHOUT_PROC_CASES = [
    *(pytest.param(extra, (), id=name) for name, extra in ENVIRONMENTS.items() if name != "LC_CTYPE=C, no LANG"),
    pytest.param({b"LC_CTYPE": b"C.UTF-8"}, (), id="LC_CTYPE=C.UTF-8 given"),
    pytest.param({b"PYTHONCOERCECLOCALE": b"0"}, (), id="coercion off"),
    pytest.param({b"LC_CTYPE": b"C"}, (b"LC_CTYPE",), id="LC_CTYPE=C"),
    pytest.param({b"LANG": b"C.UTF-8", b"LC_CTYPE": b"C"}, (b"LC_CTYPE",), id="LC_CTYPE=C under LANG"),
    pytest.param(
        {b"LC_CTYPE": b"C.UTF-8", b"PYTHONUTF8": b"1"}, (b"LC_CTYPE",), id="LC_CTYPE=C.UTF-8 given, UTF-8 mode on"
    ),
]


@pytest.mark.parametrize(("extra", "lost"), WITHOUT_PROC_CASES)
def test_without_proc_the_coercion_is_undone(
    extra: dict[bytes, bytes], lost: tuple[bytes, ...], tmp_path: Path
) -> None:
    """Elsewhere than Linux, the inherited environment without the LC_CTYPE that Python's locale
    coercion set, and only where it set it; an LC_CTYPE the client set that named the C locale
    was overwritten, so it is lost (the documented limit)."""
    env = _client_environment(extra, tmp_path)
    completed = subprocess.run([sys.executable, "-c", WITHOUT_PROC], env=env, capture_output=True, timeout=60)
    assert (completed.returncode, completed.stderr) == (0, b"")
    expected = sorted((name, value) for name, value in env.items() if name not in lost)
    assert completed.stdout == b"".join(name + b"=" + value + b"\0" for name, value in expected)


@pytest.mark.parametrize("case", PERSON_CASES, ids=str)
async def test_a_person_in_the_loop(case: Any, tmp_path: Path) -> None:
    """The server asks for input mid-call: its request's CLIENT span has the person's answer,
    and a no makes the tool call it was asked for a cancel (``input_declined``), as in process."""
    person = Person(case.answer)
    output = tmp_path / "proxy.jsonl"
    callbacks = {"elicitation_callback": person.elicitation, "sampling_callback": person.sampling}
    async with proxied_session(output, "tests.servers.person_server", **callbacks) as session:
        with suppress(Exception):
            await session.call_tool(case.tool, {"path": "/tmp/x", "text": "t"})
    spans = finished(output)
    (call,) = [s for s in spans if s["name"] == f"tools/call {case.tool}"]
    assert call["kind"] == "SpanKind.SERVER"
    assert call["status"]["status_code"] == case.status.name
    assert call["attributes"]["tool.outcome"] == case.outcome
    assert call["attributes"].get("error.type") == case.error_type
    assert call["attributes"].get("tool.cancel.reason") == case.cancel_reason
    (asked,) = [s for s in spans if s["name"] == case.input_method]
    assert asked["kind"] == "SpanKind.CLIENT"
    assert asked["parent_id"] == call["context"]["span_id"]  # asked while handling the call
    declined = case.answer != ACCEPT  # a decline, a dismissal, a rejected sampling request
    assert asked["attributes"]["mcp.request.outcome"] == ("cancelled" if declined else "ok")
    assert asked["attributes"].get("mcp.request.cancel.reason") == (DECLINED if declined else None)
    if case.input_method == ELICIT:
        assert asked["attributes"]["mcp.elicitation.action"] == case.answer


async def test_a_typescript_server_behind_the_proxy(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    """The reference server from npm (TypeScript SDK) behind the proxy, an instrumented agent in
    front: the same answers as without the proxy; a SERVER span for each request the agent
    sends and a CLIENT span for each the server sends (the person's declined elicitation a
    cancel, the rest ok), each agent span's child."""
    from mcp import StdioServerParameters

    from tests.third_party.test_everything_server import SERVER, _exchange

    if not (SERVER.exists() and shutil.which("node")):
        missing("server-everything", "third-party")
    direct = await _exchange()
    output = tmp_path / "proxy.jsonl"
    arguments = ["proxy", "--name", "server-everything", "--output", str(output), "--", "node", str(SERVER), "stdio"]
    exporter.clear()
    instrument()
    assert await _exchange(StdioServerParameters(command=MCP_OTEL, args=arguments, env=env_without_otel())) == direct
    spans = finished(output)
    assert_everything_exchanged(spans, exporter)


def assert_everything_exchanged(spans: list[dict[str, Any]], exporter: InMemorySpanExporter) -> None:
    """The proxy's spans of server-everything's exchange (tests.third_party's ``_exchange``): a
    SERVER span per request the agent sent, its CLIENT span the parent; a CLIENT span per request
    the server sent; each ok but the person's declined elicitation (a cancel)."""
    from tests.third_party.test_everything_server import REQUESTS, SERVER_REQUESTS

    spans = otlp.requests(spans)
    handled = [s for s in spans if s["kind"] == "SpanKind.SERVER"]
    asked = [s for s in spans if s["kind"] == "SpanKind.CLIENT"]
    assert sorted(s["attributes"]["mcp.method.name"] for s in handled) == sorted(
        ["initialize", *(m for m, _ in REQUESTS)]
    )
    assert sorted(s["attributes"]["mcp.method.name"] for s in asked) == sorted(SERVER_REQUESTS)
    for span in spans:
        declined = span["name"] == "elicitation/create"
        assert span["attributes"]["mcp.request.outcome"] == ("cancelled" if declined else "ok"), span["name"]
        assert span["status"]["status_code"] == "UNSET", span["name"]
        assert span["service"] == "server-everything"
    agent = {
        s.attributes["jsonrpc.request.id"]: s
        for s in exporter.get_finished_spans()
        if s.kind.name == "CLIENT" and "jsonrpc.request.id" in s.attributes
    }
    for span in handled:
        parent = agent[span["attributes"]["jsonrpc.request.id"]].get_span_context()
        assert span["parent_id"] == f"0x{parent.span_id:016x}", span["name"]


def test_the_proxy_needs_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_otel.cli.main import main

    with pytest.raises(SystemExit) as exit_info:
        main(["proxy", "--name", "x"])
    assert exit_info.value.code == 2
    assert "give the server's command after --" in capsys.readouterr().err


def test_a_command_that_cannot_start(tmp_path: Path) -> None:
    command = [MCP_OTEL, "proxy", "--output", str(tmp_path / "p.jsonl"), "--", str(tmp_path / "no-such-server")]
    completed = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert completed.returncode == 127
    assert b"mcp-otel proxy: cannot run" in completed.stderr
    assert completed.stdout == b""


AS_CLIENT_CASES = {
    # tool -> (status, outcome, error.type, rpc.response.status_code, cancel reason): the client's view
    "ok": ("UNSET", "ok", None, None, None),
    "tool_error": ("ERROR", "failed", "tool_error", None, None),
    "rpc_error": ("ERROR", "failed", "-32602", "-32602", None),
    "crash": ("ERROR", "failed", "0", None, None),
    "slow": ("UNSET", "cancelled", None, None, "caller"),  # the caller stops waiting after 0.3 s
}


@pytest.mark.parametrize("tool", AS_CLIENT_CASES)
async def test_as_the_client_in_front_of_an_instrumented_server(tool: str, tmp_path: Path) -> None:
    """``--as client``: an uninstrumented client, an instrumented server. The proxy's CLIENT
    span states the client's outcome, and carries its context to the server, whose SERVER span
    is its child: one trace, one span per side."""
    output, span_file = tmp_path / "proxy.jsonl", tmp_path / "server-spans.jsonl"
    from mcp.client.stdio import stdio_client

    async with (
        stdio_client(proxied(output, None, span_file, "--as", "client"), errlog=sys.stderr) as streams,
        ClientSession(*streams) as session,
    ):
        await session.initialize()
        with anyio.move_on_after(0.3), suppress(Exception):
            await session.call_tool(tool, {})
    (client,) = [s for s in finished(output) if s["name"] == f"tools/call {tool}"]
    assert client["kind"] == "SpanKind.CLIENT"
    attributes = client["attributes"]
    observed = (
        client["status"]["status_code"],
        attributes["tool.outcome"],
        attributes.get("error.type"),
        attributes.get("rpc.response.status_code"),
        attributes.get("tool.cancel.reason"),
    )
    assert observed == AS_CLIENT_CASES[tool]
    assert client["service"] == f"{server_module_name()}-client"
    servers = [
        s
        for s in (json.loads(line) for line in span_file.read_text().splitlines())
        if s["name"] == f"tools/call {tool}"
    ]
    assert [s["parent_id"] for s in servers] == [client["context"]["span_id"]]
    assert servers[0]["context"]["trace_id"] == client["context"]["trace_id"]
    (session_point,) = otlp.points(output, MCP_CLIENT_SESSION_DURATION)
    assert session_point["attributes"]["mcp.server.name"] == SERVER_NAME
    assert "error.type" not in session_point["attributes"]


THIRD_PARTY = REPO_ROOT / "tests" / "third_party"
TS_CLIENT = THIRD_PARTY / "ts_client.mjs"


def npm_server(name: str) -> Path:
    return THIRD_PARTY / "node_modules" / "@modelcontextprotocol" / name / "dist" / "index.js"


def ts_agent(
    plan: list[dict[str, Any]], server: list[str], output: Path, name: str, *options: str, **env: str
) -> list[dict[str, Any]]:
    """The TypeScript SDK's client running ``plan`` against ``server`` behind the proxy (its
    ``options``; ``env``: the server's environment besides this one's)."""
    if not (TS_CLIENT.exists() and npm_server("sdk").parent.exists() and shutil.which("node")):
        missing("the TypeScript SDK and the npm servers", "third-party")
    proxy = [MCP_OTEL, "proxy", *options, "--name", name, "--output", str(output), "--", *server]
    env = {**env_without_otel(), **env, "MCP_PLAN": json.dumps(plan)}
    completed = subprocess.run(
        ["node", str(TS_CLIENT), *proxy], capture_output=True, text=True, timeout=120, env=env, cwd=THIRD_PARTY
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return [json.loads(line) for line in completed.stdout.splitlines()]


def tool_outcomes(output: Path) -> list[tuple[str, str, str | None, str | None]]:
    return [
        (
            s["name"],
            s["attributes"]["tool.outcome"],
            s["attributes"].get("error.type"),
            s["attributes"].get("tool.cancel.reason"),
        )
        for s in finished(output)
        if s["attributes"].get("mcp.method.name") == "tools/call"
    ]


def test_a_typescript_agent_and_server_everything(tmp_path: Path) -> None:
    """No Python at either end: the TypeScript SDK's client, the reference server, the proxy
    between them stating each call's outcome (the agent's abort is the client's cancel)."""
    plan = [
        {"tool": "echo", "arguments": {"message": "hi"}},
        {"tool": "get-sum", "arguments": {"a": "two"}},
        {"tool": "trigger-long-running-operation", "arguments": {"duration": 10, "steps": 10}, "abortAfterMs": 300},
        {"tool": "echo", "arguments": {"message": "after"}},
    ]
    output = tmp_path / "proxy.jsonl"
    seen = ts_agent(plan, ["node", str(npm_server("server-everything")), "stdio"], output, "server-everything")
    assert [step.get("isError", step.get("error")) for step in seen] == [False, True, "aborted", False]
    assert sorted(tool_outcomes(output)) == [
        ("tools/call echo", "ok", None, None),
        ("tools/call echo", "ok", None, None),
        ("tools/call get-sum", "failed", "tool_error", None),
        ("tools/call trigger-long-running-operation", "cancelled", None, "client"),
    ]


def test_the_memory_and_filesystem_servers(tmp_path: Path) -> None:
    """Two more reference servers from npm behind the proxy, driven by the TypeScript agent."""
    memory = tmp_path / "memory.jsonl"
    entity = {"name": "proxy", "entityType": "tool", "observations": ["relays bytes"]}
    plan = [
        {"tool": "create_entities", "arguments": {"entities": [entity]}},
        {"tool": "search_nodes", "arguments": {"query": "proxy"}},
        {"tool": "no_such_tool", "arguments": {}},
    ]
    store = tmp_path / "memory-store.json"
    server = ["env", f"MEMORY_FILE_PATH={store}", "node", str(npm_server("server-memory"))]
    seen = ts_agent(plan, server, memory, "server-memory")
    assert [step.get("isError", step.get("error")) for step in seen] == [False, False, True]
    assert sorted(tool_outcomes(memory)) == [
        ("tools/call create_entities", "ok", None, None),
        ("tools/call no_such_tool", "failed", "tool_error", None),  # the server answers isError
        ("tools/call search_nodes", "ok", None, None),
    ]
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.txt").write_text("hello")
    files = tmp_path / "files.jsonl"
    plan = [
        {"tool": "read_text_file", "arguments": {"path": str(notes / "a.txt")}},
        {"tool": "read_text_file", "arguments": {"path": str(notes / "missing.txt")}},
        {"tool": "list_allowed_directories", "arguments": {}},
    ]
    seen = ts_agent(plan, ["node", str(npm_server("server-filesystem")), str(notes)], files, "server-filesystem")
    assert [step.get("isError", step.get("error")) for step in seen] == [False, True, False]
    assert sorted(tool_outcomes(files)) == [
        ("tools/call list_allowed_directories", "ok", None, None),
        ("tools/call read_text_file", "failed", "tool_error", None),
        ("tools/call read_text_file", "ok", None, None),
    ]


@pytest.mark.mcp2
async def test_a_2026_07_28_session(tmp_path: Path) -> None:
    """mcp 2.x's ``Client`` over stdio discovers the server (``server/discover``, no initialize):
    the server's name comes from the discovery's answer, the protocol from each request."""
    from mcp import Client

    output = tmp_path / "proxy.jsonl"
    async with Client(proxied(output)) as client:
        await client.call_tool("ok", {})
    spans = {s["name"]: s for s in finished(output)}
    call = spans["tools/call ok"]["attributes"]
    assert (call["mcp.server.name"], call["mcp.protocol.version"], call["tool.outcome"]) == (
        SERVER_NAME,
        "2026-07-28",
        "ok",
    )
    assert spans["server/discover"]["attributes"]["mcp.request.outcome"] == "ok"


@pytest.mark.mcp2
@pytest.mark.parametrize("case", PERSON_CASES, ids=str)
async def test_a_person_in_the_loop_in_input_rounds(case: Any, tmp_path: Path) -> None:
    """2026-07-28: the server asks for input by answering ``input_required``, and the client
    sends the tool call again with the person's answers. Each round is a request of the server's,
    as in process: the asking round states what it was answered with and no outcome (no point);
    the last round has the call's outcome, a no to the input making it a cancel (the round's
    ``inputResponses`` say so), and says how many answers it carried."""
    from mcp import Client

    person = Person(case.answer)
    output = tmp_path / "proxy.jsonl"
    callbacks = {"elicitation_callback": person.elicitation, "sampling_callback": person.sampling}
    async with Client(proxied(output, "tests.servers.person_server"), mode="auto", **callbacks) as client:
        with suppress(Exception):  # a rejected sampling request is the call's error in mcp 2.x
            await client.call_tool(case.tool, {"path": "/tmp/x", "text": "t"})
    rounds = [s for s in finished(output) if s["name"] == f"tools/call {case.tool}"]
    asking, *final = rounds
    assert asking["attributes"]["mcp.request.result_type"] == "input_required"
    assert "mcp.request.outcome" not in asking["attributes"]
    assert asking["status"]["status_code"] == "UNSET"
    assert len(final) == (0 if case.answer == "reject-sampling" else 1)  # a rejection ends it in the client
    points = otlp.points(output, MCP_SERVER_OPERATION_DURATION)
    if not final:
        assert [p for p in points if p["attributes"].get("gen_ai.tool.name") == case.tool] == []
        return
    (last,) = final
    assert last["status"]["status_code"] == case.status.name
    assert last["attributes"]["tool.outcome"] == case.outcome
    assert last["attributes"].get("error.type") == case.error_type
    assert last["attributes"].get("tool.cancel.reason") == case.cancel_reason
    assert last["attributes"][MCP_REQUEST_INPUT_RESPONSES] == 1
    (point,) = [p for p in points if p["attributes"].get("gen_ai.tool.name") == case.tool]
    assert (point["attributes"]["tool.outcome"], point["count"]) == (case.outcome, 1)


def test_the_proxy_killed_leaves_no_server_behind(tmp_path: Path) -> None:
    """SIGKILL to the proxy (no chance to stop the server): the server sees its stdin close, as
    when its client dies, and an MCP server exits then. Nothing is left running."""
    server = stdio_parameters(None, None)
    command = [MCP_OTEL, "proxy", "--output", str(tmp_path / "proxy.jsonl"), "--", server.command, *server.args]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=server.env, cwd=server.cwd
    ) as proxy:
        children = Path(f"/proc/{proxy.pid}/task/{proxy.pid}/children")
        deadline = time.monotonic() + 30
        while not children.read_text().split() and time.monotonic() < deadline:
            time.sleep(0.05)
        (child,) = children.read_text().split()
        proxy.kill()
        proxy.wait(timeout=30)

    def running() -> bool:
        stat = Path(f"/proc/{child}/stat")
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited
        except FileNotFoundError:
            return False

    deadline = time.monotonic() + 30
    while running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running()


# The TypeScript SDK's client against a Python test server through the proxy: (tool, the step's
# options) -> what the client saw, and the proxy's span as the server (status, tool.outcome,
# error.type, cancel reason) and as the client in front of an instrumented server.
TS_MATRIX = [
    ("ok", {}, False, ("UNSET", "ok", None, None), ("UNSET", "ok", None, None)),
    ("tool_error", {}, True, ("ERROR", "failed", "tool_error", None), ("ERROR", "failed", "tool_error", None)),
    # A caller fault: the server's span stays UNSET with no error.type (semconv); the client's is an error.
    ("rpc_error", {}, {"code": -32602}, ("UNSET", "failed", None, None), ("ERROR", "failed", "-32602", None)),
    ("server_error", {}, {"code": -32603}, ("ERROR", "failed", "-32603", None), ("ERROR", "failed", "-32603", None)),
    # The SDK's timeout and the agent's own abort: a notifications/cancelled either way.
    (
        "slow",
        {"timeoutMs": 300},
        {"code": -32001},
        ("UNSET", "cancelled", None, "client"),
        ("UNSET", "cancelled", None, "caller"),
    ),
    (
        "slow",
        {"abortAfterMs": 300},
        "aborted",
        ("UNSET", "cancelled", None, "client"),
        ("UNSET", "cancelled", None, "caller"),
    ),
    # The server crashing mid-call (last: nothing is answered after it).
    (
        "die",
        {},
        {"code": -32000},
        ("ERROR", "failed", "shutdown", None),
        ("ERROR", "failed", "connection_closed", None),
    ),
]


def span_facts(span: dict[str, Any]) -> tuple[str, str, str | None, str | None]:
    attributes = span["attributes"]
    return (
        span["status"]["status_code"],
        attributes["tool.outcome"],
        attributes.get("error.type"),
        attributes.get("tool.cancel.reason"),
    )


@pytest.mark.parametrize("side", ["server", "client"])
def test_a_typescript_agent_and_a_python_server(side: str, tmp_path: Path) -> None:
    """Each outcome the TypeScript SDK's client can meet, through the proxy standing in for the
    server (an uninstrumented Python server) or for the client (an instrumented one: one trace,
    the server's span the child of the proxy's)."""
    plan = [{"tool": tool, "arguments": {"seconds": 5}, **options} for tool, options, *_ in TS_MATRIX]
    output, span_file = tmp_path / "proxy.jsonl", tmp_path / "server-spans.jsonl"
    server = stdio_parameters(None, span_file if side == "client" else None)
    options = ("--as", "client") if side == "client" else ()
    seen = ts_agent(plan, [server.command, *server.args], output, "python-server", *options, **server.env)
    assert [step.get("isError", step.get("error")) for step in seen] == [saw for _, _, saw, _, _ in TS_MATRIX]
    spans = sorted(
        (s for s in finished(output) if s["attributes"].get("mcp.method.name") == "tools/call"),
        key=lambda s: s["start_time"],
    )
    assert [s["kind"] for s in spans] == [f"SpanKind.{side.upper()}"] * len(TS_MATRIX)
    expected = [as_server if side == "server" else as_client for *_, as_server, as_client in TS_MATRIX]
    assert [(s["name"], span_facts(s)) for s in spans] == [
        (f"tools/call {tool}", facts) for (tool, *_), facts in zip(TS_MATRIX, expected, strict=True)
    ]
    points = otlp.points(output, MCP_SERVER_OPERATION_DURATION if side == "server" else MCP_CLIENT_OPERATION_DURATION)
    assert sum(p["count"] for p in points if p["attributes"].get("mcp.method.name") == "tools/call") == len(TS_MATRIX)
    if side == "client":  # the instrumented server's spans are the proxy's children (but the dead one's)
        served = [json.loads(line) for line in span_file.read_text().splitlines()]
        by_parent = {s["parent_id"]: s for s in served if s["name"].startswith("tools/call")}
        assert len(by_parent) == len(TS_MATRIX) - 1
        for span in spans[:-1]:
            assert by_parent[span["context"]["span_id"]]["context"]["trace_id"] == span["context"]["trace_id"]
