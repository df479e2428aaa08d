"""A reference MCP server (mcp 2.x ``MCPServer``) for the MCP conformance suite's server
scenarios (npm ``@modelcontextprotocol/conformance``): the tools, resources and prompts the
scenarios call, answered as they expect. Not every scenario is served (sampling, elicitation and
subscriptions are not): those fail, and must fail the same way with and without mcp-otel.

Usage: python -m tests.servers.conformance_server PORT  (streamable HTTP on 127.0.0.1)
"""

from __future__ import annotations

import base64
import sys

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import AudioContent, EmbeddedResource, ImageContent, TextContent, TextResourceContents

from tests.servers.span_file import install_span_file

# A 1x1 PNG and a tiny WAV header: valid base64 media of the declared types.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
WAV = base64.b64encode(b"RIFF$\x00\x00\x00WAVEfmt ").decode()


def build_server() -> MCPServer:
    server = MCPServer("mcp-otel-conformance", version="1.0.0")

    @server.tool()
    def test_simple_text() -> str:
        """Simple text."""
        return "This is a simple text response for testing."

    @server.tool()
    def test_image_content() -> ImageContent:
        """An image."""
        return ImageContent(type="image", data=PNG, mime_type="image/png")

    @server.tool()
    def test_audio_content() -> AudioContent:
        """An audio clip."""
        return AudioContent(type="audio", data=WAV, mime_type="audio/wav")

    def _resource() -> EmbeddedResource:
        contents = TextResourceContents(uri="test://embedded-resource", mime_type="text/plain", text="embedded")
        return EmbeddedResource(type="resource", resource=contents)

    @server.tool()
    def test_embedded_resource() -> EmbeddedResource:
        """An embedded resource."""
        return _resource()

    @server.tool()
    def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
        """Text, an image and a resource."""
        image = ImageContent(type="image", data=PNG, mime_type="image/png")
        return [TextContent(type="text", text="Multiple content types test:"), image, _resource()]

    @server.tool()
    async def test_tool_with_logging(ctx: Context) -> str:
        """Logs three messages."""
        for step in ("started", "in progress", "done"):
            await ctx.info(f"Tool execution {step}")
        return "Logging test completed"

    @server.tool()
    async def test_tool_with_progress(ctx: Context) -> str:
        """Reports progress three times."""
        for done in (0, 50, 100):
            await ctx.report_progress(done, 100)
        return "Progress test completed"

    @server.tool()
    def test_error_handling() -> str:
        """Always fails: an isError result."""
        raise ValueError("This tool intentionally returns an error for testing")

    @server.resource("test://static-text", mime_type="text/plain")
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource("test://template/{id}/data", mime_type="application/json")
    def template(id: str) -> str:
        return f'{{"id": "{id}", "templateTest": true, "data": "Data for ID: {id}"}}'

    @server.prompt()
    def test_simple_prompt() -> str:
        return "This is a simple prompt for testing."

    @server.prompt()
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    return server


if __name__ == "__main__":
    install_span_file()
    uvicorn.run(build_server().streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
