"""The tool set every test server offers, independent of the SDK major.

ok           returns text "ok"
tool_error   returns a result with isError true (text "tool failed: secret-detail")
rpc_error    answers a JSON-RPC error -32602 "bad input"
server_error answers a JSON-RPC error -32603 "internal failure"
crash        raises ValueError("boom"): the SDK answers with its generic error code
slow         sleeps `seconds` (default 5), then returns "slept"
stubborn     ignores cancellation: sleeps `seconds` (default 1) shielded, then returns
bad_output   declares an output schema and returns structured content that violates it
die          the server goes away mid-call (stdio: the process exits; in-memory: streams close)
whoami       returns the request's _meta as JSON text
echo         answers with argument `text` where each outcome carries a text: `how` = "tool_error"
             (isError result), "rpc_error" (-32603 message), "crash" (exception message), or
             anything else (an ok result)
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

SERVER_NAME = "test-server"
SERVER_VERSION = "9.8.7"
RPC_ERROR_CODE = -32602
RPC_ERROR_MESSAGE = "bad input"
SERVER_ERROR_CODE = -32603
SERVER_ERROR_MESSAGE = "internal failure"
TOOL_ERROR_TEXT = "tool failed: secret-detail"
OUTPUT_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TOOL_NAMES = (
    "ok",
    "tool_error",
    "rpc_error",
    "server_error",
    "crash",
    "slow",
    "stubborn",
    "bad_output",
    "die",
    "whoami",
    "echo",
)


@dataclass(frozen=True)
class ToolKit:
    """How one SDK major expresses what the tools answer."""

    result: Callable[[str, bool], Any]  # a text result, isError or not
    structured: Callable[[dict[str, Any]], Any]  # a result with structured content only
    error: Callable[[int, str], Exception]  # the SDK's MCP error (answered as a JSON-RPC error)
    hang_up: Callable[[], Awaitable[None]]  # close the server's side of an in-memory connection


async def run_tool(kit: ToolKit, name: str, arguments: dict[str, Any], meta: dict[str, Any], stdio: bool) -> Any:
    """The tool set above, for either major."""
    if name == "tool_error":
        return kit.result(TOOL_ERROR_TEXT, True)
    if name == "rpc_error":
        raise kit.error(RPC_ERROR_CODE, RPC_ERROR_MESSAGE)
    if name == "server_error":
        raise kit.error(SERVER_ERROR_CODE, SERVER_ERROR_MESSAGE)
    if name == "crash":
        raise ValueError("boom")
    if name == "slow":
        await anyio.sleep(float(arguments.get("seconds", 5)))
        return kit.result("slept", False)
    if name == "stubborn":
        with anyio.CancelScope(shield=True):
            await anyio.sleep(float(arguments.get("seconds", 1)))
        return kit.result("finished anyway", False)
    if name == "bad_output":
        return kit.structured({"n": "not a number"})
    if name == "die":
        if stdio:
            os._exit(3)
        await kit.hang_up()
        await anyio.sleep(5)
    if name == "whoami":
        return kit.result(json.dumps(meta), False)
    if name == "echo":
        text, how = str(arguments.get("text")), arguments.get("how")
        if how == "rpc_error":
            raise kit.error(SERVER_ERROR_CODE, text)
        if how == "crash":
            raise ValueError(text)
        return kit.result(text, how == "tool_error")
    return kit.result("ok", False)


async def serve_stdio(server: Any) -> None:
    """Serve a lowlevel server (either major) over this process's stdin and stdout."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
