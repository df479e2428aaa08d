"""``mcp-otel wrap`` on the TOML and YAML files of Codex CLI, Goose and Continue: each stdio server
wrapped in place, every other line (comments, order, quoting, other sections) as it was;
``--unwrap`` gives the file back byte for byte, or entry by entry when it changed since;
``--check`` starts the servers as each of those clients would."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_otel.cli.main import main
from mcp_otel.proxy.wrap import BACKUP_SUFFIX, WrapError, unwrap_file, wrap_file
from tests.harness import REPO_ROOT, server_module

tomlkit = pytest.importorskip("tomlkit", reason="the desktop extra is not installed")
ruamel_yaml = pytest.importorskip("ruamel.yaml", reason="the desktop extra is not installed")

MCP_OTEL = "/opt/mcp-otel/bin/mcp-otel"


def proxied(name: str, *command: str) -> list[str]:
    return ["proxy", "--name", name, "--", *command]


# Codex CLI's ~/.codex/config.toml: env as a sub-table, env_vars, a multi-line array, a remote server.
CODEX = """\
# ~/.codex/config.toml
model = "gpt-5-codex"
approval_policy = "on-request"

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]
startup_timeout_sec = 20  # npx fetches it first

[mcp_servers.github]
command = "docker"
args = [
  "run", "-i", "--rm",
  "-e", "GITHUB_PERSONAL_ACCESS_TOKEN",
  "ghcr.io/github/github-mcp-server",
]
env_vars = ["GITHUB_PERSONAL_ACCESS_TOKEN"]

[mcp_servers.memory]
command = "mcp-server-memory"

[mcp_servers.memory.env]
MEMORY_FILE_PATH = "/Users/me/memory.json"

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_TOKEN"

[profiles.fast]
model = "o4-mini"
"""
CODEX_WRAPPED = (
    CODEX.replace(
        'command = "npx"\nargs = ["-y", "@upstash/context7-mcp"]',
        f'command = "{MCP_OTEL}"\nargs = ["proxy", "--name", "context7", "--", "npx", "-y", "@upstash/context7-mcp"]',
    )
    .replace(
        'command = "docker"\nargs = [\n  "run", "-i", "--rm",\n  "-e", "GITHUB_PERSONAL_ACCESS_TOKEN",\n'
        '  "ghcr.io/github/github-mcp-server",\n]',
        f'command = "{MCP_OTEL}"\nargs = ["proxy", "--name", "github", "--", "docker", "run", "-i", "--rm", "-e", '
        '"GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"]',
    )
    .replace(
        'command = "mcp-server-memory"\n',
        f'command = "{MCP_OTEL}"\nargs = ["proxy", "--name", "memory", "--", "mcp-server-memory"]\n',
    )
)

# Goose's ~/.config/goose/config.yaml as Goose writes it (block lists under their key), with a
# built-in and a remote extension, and a comment.
GOOSE = """\
# Goose writes this file itself; comments survive a round trip here.
GOOSE_PROVIDER: anthropic
extensions:
  developer:
    bundled: true
    display_name: Developer
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  github:
    args:
    - -y
    - '@modelcontextprotocol/server-github'
    bundled: null
    cmd: npx
    enabled: true
    env_keys: []
    envs:
      GITHUB_PERSONAL_ACCESS_TOKEN: ghp_secret
    name: github
    timeout: 300
    type: stdio
  fetch:
    cmd: uvx # the package is its only argument
    args: [mcp-server-fetch]
    enabled: false
    name: fetch
    type: stdio
  remote:
    enabled: true
    name: remote
    type: streamable_http
    uri: https://mcp.example.com/mcp
"""
GOOSE_WRAPPED = (
    GOOSE.replace(
        "    args:\n    - -y\n", "    args:\n" + "".join(f"    - {arg}\n" for arg in proxied("github", "npx", "-y"))
    )
    .replace(
        "    cmd: npx\n",
        f"    cmd: {MCP_OTEL}\n",
    )
    .replace(
        "    cmd: uvx # the package is its only argument\n    args: [mcp-server-fetch]\n",
        f"    cmd: {MCP_OTEL} # the package is its only argument\n"
        "    args: [proxy, --name, fetch, --, uvx, mcp-server-fetch]\n",
    )
)

# Continue's config.yaml: mcpServers is a list, each server named by its "name"; indented lists.
CONTINUE = """\
name: My Config
version: 0.0.1
schema: v1

models:
  - name: Claude
    provider: anthropic
    model: claude-sonnet-4

# The servers Continue starts in agent mode
mcpServers:
  - name: SQLite
    command: npx
    args:
      - "-y"
      - "mcp-sqlite"
      - "/Users/me/db.sqlite"
    env:
      LOG_LEVEL: info
  - name: time
    type: stdio
    command: uvx
    args: ["mcp-server-time", "--local-timezone=Europe/Paris"]  # flow style
  - name: docs
    type: streamable-http
    url: https://docs.example.com/mcp
"""
CONTINUE_WRAPPED = CONTINUE.replace(
    '    command: npx\n    args:\n      - "-y"\n',
    f"    command: {MCP_OTEL}\n    args:\n" + "".join(f"      - {arg}\n" for arg in proxied("SQLite", "npx", '"-y"')),
).replace(
    '    command: uvx\n    args: ["mcp-server-time", "--local-timezone=Europe/Paris"]  # flow style\n',
    f'    command: {MCP_OTEL}\n    args: [proxy, --name, time, --, uvx, "mcp-server-time", '
    '"--local-timezone=Europe/Paris"] # flow style\n',
)

FILES = {
    "codex": ("config.toml", CODEX, CODEX_WRAPPED, ["context7", "github", "memory"], ["figma"]),
    "goose": ("config.yaml", GOOSE, GOOSE_WRAPPED, ["github", "fetch"], ["developer", "remote"]),
    "continue": ("config.yaml", CONTINUE, CONTINUE_WRAPPED, ["SQLite", "time"], ["docs"]),
}


@pytest.mark.parametrize("client", FILES)
def test_wrapped_in_place_and_unwrapped_byte_for_byte(tmp_path: Path, client: str) -> None:
    name, original, wrapped, servers, skipped = FILES[client]
    path = tmp_path / name
    path.write_text(original)
    result = wrap_file(path, MCP_OTEL)
    assert (result.wrapped, result.skipped, result.changed) == (servers, skipped, True)
    assert path.read_text() == wrapped  # only the servers' commands changed
    assert (tmp_path / f"{name}{BACKUP_SUFFIX}").read_text() == original
    again = wrap_file(path, MCP_OTEL)
    assert (again.wrapped, again.already, again.changed) == ([], servers, False)
    assert path.read_text() == wrapped
    assert unwrap_file(path).wrapped == servers
    assert path.read_text() == original


def test_unwrap_keeps_what_changed_since(tmp_path: Path) -> None:
    """A Codex server added after wrapping stays; the wrapped ones come back with their own
    fields (memory, which had no args, gets none)."""
    path = tmp_path / "config.toml"
    path.write_text(CODEX)
    wrap_file(path, MCP_OTEL)
    added = '\n[mcp_servers.weather]\ncommand = "weather-mcp"\n'
    path.write_text(path.read_text() + added)
    assert unwrap_file(path).wrapped == ["context7", "github", "memory"]
    unwrapped = tomlkit.parse(path.read_text())["mcp_servers"]
    before = tomlkit.parse(CODEX)["mcp_servers"]
    assert unwrapped.unwrap() == {**before.unwrap(), "weather": {"command": "weather-mcp"}}
    assert path.read_text().startswith(CODEX.split("[mcp_servers.github]")[0])  # comments kept


def test_a_file_named_neither_way_needs_the_client(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "goose-config"
    path.write_text(GOOSE)
    assert main(["wrap", "--force", str(path)]) == 2  # read as JSON: it is not
    assert "cannot read" in capsys.readouterr().err
    assert main(["wrap", "--force", "--client", "goose", str(path)]) == 0
    assert f"{path}: wrapped: github, fetch" in capsys.readouterr().out
    assert main(["wrap", "--unwrap", "--client", "goose", str(path)]) == 0
    assert path.read_text() == GOOSE


def test_yaml_with_neither_clients_servers_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("mcpServers:\n  SQLite:\n    command: npx\n")  # a map: neither Goose's nor Continue's
    with pytest.raises(WrapError, match="--client names it"):
        wrap_file(path, MCP_OTEL)
    with pytest.raises(WrapError, match="an mcpServers list"):
        wrap_file(path, MCP_OTEL, client="continue")
    assert path.read_text() == "mcpServers:\n  SQLite:\n    command: npx\n"


def test_what_is_not_a_server_is_left_alone(tmp_path: Path) -> None:
    """A Continue list with an entry that is not a map, and one with no name: skipped or named by
    its place, never an error."""
    path = tmp_path / "config.yaml"
    path.write_text("mcpServers:\n  - just a string\n  - command: npx\n    args: [srv]\n")
    result = wrap_file(path, MCP_OTEL)
    assert (result.wrapped, result.skipped) == (["1"], ["0"])
    assert unwrap_file(path).wrapped == ["1"]
    assert path.read_text() == "mcpServers:\n  - just a string\n  - command: npx\n    args: [srv]\n"


def test_without_the_round_trip_libraries_nothing_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("tomlkit", "ruamel.yaml"):
        monkeypatch.setitem(sys.modules, module, None)  # import fails
    for name, text, library in (("config.toml", CODEX, "tomlkit"), ("config.yaml", GOOSE, "ruamel.yaml")):
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(WrapError, match=rf"needs {library}: pip install 'mcp-otel\[desktop\]'"):
            wrap_file(path, MCP_OTEL)
        assert path.read_text() == text
        assert not (tmp_path / f"{name}{BACKUP_SUFFIX}").exists()


def _dumped(client: str, servers: dict[str, dict[str, Any]]) -> str:
    """A client's file holding ``servers``, written by the library wrap reads it with."""
    if client == "codex":
        return tomlkit.dumps({"mcp_servers": servers})  # type: ignore[no-any-return]
    document: Any = {"extensions": servers}
    if client == "continue":
        document = {"name": "c", "mcpServers": [{"name": name, **entry} for name, entry in servers.items()]}
    out = io.StringIO()
    ruamel_yaml.YAML().dump(document, out)
    return out.getvalue()


@pytest.mark.parametrize("client", FILES)
def test_check_starts_each_server_as_its_client_would(
    tmp_path: Path, client: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each client's fields: Goose's cmd and envs, Continue's list, Codex's env and env_vars (a
    variable the client passes from its own environment: here where the proxy writes)."""
    state = tmp_path / "state"
    command, env = ("cmd", "envs") if client == "goose" else ("command", "env")
    module = ["-m", server_module.__name__]
    broken = ["-c", "import sys; sys.stderr.write('no API key set\\n'); sys.exit(3)"]
    working: dict[str, Any] = {command: sys.executable, "args": module, env: {"PYTHONPATH": str(REPO_ROOT)}}
    if client == "codex":
        working["env_vars"] = ["XDG_STATE_HOME"]
        monkeypatch.setenv("XDG_STATE_HOME", str(state))
    else:
        working[env]["XDG_STATE_HOME"] = str(state)
    broken_entry = {command: sys.executable, "args": broken, env: {"XDG_STATE_HOME": str(state)}}
    servers = {"tools": {**working, "cwd": str(REPO_ROOT)}, "broken": broken_entry}
    if client != "codex":
        servers = {name: {"type": "stdio", **entry} for name, entry in servers.items()}
    path = tmp_path / FILES[client][0]
    path.write_text(_dumped(client, servers))
    wrap_file(path, str(Path(sys.executable).with_name("mcp-otel")))
    before = path.read_text()
    assert main(["wrap", "--check", str(path)]) == 1
    files = state / "mcp-otel" / "proxy"
    assert capsys.readouterr().out.splitlines() == [
        f"{path}: tools: answers (11 tools); wrapped, telemetry to {files / 'tools.jsonl'}",
        f"{path}: broken: does not answer: exited with status 3 before answering: no API key set; "
        f"wrapped, telemetry to {files / 'broken.jsonl'}",
    ]
    assert path.read_text() == before
