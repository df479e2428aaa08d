"""``mcp-otel wrap`` on the configuration files MCP clients keep: every stdio server runs under the
proxy, named by its key, with everything else kept; wrapping twice changes nothing; ``--unwrap``
gives the original back byte for byte; and a wrapped server really runs behind the proxy."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_otel.cli.main import main
from mcp_otel.proxy.wrap import BACKUP_SUFFIX, WrapError, unwrap_file, wrap_file
from tests.harness import stdio_parameters

MCP_OTEL = "/opt/mcp-otel/bin/mcp-otel"

# Claude Desktop's claude_desktop_config.json (Cursor's and Claude Code's have the same map).
CLAUDE_DESKTOP = """{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/notes"]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "secret"}
    },
    "memory": {"command": "mcp-server-memory"},
    "remote": {"url": "https://mcp.example.com/mcp"}
  },
  "globalShortcut": "Ctrl+Space"
}
"""
# VS Code's .vscode/mcp.json: a servers map with types.
VS_CODE = """{
    "inputs": [],
    "servers": {
        "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]},
        "docs": {"type": "http", "url": "https://docs.example.com/mcp", "headers": {"X": "y"}}
    }
}"""


def written(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_claude_desktop_servers_are_wrapped_by_their_key(tmp_path: Path) -> None:
    path = written(tmp_path, "claude_desktop_config.json", CLAUDE_DESKTOP)
    result = wrap_file(path, MCP_OTEL)
    assert (result.wrapped, result.skipped, result.changed) == (["filesystem", "github", "memory"], ["remote"], True)
    config = json.loads(path.read_text())
    servers = config["mcpServers"]
    assert servers["filesystem"] == {
        "command": MCP_OTEL,
        "args": [
            "proxy",
            "--name",
            "filesystem",
            "--",
            "npx",
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "/Users/me/notes",
        ],
    }
    assert servers["github"]["env"] == {"GITHUB_PERSONAL_ACCESS_TOKEN": "secret"}
    assert servers["github"]["args"][:5] == ["proxy", "--name", "github", "--", "docker"]
    assert servers["memory"] == {"command": MCP_OTEL, "args": ["proxy", "--name", "memory", "--", "mcp-server-memory"]}
    assert servers["remote"] == {"url": "https://mcp.example.com/mcp"}
    assert config["globalShortcut"] == "Ctrl+Space"
    assert path.read_text().startswith('{\n  "mcpServers": {\n    "filesystem"')  # its own indentation
    assert (tmp_path / f"claude_desktop_config.json{BACKUP_SUFFIX}").read_text() == CLAUDE_DESKTOP


def test_wrapping_twice_changes_nothing_and_unwrap_restores_the_original_exactly(tmp_path: Path) -> None:
    path = written(tmp_path, "claude_desktop_config.json", CLAUDE_DESKTOP)
    wrap_file(path, MCP_OTEL)
    once = path.read_text()
    again = wrap_file(path, MCP_OTEL)
    assert (again.wrapped, again.already, again.changed) == ([], ["filesystem", "github", "memory"], False)
    assert path.read_text() == once
    unwrap_file(path)
    assert path.read_text() == CLAUDE_DESKTOP  # byte for byte


def test_unwrap_keeps_what_changed_since(tmp_path: Path) -> None:
    """A server added after wrapping stays, and the wrapped ones come back as they were."""
    path = written(tmp_path, "mcp.json", CLAUDE_DESKTOP)
    wrap_file(path, MCP_OTEL)
    config = json.loads(path.read_text())
    config["mcpServers"]["weather"] = {"command": "weather-mcp", "args": []}
    path.write_text(json.dumps(config, indent=2))
    unwrap_file(path)
    servers = json.loads(path.read_text())["mcpServers"]
    assert servers == {**json.loads(CLAUDE_DESKTOP)["mcpServers"], "weather": {"command": "weather-mcp", "args": []}}


def test_vs_code_servers(tmp_path: Path) -> None:
    path = written(tmp_path, "mcp.json", VS_CODE)
    result = wrap_file(path, MCP_OTEL)
    assert (result.wrapped, result.skipped) == (["time"], ["docs"])
    servers = json.loads(path.read_text())["servers"]
    assert servers["time"] == {
        "type": "stdio",
        "command": MCP_OTEL,
        "args": ["proxy", "--name", "time", "--", "uvx", "mcp-server-time"],
    }
    assert servers["docs"] == json.loads(VS_CODE)["servers"]["docs"]
    assert path.read_text().startswith('{\n    "inputs"')
    unwrap_file(path)
    assert path.read_text() == VS_CODE  # no final newline, as it was


# Cline's cline_mcp_settings.json (Gemini CLI's settings.json and Windsurf's mcp_config.json have
# the same map), with the fields only Cline has.
CLINE = """{
  "mcpServers": {
    "weather": {
      "command": "uvx",
      "args": ["weather-mcp"],
      "env": {"API_KEY": "k"},
      "disabled": false,
      "autoApprove": ["forecast"]
    }
  }
}
"""
# Zed's settings.json: context_servers beside the editor's own settings.
ZED = """{
  "theme": "One Dark",
  "context_servers": {
    "postgres": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-postgres", "postgres://db"], "env": {}}
  }
}
"""


@pytest.mark.parametrize(
    ("name", "text", "key", "server"),
    [
        ("cline_mcp_settings.json", CLINE, "mcpServers", "weather"),
        ("settings.json", ZED, "context_servers", "postgres"),
    ],
)
def test_cline_gemini_windsurf_and_zed_files(tmp_path: Path, name: str, text: str, key: str, server: str) -> None:
    path = written(tmp_path, name, text)
    assert wrap_file(path, MCP_OTEL).wrapped == [server]
    entry = json.loads(path.read_text())[key][server]
    original = json.loads(text)[key][server]
    assert entry == {
        **original,
        "command": MCP_OTEL,
        "args": ["proxy", "--name", server, "--", original["command"], *original["args"]],
    }
    unwrap_file(path)
    assert path.read_text() == text


# Zed's settings.json as Zed writes it: comments, a trailing comma; VS Code's settings likewise.
ZED_WITH_COMMENTS = """\
// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
{
  "theme": "One Dark", // the editor's own
  "context_servers": {
    /* the database */
    "postgres": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-postgres", "postgres://db"],
      "env": {},
    },
    "memory": { "command": "mcp-server-memory" }, // no args
  },
}
"""
ZED_WRAPPED = ZED_WITH_COMMENTS.replace(
    '"command": "npx",\n      "args": ["-y",',
    f'"command": "{MCP_OTEL}",\n      "args": ["proxy", "--name", "postgres", "--", "npx", "-y",',
).replace(
    '{ "command": "mcp-server-memory" }',
    f'{{ "command": "{MCP_OTEL}", "args": ["proxy", "--name", "memory", "--", "mcp-server-memory"] }}',
)
VS_CODE_SETTINGS = """\
{
    // Editor
    "editor.fontSize": 14,
    "mcp": {
        "servers": {
            "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]}, // a clock
        },
    },
}"""


def test_json_with_comments_is_edited_in_place(tmp_path: Path) -> None:
    """Only the commands change: every comment, trailing comma and space stays; --unwrap gives
    it back byte for byte, and entry by entry (memory again without args) once it changed."""
    path = written(tmp_path, "settings.json", ZED_WITH_COMMENTS)
    assert wrap_file(path, MCP_OTEL).wrapped == ["postgres", "memory"]
    assert path.read_text() == ZED_WRAPPED
    assert unwrap_file(path).wrapped == ["postgres", "memory"]
    assert path.read_text() == ZED_WITH_COMMENTS
    wrap_file(path, MCP_OTEL)
    path.write_text(path.read_text().replace('"theme": "One Dark"', '"theme": "One Light"'))
    unwrap_file(path)
    assert path.read_text() == ZED_WITH_COMMENTS.replace('"theme": "One Dark"', '"theme": "One Light"')
    settings = written(tmp_path, "vscode-settings.json", VS_CODE_SETTINGS)
    assert wrap_file(settings, MCP_OTEL).wrapped == ["time"]
    assert settings.read_text() == VS_CODE_SETTINGS.replace(
        '"command": "uvx", "args": ["mcp-server-time"]',
        f'"command": "{MCP_OTEL}", "args": ["proxy", "--name", "time", "--", "uvx", "mcp-server-time"]',
    )


@pytest.mark.parametrize("text", ["not json", '{"other": {}}', "[]"])
def test_a_file_without_servers_is_a_clear_error(tmp_path: Path, text: str) -> None:
    path = written(tmp_path, "x.json", text)
    with pytest.raises(WrapError):
        wrap_file(path, MCP_OTEL)
    assert path.read_text() == text
    assert not (tmp_path / f"x.json{BACKUP_SUFFIX}").exists()


def test_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = written(tmp_path, "claude_desktop_config.json", CLAUDE_DESKTOP)
    assert main(["wrap", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{path}: wrapped: filesystem, github, memory" in out
    assert f"{path}: not stdio (left as they are): remote" in out
    command = json.loads(path.read_text())["mcpServers"]["memory"]["command"]
    assert Path(command).is_absolute()
    assert Path(command).name == "mcp-otel"
    assert main(["wrap", "--unwrap", str(path)]) == 0
    assert path.read_text() == CLAUDE_DESKTOP
    assert main(["wrap", str(tmp_path / "missing.json")]) == 2


@pytest.mark.anyio
async def test_a_wrapped_server_runs_behind_the_proxy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a client starts from the wrapped entry: the test server behind the proxy, its spans
    in the per-user state directory, the service named by the entry's key."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from mcp_otel.semconv import MCP_SERVER_SESSION_DURATION
    from tests.proxy import otlp

    server = stdio_parameters()
    config = {"mcpServers": {"tools": {"command": server.command, "args": server.args, "env": server.env}}}
    path = written(tmp_path, "claude_desktop_config.json", json.dumps(config))
    wrap_file(path, str(Path(sys.executable).with_name("mcp-otel")))
    entry: dict[str, Any] = json.loads(path.read_text())["mcpServers"]["tools"]
    state = tmp_path / "state"
    parameters = StdioServerParameters(
        command=entry["command"], args=entry["args"], env={**entry["env"], "XDG_STATE_HOME": str(state)}, cwd=server.cwd
    )
    async with stdio_client(parameters) as streams, ClientSession(*streams) as session:
        await session.initialize()
        await session.call_tool("ok", {})
    output = state / "mcp-otel" / "proxy" / "tools.jsonl"
    otlp.wait_for(output, lambda p: otlp.points(p, MCP_SERVER_SESSION_DURATION))
    calls = [s for s in otlp.spans(output) if s["name"] == "tools/call ok"]
    assert [(s["service"], s["attributes"]["tool.outcome"]) for s in calls] == [("tools", "ok")]


def test_check_starts_each_server_as_its_client_would(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``wrap --check``: each server started with its entry's command, args and env only (and the
    SDKs' default environment), asked initialize and tools/list; one line each; exit 1 because a
    wrapped server does not answer. Nothing in the file changes."""
    server = stdio_parameters()
    state = tmp_path / "state"
    env = {**server.env, "XDG_STATE_HOME": str(state)}
    broken = ["-c", "import sys; sys.stderr.write('no API key set\\n'); sys.exit(3)"]
    config = {
        "mcpServers": {
            "tools": {"command": server.command, "args": server.args, "env": env, "cwd": server.cwd},
            "plain": {"command": server.command, "args": server.args, "env": env, "cwd": server.cwd},
            "broken": {"command": sys.executable, "args": broken, "env": {"XDG_STATE_HOME": str(state)}},
            "remote": {"url": "https://mcp.example.com/mcp"},
        }
    }
    path = written(tmp_path, "claude_desktop_config.json", json.dumps(config, indent=2))
    wrap_file(path, str(Path(sys.executable).with_name("mcp-otel")))
    wrapped = json.loads(path.read_text())
    wrapped["mcpServers"]["plain"] = config["mcpServers"]["plain"]
    path.write_text(json.dumps(wrapped, indent=2))
    before = path.read_text()
    assert main(["wrap", "--check", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    files = state / "mcp-otel" / "proxy"
    assert out == [
        f"{path}: tools: answers (11 tools); wrapped, telemetry to {files / 'tools.jsonl'}",
        f"{path}: plain: answers (11 tools); not wrapped",
        f"{path}: broken: does not answer: exited with status 3 before answering: no API key set; "
        f"wrapped, telemetry to {files / 'broken.jsonl'}",
        f"{path}: remote: not stdio (reached by URL): not started",
    ]
    assert path.read_text() == before


def test_check_passes_when_every_wrapped_server_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = stdio_parameters()
    env = {**server.env, "XDG_STATE_HOME": str(tmp_path / "state")}
    config = {"mcpServers": {"tools": {"command": server.command, "args": server.args, "env": env, "cwd": server.cwd}}}
    path = written(tmp_path, "mcp.json", json.dumps(config))
    wrap_file(path, str(Path(sys.executable).with_name("mcp-otel")))
    assert main(["wrap", "--check", str(path)]) == 0
    assert "tools: answers" in capsys.readouterr().out
