"""``mcp-otel wrap``: an MCP client's configuration, with every stdio server run under the proxy.

The files desktop clients and editors keep their servers in: Claude Desktop's
``claude_desktop_config.json``, Cursor's and Claude Code's ``mcp.json`` / ``.mcp.json`` (a
``mcpServers`` map, as Gemini CLI's ``settings.json``, Windsurf's ``mcp_config.json`` and Cline's
``cline_mcp_settings.json`` have), VS Code's ``mcp.json`` (``servers``) and its settings
(``mcp.servers``), Zed's settings (``context_servers``; JSON without comments). A
stdio server (``command``, ``args``) becomes ``mcp-otel proxy --name KEY -- COMMAND ARGS``, named
by its key; ``env`` and every other field stay as they are. Servers reached by URL are listed
and left alone. Wrapping twice changes nothing. The original file is kept beside it
(``FILE.mcp-otel-backup``, written once, before the first change), and ``--unwrap`` undoes it:
byte for byte when nothing else changed since, else entry by entry (the servers added since
stay, unwrapped ones are left alone).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BACKUP_SUFFIX = ".mcp-otel-backup"
PROXY = "proxy"
_INDENT = re.compile(r"^([ \t]+)\S", re.MULTILINE)


class WrapError(Exception):
    """The file cannot be read or has no servers map."""


@dataclass
class WrapResult:
    wrapped: list[str] = field(default_factory=list)  # changed now
    already: list[str] = field(default_factory=list)  # wrapped before: left as they are
    skipped: list[str] = field(default_factory=list)  # not stdio (a URL): left as they are
    changed: bool = False


def mcp_otel_command() -> str:
    """This mcp-otel's absolute path: a desktop client does not have its environment on PATH."""
    here = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    if here is not None and here.name == "mcp-otel" and here.exists():
        return str(here)
    found = shutil.which("mcp-otel") or str(Path(sys.executable).with_name("mcp-otel"))
    return str(Path(found).resolve())


def servers_of(config: Any) -> dict[str, Any]:
    """The servers map of a client configuration (``mcpServers``, ``servers``, ``mcp.servers``,
    Zed's ``context_servers``)."""
    if isinstance(config, dict):
        for holder in (config, config.get("mcp")):
            if isinstance(holder, dict):
                for key in ("mcpServers", "servers", "context_servers"):
                    if isinstance(holder.get(key), dict):
                        return holder[key]  # type: ignore[no-any-return]
    raise WrapError("no servers in it (looked for mcpServers, servers, mcp.servers and context_servers)")


def is_wrapped(entry: dict[str, Any]) -> bool:
    args = entry.get("args")
    command = entry.get("command")
    return (
        isinstance(command, str)
        and Path(command).name == "mcp-otel"
        and isinstance(args, list)
        and args[:1] == [PROXY]
        and "--" in args
    )


def wrap_entry(name: str, entry: dict[str, Any], command: str) -> dict[str, Any]:
    args = entry.get("args")
    wrapped = dict(entry)
    wrapped["command"] = command
    wrapped["args"] = [PROXY, "--name", name, "--", entry["command"], *(args if isinstance(args, list) else [])]
    return wrapped


def unwrap_entry(entry: dict[str, Any]) -> dict[str, Any]:
    args = entry["args"]
    original = args[args.index("--") + 1 :]
    unwrapped = dict(entry)
    unwrapped["command"] = original[0] if original else ""
    unwrapped["args"] = original[1:]
    return unwrapped


def _is_stdio(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("command"), str)
        and "url" not in entry
        and entry.get("type", "stdio") == "stdio"
    )


def wrap_file(path: Path, command: str | None = None) -> WrapResult:
    """Wrap every stdio server of the configuration at ``path`` (written only if it changes)."""
    text, config = _read(path)
    servers = servers_of(config)
    result = WrapResult()
    command = command or mcp_otel_command()
    for name, entry in servers.items():
        if not _is_stdio(entry):
            result.skipped.append(name)
        elif is_wrapped(entry):
            result.already.append(name)
        else:
            servers[name] = wrap_entry(name, entry, command)
            result.wrapped.append(name)
    if result.wrapped:
        backup = path.with_name(path.name + BACKUP_SUFFIX)
        if not backup.exists():
            backup.write_text(text, encoding="utf-8")
        _write(path, text, config)
        result.changed = True
    return result


def unwrap_file(path: Path) -> WrapResult:
    """Undo :func:`wrap_file`: the backup itself when the file is what wrapping it made, else
    each wrapped server as it was (the backup's own entry where it is the same server)."""
    text, config = _read(path)
    servers = servers_of(config)
    backup_path = path.with_name(path.name + BACKUP_SUFFIX)
    before: dict[str, Any] = {}
    backup_text = None
    if backup_path.exists():
        backup_text, backup = _read(backup_path)
        before = servers_of(backup)
    result = WrapResult()
    for name, entry in servers.items():
        if not (isinstance(entry, dict) and is_wrapped(entry)):
            result.skipped.append(name)
            continue
        unwrapped = unwrap_entry(entry)
        original = before.get(name)
        same = isinstance(original, dict) and _comparable(original) == _comparable(unwrapped)
        servers[name] = original if same else unwrapped
        result.wrapped.append(name)
    if not result.wrapped:
        return result
    if backup_text is not None and config == json.loads(backup_text):
        path.write_text(backup_text, encoding="utf-8")  # exactly as it was
    else:
        _write(path, text, config)
    result.changed = True
    return result


def check_file(path: Path) -> list[Any]:
    """Each server of the configuration at ``path`` started as its client would start it
    (:mod:`mcp_otel.wrap_check`), in the file's order."""
    import asyncio

    from mcp_otel.wrap_check import check_servers

    _, config = _read(path)
    servers = [
        (name, entry, _is_stdio(entry), isinstance(entry, dict) and is_wrapped(entry))
        for name, entry in servers_of(config).items()
    ]
    return asyncio.run(check_servers(servers, path.parent))


def _comparable(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry with no ``args`` and one with empty ``args`` run the same command."""
    return {**entry, "args": entry.get("args") or []}


def _read(path: Path) -> tuple[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
        return text, json.loads(text)
    except (OSError, ValueError) as exc:
        raise WrapError(f"cannot read {path}: {exc}") from exc


def _write(path: Path, original_text: str, config: Any) -> None:
    """Written in the original's indentation, with its final newline (or none)."""
    found = _INDENT.search(original_text)
    indent = found.group(1) if found else 2
    text = json.dumps(config, indent=indent, ensure_ascii=False)
    path.write_text(text + ("\n" if original_text.endswith("\n") else ""), encoding="utf-8")
