"""One test harness for both SDK majors: open a client session over a transport, run a case.

Tests speak in terms of this module; it hides the mcp 1.x / 2.x API differences (how sessions
are opened, timeout types, how a cancel notification is built).
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from importlib import import_module
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.client.session import ClientSession

MCP_MAJOR = int(version("mcp").split(".")[0])
# fastmcp 3.x runs on mcp 1.x, 4.x on mcp 2.x and Python >= 3.11; neither is in the
# lowest-versions environments.
HAS_FASTMCP = find_spec("fastmcp") is not None
MCP_VERSION = tuple(int(part) for part in version("mcp").split(".")[:2])
# mcp 1.x servers before 1.27 run a request's handler on after its transport closed; over stdio the
# client stops the server process (2 s later) before the handler ends, so that request has no
# SERVER span at all (docs/limits.md). Later servers cancel the handler: a disconnect.
SERVER_OUTLIVES_CLOSED_TRANSPORT = MCP_MAJOR == 1 and MCP_VERSION < (1, 27)
REPO_ROOT = Path(__file__).resolve().parent.parent

if MCP_MAJOR == 1:
    from tests.servers import v1_server as server_module
else:
    from tests.servers import v2_server as server_module  # type: ignore[no-redef]

# Transports a client session can be opened over, per major.
#   memory: JSON-RPC over in-memory streams; direct: mcp 2.x's in-process dispatcher (no wire);
#   stdio: the test server as a subprocess.
TRANSPORTS = ("memory", "stdio") if MCP_MAJOR == 1 else ("memory", "direct", "stdio")


# The protocol version a handshake-era session negotiates with this SDK's own server.
HANDSHAKE_VERSION: str = (
    types.LATEST_PROTOCOL_VERSION if MCP_MAJOR == 1 else import_module("mcp_types.version").LATEST_HANDSHAKE_VERSION
)


def streamable_http_client(url: str) -> Any:
    """The SDK's streamable HTTP client transport (``streamablehttp_client`` before mcp 1.24)."""
    import mcp.client.streamable_http as streamable_http

    connect = getattr(streamable_http, "streamable_http_client", None) or streamable_http.streamablehttp_client
    return connect(url)


@asynccontextmanager
async def open_http_session(url: str) -> AsyncIterator[ClientSession]:
    """An initialized handshake-era ``ClientSession`` over streamable HTTP (has a session id)."""
    async with streamable_http_client(url) as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        yield session


def build_server() -> Any:
    return server_module.build_server()


def env_without_otel(**extra: str) -> dict[str, str]:
    """This environment minus OTEL_* variables (a subprocess configures its own telemetry)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    return {**env, **extra}


def stdio_parameters(module: str | None = None, span_file: Path | None = None, python: str | None = None) -> Any:
    """How to start a test server as a stdio subprocess (``module`` and its arguments); it
    records its spans in ``span_file``."""
    from mcp.client.stdio import StdioServerParameters

    from tests.servers.span_file import SPAN_FILE_ENV

    module = module or server_module.__name__
    env = env_without_otel(PYTHONPATH=str(REPO_ROOT))
    if span_file is not None:
        env[SPAN_FILE_ENV] = str(span_file)
    command = python or sys.executable
    return StdioServerParameters(command=command, args=["-m", *module.split()], env=env, cwd=str(REPO_ROOT))


@asynccontextmanager
async def open_session(
    transport: str, server: Any = None, *, span_file: Path | None = None, stdio_module: str | None = None
) -> AsyncIterator[ClientSession]:
    """An initialized ``ClientSession`` to the test server over ``transport``."""
    if transport == "stdio":
        from mcp.client.stdio import stdio_client

        async with (
            stdio_client(stdio_parameters(stdio_module, span_file), errlog=sys.stderr) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            yield session
        return
    server = server if server is not None else build_server()
    if type(server).__module__.startswith("fastmcp"):
        from fastmcp import Client as FastMCPClient

        async with FastMCPClient(server) as fastmcp_client:
            yield fastmcp_client.session
        return
    if MCP_MAJOR == 1:
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(server) as session:
            yield session
        return
    from mcp import Client

    mode = "legacy" if transport == "memory" else "auto"
    async with Client(server, mode=mode) as client:
        yield client.session


@asynccontextmanager
async def stoppable_memory_session(server: Any) -> AsyncIterator[tuple[ClientSession, anyio.CancelScope]]:
    """A session to ``server`` run by hand over memory streams, and the scope that stops the
    server (a shutdown while calls are in flight)."""
    from mcp.shared.memory import create_client_server_memory_streams

    server_scope = anyio.CancelScope()

    async def serve(streams: Any) -> None:
        with server_scope:
            await server.run(streams[0], streams[1], server.create_initialization_options())

    async with (
        create_client_server_memory_streams() as (client_streams, server_streams),
        anyio.create_task_group() as group,
    ):
        group.start_soon(serve, server_streams)
        async with ClientSession(client_streams[0], client_streams[1]) as session:
            await session.initialize()
            yield session, server_scope
        server_scope.cancel()


async def close_client_stream(session: ClientSession) -> None:
    """Drop the connection from the client side, without cancelling anything first."""
    owner = getattr(session, "_dispatcher", session)  # 2.x keeps the stream on its dispatcher
    await owner._write_stream.aclose()


def is_error(result: Any) -> bool:
    """A tool result's ``isError`` (``is_error`` on mcp 2.x)."""
    return bool(getattr(result, "is_error", getattr(result, "isError", None)))


def read_timeout(seconds: float) -> Any:
    return timedelta(seconds=seconds) if MCP_MAJOR == 1 else seconds


def cancel_notification(request_id: int) -> Any:
    if MCP_MAJOR == 1:
        params = types.CancelledNotificationParams(requestId=request_id, reason="test cancel")
        return types.ClientNotification(types.CancelledNotification(params=params))
    params = types.CancelledNotificationParams(request_id=request_id, reason="test cancel")
    return types.CancelledNotification(params=params)
