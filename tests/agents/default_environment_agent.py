"""An uninstrumented agent that starts a stdio server the commonest way, with the SDK's default
environment (``StdioServerParameters`` without ``env``), and writes what that server was started
with to a file.

Usage: python -m tests.agents.default_environment_agent OUTPUT [NAME=VALUE ...]
(with NAME=VALUE: passed as ``env``, laid over the default)
"""

import sys
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

SERVER = Path(__file__).parents[1] / "servers" / "environment_server.py"


async def main(env: dict[str, str] | None) -> str:
    server = StdioServerParameters(command=sys.executable, args=[str(SERVER)], env=env)
    async with stdio_client(server) as streams, ClientSession(*streams) as session:
        await session.initialize()
        result = await session.call_tool("environment", {})
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


if __name__ == "__main__":
    given = dict(variable.partition("=")[::2] for variable in sys.argv[2:])
    Path(sys.argv[1]).write_text(anyio.run(main, given or None))
