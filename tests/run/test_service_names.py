"""What a command or an upstream URL names as the service (``mcp-otel run``, the proxy)."""

from __future__ import annotations

import pytest

from mcp_otel.run.service_names import server_name_of, service_name_of, upstream_name_of


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["python", "agent.py"], "agent"),
        (["python3.11", "-u", "-X", "dev", "examples/demo/agent.py", "--rounds", "2"], "agent"),
        (["python", "-m", "pkg.agent", "--x"], "pkg.agent"),
        (["python", "-mpkg.agent"], "pkg.agent"),
        (["/usr/bin/python3", "-W", "error", "run_me.py"], "run_me"),
        (["./my_agent.py"], "my_agent"),
        (["my-agent", "--verbose"], "my-agent"),
        (["python", "-c", "print(1)"], None),
        (["python"], None),
    ],
)
def test_the_service_is_named_after_the_program(command: list[str], name: str | None) -> None:
    assert service_name_of(command) == name


def test_the_service_is_named_after_the_server() -> None:
    assert server_name_of(["npx", "-y", "@modelcontextprotocol/server-filesystem", "./notes"]) == "server-filesystem"
    assert server_name_of(["npx", "-y", "@modelcontextprotocol/server-memory@2026.1.0"]) == "server-memory"
    assert server_name_of(["uvx", "mcp-server-time", "--local-timezone", "UTC"]) == "mcp-server-time"
    assert server_name_of(["python", "-m", "weather.server"]) == "weather.server"
    assert server_name_of(["/usr/local/bin/github-mcp-server", "stdio"]) == "github-mcp-server"


def test_the_service_is_named_after_the_upstream() -> None:
    assert upstream_name_of("http://mcp.internal:8000/mcp") == "mcp.internal:8000"
    assert upstream_name_of("http://127.0.0.1:9000/mcp") == "127.0.0.1:9000"
    assert upstream_name_of("https://tools.example.com/mcp") == "tools.example.com"
