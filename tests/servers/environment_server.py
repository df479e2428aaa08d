"""A stdio server that tells what environment it was started with, and nothing else of the
repository's (run by its path, with no ``PYTHONPATH`` of the tests': only ``mcp``).

Usage: python tests/servers/environment_server.py
Tool: environment (the variables this process was started with, as the kernel keeps them:
``/proc/self/environ``, not ``os.environ``, where Python's locale coercion adds ``LC_CTYPE``).
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

if version("mcp").startswith("1."):
    from mcp.server.fastmcp import FastMCP as HighLevelServer
else:
    from mcp.server.mcpserver import MCPServer as HighLevelServer  # type: ignore[no-redef]

server = HighLevelServer("environment")


@server.tool()
def environment() -> str:
    entries = Path("/proc/self/environ").read_bytes().split(b"\0")
    started_with = dict(entry.decode().partition("=")[::2] for entry in entries if b"=" in entry)
    return json.dumps(started_with)


if __name__ == "__main__":
    server.run("stdio")
