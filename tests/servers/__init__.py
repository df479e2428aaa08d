"""Test MCP servers: the same tool set on mcp 1.x and 2.x, in-process or as stdio subprocesses."""
