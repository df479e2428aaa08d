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
from importlib.metadata import version
from pathlib import Path
from typing import Any

import mcp.types as types
from mcp.client.session import ClientSession

MCP_MAJOR = int(version("mcp").split(".")[0])
REPO_ROOT = Path(__file__).resolve().parent.parent

if MCP_MAJOR == 1:
    from tests.servers import v1_server as server_module
else:
    from tests.servers import v2_server as server_module  # type: ignore[no-redef]

# Transports a client session can be opened over, per major.
#   memory: JSON-RPC over in-memory streams; direct: mcp 2.x's in-process dispatcher (no wire);
#   stdio: the test server as a subprocess.
TRANSPORTS = ("memory", "stdio") if MCP_MAJOR == 1 else ("memory", "direct", "stdio")


@asynccontextmanager
async def open_http_session(url: str) -> AsyncIterator[ClientSession]:
    """An initialized handshake-era ``ClientSession`` over streamable HTTP (has a session id)."""
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(url) as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        yield session


def build_server() -> Any:
    return server_module.build_server()


def stdio_parameters(module: str | None = None) -> Any:
    from mcp.client.stdio import StdioServerParameters

    module = module or server_module.__name__
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return StdioServerParameters(command=sys.executable, args=["-m", module], env=env, cwd=str(REPO_ROOT))


@asynccontextmanager
async def open_session(transport: str, server: Any = None) -> AsyncIterator[ClientSession]:
    """An initialized ``ClientSession`` to the test server over ``transport``."""
    if transport == "stdio":
        from mcp.client.stdio import stdio_client

        async with (
            stdio_client(stdio_parameters(), errlog=sys.stderr) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            yield session
        return
    server = server if server is not None else build_server()
    if MCP_MAJOR == 1:
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(server) as session:
            yield session
        return
    from mcp import Client

    mode = "legacy" if transport == "memory" else "auto"
    async with Client(server, mode=mode) as client:
        yield client.session


def read_timeout(seconds: float) -> Any:
    return timedelta(seconds=seconds) if MCP_MAJOR == 1 else seconds


def cancel_notification(request_id: int) -> Any:
    if MCP_MAJOR == 1:
        params = types.CancelledNotificationParams(requestId=request_id, reason="test cancel")
        return types.ClientNotification(types.CancelledNotification(params=params))
    params = types.CancelledNotificationParams(request_id=request_id, reason="test cancel")
    return types.CancelledNotification(params=params)
