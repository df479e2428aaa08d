"""A lowlevel server (installed major) that serves every request family, for the request matrix.

Usage: python -m tests.servers.requests_server [http PORT]   (stdio without arguments)

resources  ``test://ok`` reads "ok"; ``test://missing`` answers -32602 (the caller's fault);
           ``test://broken`` answers -32603 (the server's fault); ``test://slow`` takes 5 s
prompts    ``greet`` ok; ``bad`` answers -32602
completion, logging/setLevel, resources/subscribe|unsubscribe, ping: answered plainly
tools      ``ask`` sends the client the request named by its ``kind`` argument
           (``elicitation/create``, ``sampling/createMessage``, ``roots/list``, ``ping``; any
           other kind: nothing) and
           answers "ok: <what the client answered>", or isError with the error's code when the
           client answered an error
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types

from tests.harness import MCP_MAJOR
from tests.servers.span_file import install_span_file
from tests.servers.tools import SERVER_ERROR_CODE, SERVER_NAME, SERVER_VERSION, serve_stdio

CALLER_FAULT = -32602
SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


async def read(uri: str, error: Any) -> str:
    if uri == "test://missing":
        raise error(CALLER_FAULT, "no such resource")
    if uri == "test://broken":
        raise error(SERVER_ERROR_CODE, "internal failure")
    if uri == "test://slow":
        await anyio.sleep(5)
    return "ok"


async def ask(session: Any, kind: str, related: Any, error_class: type[Exception]) -> str:
    """Send the client the request ``kind`` names; what it answered, as text."""
    try:
        if kind == "elicitation/create":
            if MCP_MAJOR == 1:
                result: Any = await session.elicit("Go ahead?", SCHEMA, related_request_id=related)
            else:
                result = await session.elicit_form("Go ahead?", SCHEMA, related_request_id=related)
            return f"ok: {result.action}"
        if kind == "sampling/createMessage":
            message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text="hi"))
            result = await session.create_message([message], max_tokens=5, related_request_id=related)
            return f"ok: {result.model}"
        if kind == "roots/list":
            result = await session.list_roots()
            return f"ok: {len(result.roots)}"
        if kind == "ping":
            await session.send_ping()
            return "ok: pong"
        return "ok: nothing asked"
    except error_class as exc:
        return f"error: {getattr(exc, 'error', exc).code}"


def build_server() -> Any:
    return _build_v1() if MCP_MAJOR == 1 else _build_v2()


def _build_v1() -> Any:
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import McpError

    def error(code: int, message: str) -> Exception:
        return McpError(types.ErrorData(code=code, message=message))

    server: Any = Server(SERVER_NAME, version=SERVER_VERSION)

    @server.list_resources()  # type: ignore[misc]
    async def list_resources() -> list[types.Resource]:
        return [types.Resource(uri="test://ok", name="ok")]

    @server.read_resource()  # type: ignore[misc]
    async def read_resource(uri: Any) -> str:
        return await read(str(uri), error)

    @server.subscribe_resource()  # type: ignore[misc]
    async def subscribe(uri: Any) -> None:
        return None

    @server.unsubscribe_resource()  # type: ignore[misc]
    async def unsubscribe(uri: Any) -> None:
        return None

    @server.list_prompts()  # type: ignore[misc]
    async def list_prompts() -> list[types.Prompt]:
        return [types.Prompt(name="greet")]

    @server.get_prompt()  # type: ignore[misc]
    async def get_prompt(name: str, arguments: Any) -> types.GetPromptResult:
        if name == "bad":
            raise error(CALLER_FAULT, "no such prompt")
        text = types.TextContent(type="text", text="hello")
        return types.GetPromptResult(messages=[types.PromptMessage(role="user", content=text)])

    @server.completion()  # type: ignore[misc]
    async def complete(ref: Any, argument: Any, context: Any) -> types.Completion:
        return types.Completion(values=["a", "b"])

    @server.set_logging_level()  # type: ignore[misc]
    async def set_level(level: Any) -> None:
        return None

    @server.list_tools()  # type: ignore[misc]
    async def list_tools() -> list[types.Tool]:
        return [types.Tool(name="ask", inputSchema={"type": "object"})]

    @server.call_tool()  # type: ignore[misc]
    async def call_tool(name: str, arguments: dict[str, Any]) -> list[types.TextContent]:
        context = server.request_context
        answer = await ask(context.session, arguments["kind"], context.request_id, McpError)
        if answer.startswith("error"):
            raise ValueError(answer)
        return [types.TextContent(type="text", text=answer)]

    return server


def _build_v2() -> Any:
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource(uri="test://ok", name="ok")])

    async def read_resource(ctx: Any, params: Any) -> types.ReadResourceResult:
        text = await read(str(params.uri), MCPError)
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=str(params.uri), text=text)])

    async def empty(ctx: Any, params: Any) -> types.EmptyResult:
        return types.EmptyResult()

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(name="greet")])

    async def get_prompt(ctx: Any, params: Any) -> types.GetPromptResult:
        if params.name == "bad":
            raise MCPError(CALLER_FAULT, "no such prompt")
        text = types.TextContent(type="text", text="hello")
        return types.GetPromptResult(messages=[types.PromptMessage(role="user", content=text)])

    async def complete(ctx: Any, params: Any) -> types.CompleteResult:
        return types.CompleteResult(completion=types.Completion(values=["a", "b"]))

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="ask", input_schema={"type": "object"})])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        answer = await ask(ctx.session, (params.arguments or {})["kind"], ctx.request_id, MCPError)
        text = types.TextContent(type="text", text=answer)
        return types.CallToolResult(content=[text], is_error=answer.startswith("error"))

    return Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_subscribe_resource=empty,
        on_unsubscribe_resource=empty,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
        on_set_logging_level=empty,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def http_app(server: Any) -> Any:
    """The server over streamable HTTP (stateful, handshake era) at ``/mcp``."""
    if MCP_MAJOR == 2:
        return server.streamable_http_app()
    from contextlib import asynccontextmanager

    from mcp.server.fastmcp.server import StreamableHTTPASGIApp
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Route

    manager = StreamableHTTPSessionManager(app=server)

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        async with manager.run():
            yield

    return Starlette(routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(manager))], lifespan=lifespan)


if __name__ == "__main__":
    import sys

    install_span_file()
    if sys.argv[1:2] == ["http"]:
        import uvicorn

        uvicorn.run(http_app(build_server()), host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        anyio.run(serve_stdio, build_server())
