"""``mcp-otel proxy -- COMMAND`` and ``mcp-otel proxy --listen HOST:PORT --upstream URL``: the
proxy's telemetry, its sessions and the relay, put together."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from mcp_otel.model.attributes import AttributeCache
from mcp_otel.model.config import Settings
from mcp_otel.model.metrics import CallMetrics
from mcp_otel.proxy.guard import ListenerGuard
from mcp_otel.proxy.signals import SignalSenders
from mcp_otel.proxy.stdio import relay
from mcp_otel.proxy.telemetry import FILE_KEEP, FILE_MAX_BYTES, ProxyTelemetry, default_output
from mcp_otel.proxy.wire import KnownServer, WireSession
from mcp_otel.run.service_names import server_name_of, upstream_name_of
from mcp_otel.semconv import NETWORK_TRANSPORT, SERVER_ADDRESS, SERVER_PORT, TRANSPORT_TCP

EXIT_NOT_STARTED = 127  # as a shell says of a command it cannot run
STOP_GRACE = 2.0  # seconds the HTTP proxy, told to stop, gives the requests in flight

T = TypeVar("T")


def proxy(
    command: Sequence[str],
    *,
    name: str | None = None,
    output: Path | None = None,
    as_client: bool = False,
    rotate: tuple[int, int] = (FILE_MAX_BYTES, FILE_KEEP),
) -> int:
    """Run ``command`` behind the relay, standing in for the server (or ``as_client``); its exit
    status. The settings are the in-process instrumentation's (``OTEL_INSTRUMENTATION_MCP_*``)."""
    # As the client, the spans are the client's view of that server.
    name = name or server_name_of(command) + ("-client" if as_client else "")
    output = output or default_output(name)
    # Before the telemetry's threads start (SignalSenders.watch), and only on uvloop, whose
    # children do not inherit the blocked signals.
    senders = SignalSenders.watch() if _uvloop() is not None else SignalSenders()
    settings = Settings.load()
    telemetry = ProxyTelemetry(output, name, rotate=rotate)
    session = WireSession(telemetry.tracer(), CallMetrics(telemetry.meter(), settings), settings, as_client=as_client)
    try:
        return _run(relay(command, session, telemetry.flush, senders))
    except OSError as exc:  # the command could not be started
        print(f"mcp-otel proxy: cannot run {command[0]!r}: {exc}", file=sys.stderr)
        return EXIT_NOT_STARTED
    finally:
        senders.stop()
        telemetry.shutdown()


def proxy_http(
    listen: str,
    upstream: str,
    *,
    name: str | None = None,
    output: Path | None = None,
    as_client: bool = False,
    rotate: tuple[int, int] = (FILE_MAX_BYTES, FILE_KEEP),
    allow_hosts: Sequence[str] = (),
    allow_origins: Sequence[str] = (),
) -> int:
    """Serve ``listen`` (``HOST:PORT``) as a reverse proxy of the streamable HTTP server at
    ``upstream`` until SIGINT or SIGTERM, standing in for the server (or ``as_client``)."""
    host, _, port = listen.rpartition(":")
    host = host.strip("[]")  # [::1]:PORT
    parts = urlsplit(upstream)
    if parts.scheme not in ("http", "https") or not parts.hostname or not port.isdigit():
        print("mcp-otel proxy: --listen HOST:PORT and --upstream http(s)://HOST[:PORT]/PATH", file=sys.stderr)
        return 2
    name = name or upstream_name_of(upstream) + ("-client" if as_client else "")
    output = output or default_output(name)
    settings = Settings.load()
    telemetry = ProxyTelemetry(output, name, rotate=rotate)
    metrics = CallMetrics(telemetry.meter(), settings)
    connection: dict[str, object] = {NETWORK_TRANSPORT: TRANSPORT_TCP}
    if as_client:  # the server as its clients see it
        connection[SERVER_ADDRESS] = parts.hostname
        connection[SERVER_PORT] = parts.port or (443 if parts.scheme == "https" else 80)

    attribute_cache = AttributeCache()
    known_server = KnownServer()  # one upstream: what names one session names all

    def new_session() -> WireSession:
        return WireSession(
            telemetry.tracer(),
            metrics,
            settings,
            as_client=as_client,
            connection=connection,
            streams=True,
            attribute_cache=attribute_cache,
            known_server=known_server,
        )

    try:
        host = host or "127.0.0.1"
        guard = ListenerGuard.of(host, int(port), allow_hosts, allow_origins)
        serving = serve_http(
            host, int(port), upstream, new_session, as_client=as_client, guard=guard, known_server=known_server
        )
        _run(serving)
    except OSError as exc:  # the address is taken, or not ours
        print(f"mcp-otel proxy: cannot listen on {listen}: {exc}", file=sys.stderr)
        return 1
    finally:
        telemetry.shutdown()
    return 0


def _run(main: Coroutine[Any, Any, T]) -> T:
    """On uvloop's event loop where it is installed (the proxy extra brings it but on Windows):
    about a tenth less CPU and latency per request (docs/benchmarks.md)."""
    uvloop = _uvloop()
    return asyncio.run(main) if uvloop is None else uvloop.run(main)


def _uvloop() -> Any:
    """uvloop, where it is installed; else ``None``."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop


async def serve_http(
    host: str,
    port: int,
    upstream: str,
    new_session: Callable[[], WireSession],
    *,
    as_client: bool = False,
    guard: ListenerGuard | None = None,
    known_server: KnownServer | None = None,
) -> None:
    """Serve ``host:port`` as the reverse proxy of ``upstream`` until SIGINT or SIGTERM, each
    session's facts told to a ``new_session()`` (sharing ``known_server``, which the relay asks
    the upstream to fill: :class:`~mcp_otel.proxy.http.HttpRelay`)."""
    from aiohttp import web

    from mcp_otel.proxy.http import HttpRelay

    relay = HttpRelay(upstream, new_session, as_client=as_client, guard=guard, known_server=known_server)
    # Told to stop, the proxy gives the requests in flight STOP_GRACE seconds (a client that never
    # reads its stream would hold aiohttp's default minute).
    runner = relay.runner(shutdown_timeout=STOP_GRACE)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        print(f"mcp-otel proxy: http://{host}:{port} -> {upstream}", file=sys.stderr, flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()
        await relay.close()
