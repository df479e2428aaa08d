"""Two ``mcp-otel proxy`` replicas behind HAProxy (Debian's, started here like the collector),
in front of one streamable HTTP server, with the repository's configuration
(``deploy/haproxy/mcp-otel-replicas.cfg``: sessions pinned by ``Mcp-Session-Id``, a client's
closing its stream passed on): every outcome, cancel reason and server name as with one proxy,
each request recorded once across replicas.
The same traffic round robin (the configuration without its ``stick`` lines) shows what pinning
saves: the replicas see halves of sessions, and record no outcome they did not see; the replica
that did not see the handshake asks the upstream the server's name itself (leaving no session
there), and every span has it. A replica killed mid-call: the session goes on through the
other, nothing recorded twice."""

from __future__ import annotations

import asyncio
import re
import shutil
import signal
import socket
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_otel.semconv import MCP_OTEL_UNOBSERVED_REQUESTS
from tests.harness import MCP_MAJOR, REPO_ROOT, env_without_otel, open_http_session
from tests.processes import LOOPBACK, free_port, missing, running
from tests.proxy import otlp
from tests.proxy.test_http_proxy import MCP_OTEL, call, outcome_of, tool_spans
from tests.server.test_server_spans import client_cancel
from tests.servers.tools import SERVER_NAME

pytestmark = pytest.mark.anyio

CONFIG = REPO_ROOT / "deploy" / "haproxy" / "mcp-otel-replicas.cfg"
REPLICAS = 2


@dataclass
class Replicated:
    url: str  # HAProxy's
    upstream: str
    outputs: list[Path]  # each replica's telemetry
    proxies: list[Any]
    server_log: Path  # the upstream's

    def logs(self) -> list[str]:
        """What each replica said on stderr."""
        return [output.with_suffix(".log").read_text() for output in self.outputs]

    def stop(self) -> list[list[dict[str, Any]]]:
        """Stop the replicas (SIGTERM); each one's spans."""
        for proxy in self.proxies:
            if proxy.poll() is None:
                proxy.send_signal(signal.SIGTERM)
                assert proxy.wait(timeout=20) == 0
        return [otlp.spans(output) for output in self.outputs]


@contextmanager
def replicated(tmp_path: Path, *, pinned: bool = True) -> Iterator[Replicated]:
    """The high-level test server, two proxy replicas (each allowing HAProxy's host) and HAProxy
    in front of them; all stopped by PID afterwards."""
    haproxy = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")
    if haproxy is None:
        missing("HAProxy", "haproxy")
    upstream_port, port = free_port(), free_port()
    replica_ports = [free_port() for _ in range(REPLICAS)]
    config = CONFIG.read_text()
    if not pinned:
        config = "\n".join(line for line in config.splitlines() if not line.strip().startswith("stick"))
    # Its runtime API, to ask which replica holds a session.
    config = config.replace("global\n", f"global\n    stats socket {tmp_path / 'haproxy.sock'}\n", 1)
    config_file = tmp_path / "haproxy.cfg"
    config_file.write_text(config + "\n")
    env = env_without_otel(PYTHONPATH=str(REPO_ROOT))
    outputs = [tmp_path / f"replica{n}.jsonl" for n in range(REPLICAS)]
    with ExitStack() as stack:
        server = [sys.executable, "-m", "tests.servers.highlevel_server", "http", str(upstream_port)]
        # Its log names each session it makes and ends, one a line (wide: the SDK logs through rich).
        server_env = {**env, "COLUMNS": "500"}
        stack.enter_context(
            running(server, ports=[upstream_port], env=server_env, cwd=REPO_ROOT, log=tmp_path / "server.log")
        )
        proxies = []
        for replica_port, output in zip(replica_ports, outputs, strict=True):
            command = [MCP_OTEL, "proxy", "--name", "replicated", "--output", str(output)]
            command += ["--listen", f"{LOOPBACK}:{replica_port}", "--allow-host", f"{LOOPBACK}:{port}"]
            command += ["--upstream", f"http://{LOOPBACK}:{upstream_port}/mcp"]
            log = output.with_suffix(".log")
            # Spans exported every 50 ms: the test waits for one (traffic).
            replica_env = {**env, "OTEL_BSP_SCHEDULE_DELAY": "50"}
            proxies.append(stack.enter_context(running(command, ports=[replica_port], env=replica_env, log=log)))
        balancer_env = {
            **env,
            "MCP_LISTEN": f"{LOOPBACK}:{port}",
            **{f"MCP_REPLICA_{n + 1}": f"{LOOPBACK}:{p}" for n, p in enumerate(replica_ports)},
        }
        balancer = [haproxy, "-db", "-f", str(config_file)]
        stack.enter_context(running(balancer, ports=[port], env=balancer_env, log=tmp_path / "haproxy.log"))
        upstream = f"http://{LOOPBACK}:{upstream_port}/mcp"
        yield Replicated(f"http://{LOOPBACK}:{port}/mcp", upstream, outputs, proxies, tmp_path / "server.log")


async def traffic(setup: Replicated) -> None:
    """A handshake-era session (ok, a tool error, the client's cancel, ok); on mcp 2.x a
    2026-07-28 client too (ok, a cancel by closing the stream, which HAProxy passes on: the
    replica records it when the client leaves, not when it is stopped). No call waits for
    anything: round robin, the replica that did not see the handshake relays the session's next
    request at once, while it asks the upstream the server's name."""
    async with open_http_session(setup.url) as session:
        await session.call_tool("ok", {})
        await session.call_tool("fails", {})
        await client_cancel(session)
        await session.call_tool("whoami", {})
    if MCP_MAJOR == 2:
        from mcp import Client

        async with Client(setup.url) as client:
            await client.call_tool("session", {})
            with anyio.move_on_after(0.5):
                await client.call_tool("working", {})
            # Until a replica records the call: its cancel, as soon as the close reaches it; had
            # the close not come through, the server's answer 10 s on ("ok").
            with anyio.fail_after(30):
                while not any(b'"tools/call working"' in _read(output) for output in setup.outputs):  # noqa: ASYNC110 (another process's file)
                    await anyio.sleep(0.05)


# What one proxy records for traffic(): each tool call's outcome.
EXPECTED = {
    "tools/call ok": ("UNSET", "ok", None, None),
    "tools/call fails": ("ERROR", "failed", "tool_error", None),
    "tools/call slow": ("UNSET", "cancelled", None, "client"),
    "tools/call whoami": ("UNSET", "ok", None, None),
    **(
        {
            "tools/call session": ("UNSET", "ok", None, None),
            "tools/call working": ("UNSET", "cancelled", None, "disconnect"),
        }
        if MCP_MAJOR == 2
        else {}
    ),
}


async def test_sessions_pinned_to_a_replica_are_seen_whole(tmp_path: Path) -> None:
    with replicated(tmp_path) as setup:
        await traffic(setup)
        per_replica = setup.stop()
    calls = [span for spans in per_replica for span in tool_spans(spans)]
    assert sorted(s["name"] for s in calls) == sorted(EXPECTED)  # each once, across replicas
    assert {s["name"]: outcome_of(s) for s in calls} == EXPECTED
    handshake_era = {s["attributes"]["mcp.session.id"] for s in calls if "mcp.session.id" in s["attributes"]}
    (session_id,) = handshake_era
    holders = [n for n, spans in enumerate(per_replica) if any(s["attributes"].get("mcp.session.id") for s in spans)]
    assert len(holders) == 1, f"session {session_id} seen by replicas {holders}"
    for span in (s for spans in per_replica for s in spans):
        if "mcp.session.id" in span["attributes"]:  # a 2026-07-28 request names no server on its own
            assert span["attributes"]["mcp.server.name"] == SERVER_NAME, span["name"]
    assert not [p for o in setup.outputs for p in otlp.points(o, MCP_OTEL_UNOBSERVED_REQUESTS)]


async def test_round_robin_records_no_outcome_it_did_not_see(tmp_path: Path) -> None:
    """Unpinned, a replica sees part of a session: what it records is never an outcome it did
    not see (each recorded call has the outcome one proxy gives it, or none at all), and nothing
    is recorded twice. What it costs: the calls left unrecorded. The replica that never saw the
    handshake asks the upstream the server's name (its session's first request there, the
    ``notifications/initialized`` round robin sends it, makes it ask), leaving no session behind,
    and every span that would end before the answer waits for it: every span of both replicas,
    the notifications' and the fastest call's, names the server."""
    with replicated(tmp_path, pinned=False) as setup:
        await traffic(setup)
        per_replica = setup.stop()
        made, ended = _upstream_sessions(setup.server_log)
    calls = [span for spans in per_replica for span in tool_spans(spans)]
    names = [s["name"] for s in calls]
    assert len(names) == len(set(names))
    for span in calls:
        assert outcome_of(span) == EXPECTED[span["name"]], span["name"]
    # Every span names its server, on both replicas (the one that never saw the handshake asked),
    # notifications' too: the notifications/initialized that made it ask waited for the answer.
    every = [span for spans in per_replica for span in spans]
    unnamed = [(s["name"], s["attributes"].get("mcp.server.name")) for s in every]
    assert [named for named in unnamed if named[1] != SERVER_NAME] == []
    methods = {span["attributes"]["mcp.method.name"] for span in every}
    assert {"notifications/initialized", "notifications/cancelled"} <= methods
    assert [bool(tool_spans(spans)) for spans in per_replica] == [True] * REPLICAS
    # One replica asked, once: on 2026-07-28's server/discover (mcp 2.x's server), which makes no
    # session; else with initialize, whose session it deleted at once (the upstream knows it no more).
    how = "server/discover" if MCP_MAJOR == 2 else "initialize"
    said = [re.findall(r"the upstream server is (\S+).* \(asked with (\S+)\)", log) for log in setup.logs()]
    assert sorted(said) == [[], [(SERVER_NAME, how)]]
    clients = {s["attributes"].get("mcp.session.id") for spans in per_replica for s in spans}
    asked = made - clients
    # mcp 1.x's server makes a session for any POST without one, server/discover's too (refused,
    # 400): the replica deleted both, as the upstream's own log says.
    assert len(asked) == (0 if MCP_MAJOR == 2 else 2), (made, clients)
    assert asked <= ended
    unobserved = sum(p.get("value", 0) for o in setup.outputs for p in otlp.points(o, MCP_OTEL_UNOBSERVED_REQUESTS))
    print(f"round robin: {len(calls)} of {len(EXPECTED)} calls recorded, {unobserved} requests unobserved")


async def test_a_replica_killed_mid_call(tmp_path: Path) -> None:
    """The replica holding a session is killed (SIGKILL) with a call in flight: the client sees
    its call fail; the session goes on through the other replica, which sees it mid-way. The
    killed call is recorded by no one (the replica that saw it is gone, the other never saw
    it), and every later call once."""
    with replicated(tmp_path) as setup:
        async with open_http_session(setup.url) as session:
            await session.call_tool("ok", {})
            holder = _holder(tmp_path / "haproxy.sock")
            task = asyncio.ensure_future(call(session, "slow", seconds=5))
            await asyncio.sleep(0.5)
            setup.proxies[holder].kill()
            setup.proxies[holder].wait()
            seen: Any = None  # still waiting (mcp 1.x's client waits on), or its error
            with anyio.move_on_after(5):
                seen = await asyncio.shield(task)
            task.cancel()
            after = await session.call_tool("whoami", {})
        per_replica = setup.stop()
    assert seen is None or isinstance(seen, Exception), seen  # never an answer
    assert not after.isError if MCP_MAJOR == 1 else not after.is_error
    other = per_replica[1 - holder]
    assert [s["name"] for s in tool_spans(other)] == ["tools/call whoami"]
    assert outcome_of(tool_spans(other)[0]) == ("UNSET", "ok", None, None)
    assert not [s for s in tool_spans(other) if s["name"] == "tools/call slow"]


def _read(output: Path) -> bytes:
    return output.read_bytes() if output.exists() else b""


def _upstream_sessions(log: Path) -> tuple[set[str], set[str]]:
    """The sessions the upstream (the SDK's session manager) made, and those it ended on a DELETE."""
    said = log.read_text()
    made = set(re.findall(r"Created new transport with session ID: (\w+)", said))
    return made, set(re.findall(r"Terminating session: (\w+)", said))


def _holder(api: Path) -> int:
    """The replica (0, 1) HAProxy's stick table pins the one session to (its runtime API)."""
    with socket.socket(socket.AF_UNIX) as connection:
        connection.connect(str(api))
        connection.sendall(b"show table replicas\n")
        table = b"".join(iter(lambda: connection.recv(65536), b"")).decode()
    (server_id,) = re.findall(r"server_id=(\d+)", table)
    return int(server_id) - 1
