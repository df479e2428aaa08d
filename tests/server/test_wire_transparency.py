"""What a server sends is the same with and without mcp-otel: a tap on the server's write stream
records every JSON-RPC message of a session that covers each outcome."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession

from tests.harness import MCP_MAJOR, build_server, cancel_notification
from tests.server.test_server_spans import call

pytestmark = pytest.mark.anyio


class TapStream:
    """A write stream that records each message it forwards."""

    def __init__(self, inner: Any, record: list[Any]) -> None:
        self._inner = inner
        self._record = record

    async def send(self, item: Any) -> None:
        message = getattr(item, "message", item)
        self._record.append(message.model_dump(by_alias=True, mode="json", exclude_none=True))
        await self._inner.send(item)

    async def __aenter__(self) -> TapStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._inner.__aexit__(*exc_info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


async def session_messages() -> list[Any]:
    """Everything the server writes during one scripted session."""
    from mcp.shared.memory import create_client_server_memory_streams

    server = build_server()
    sent: list[Any] = []
    async with (
        create_client_server_memory_streams() as (client_streams, server_streams),
        anyio.create_task_group() as group,
    ):
        write = TapStream(server_streams[1], sent)
        group.start_soon(server.run, server_streams[0], write, server.create_initialization_options())
        async with ClientSession(client_streams[0], client_streams[1]) as session:
            await session.initialize()
            await session.list_tools()
            for tool in ("ok", "tool_error", "rpc_error", "server_error", "crash"):
                await call(session, tool)
            if MCP_MAJOR == 2:  # the SDK sends the cancel itself
                with anyio.move_on_after(0.3):
                    await session.call_tool("slow", {})
            else:
                task = asyncio.ensure_future(call(session, "slow"))
                await asyncio.sleep(0.3)
                await session.send_notification(cancel_notification(session._request_id - 1))
                await task
            await call(session, "ok")
        group.cancel_scope.cancel()
    return sent


async def test_the_server_sends_the_same_messages(instrument: Callable[..., Any]) -> None:
    uninstrumented = await session_messages()
    instrument()
    instrumented = await session_messages()
    # initialize, tools/list, six answered calls; mcp 1.x also answers the cancel (code 0).
    assert len(uninstrumented) == (9 if MCP_MAJOR == 1 else 8)
    assert instrumented == uninstrumented
