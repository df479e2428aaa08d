"""``mcp-otel wrap``: an MCP client's configuration, with every stdio server run under the proxy.

The files desktop clients, editors and coding agents keep their servers in (:data:`CLIENTS`):

- JSON (comments and trailing commas allowed, as editors' settings have them), a ``mcpServers``
  map: Claude Desktop, Cursor, Claude Code, Gemini CLI, Windsurf, Cline; VS Code's ``servers``
  (or ``mcp.servers`` in its settings); Zed's ``context_servers``. A stdio server has
  ``command``, ``args``, ``env``.
- TOML: Codex CLI's ``config.toml``, ``[mcp_servers.NAME]`` tables of the same fields.
- YAML: Goose's ``config.yaml``, an ``extensions`` map (``type: stdio``, ``cmd``, ``args``,
  ``envs``); Continue's ``config.yaml`` (and ``mcpServers/*.yaml`` blocks), an ``mcpServers``
  list of servers each named by its ``name``.

The client is told by the file's suffix and shape, or named (``--client``). A stdio server's
command becomes ``mcp-otel proxy --name NAME -- COMMAND ARGS``, named by its key (Continue: its
``name``); every other field stays as it is. Each file is edited in place: JSON by
:mod:`mcp_otel.proxy.jsonc`, TOML and YAML by round-trip libraries (tomlkit, ruamel.yaml); comments,
order and formatting outside the changed values are kept. Servers reached by URL (and Goose's
built-in extensions) are listed and left alone. Wrapping twice changes nothing. The original
file is kept beside it (``FILE.mcp-otel-backup``, written once, before the first change), and
``--unwrap`` undoes it: byte for byte when nothing else changed since, else entry by entry (the
servers added since stay, unwrapped ones are left alone).
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BACKUP_SUFFIX = ".mcp-otel-backup"
PROXY = "proxy"
_NULL_TAG = "tag:yaml.org,2002:null"
_ROUND_TRIP = "pip install 'mcp-otel[desktop]'"


class WrapError(Exception):
    """The file cannot be read, or has no servers where its client keeps them."""


@dataclass
class WrapResult:
    wrapped: list[str] = field(default_factory=list)  # changed now
    already: list[str] = field(default_factory=list)  # wrapped before: left as they are
    skipped: list[str] = field(default_factory=list)  # not stdio (a URL, a built-in): left as they are
    changed: bool = False


@dataclass(frozen=True)
class Layout:
    """How one kind of file keeps its servers: its format, where the servers are, and the fields
    of a stdio server's command and environment."""

    format: str  # "json", "toml" or "yaml"
    servers: Callable[[Any], Iterator[tuple[str, MutableMapping[str, Any]]]]
    command: str = "command"
    env: str = "env"

    def is_stdio(self, entry: Any) -> bool:
        return (
            isinstance(entry, MutableMapping)
            and isinstance(entry.get(self.command), str)
            and "url" not in entry
            and "uri" not in entry  # Goose's remote extensions
            and entry.get("type", "stdio") == "stdio"
        )

    def is_wrapped(self, entry: MutableMapping[str, Any]) -> bool:
        command, args = entry.get(self.command), entry.get("args")
        args = list(args) if isinstance(args, list) else []  # plain: tomlkit 0.12's arrays cannot be sliced
        return isinstance(command, str) and Path(command).name == "mcp-otel" and args[:1] == [PROXY] and "--" in args

    def wrap(self, name: str, entry: MutableMapping[str, Any], command: str) -> None:
        args = entry.get("args")
        _set_args(entry, [PROXY, "--name", name, "--", entry[self.command], *(args if isinstance(args, list) else [])])
        entry[self.command] = command

    def unwrap(self, entry: MutableMapping[str, Any], before: Any) -> None:
        """The server's own command again; no ``args`` when it had none (``before``: its entry in
        the backup, if any)."""
        args = list(entry["args"])
        original = args[args.index("--") + 1 :]
        entry[self.command] = original[0] if original else ""
        if len(original) <= 1 and isinstance(before, MutableMapping) and "args" not in before:
            del entry["args"]
        else:
            _set_args(entry, original[1:])


def _set_args(entry: MutableMapping[str, Any], args: list[Any]) -> None:
    """In place where the list is the document's own (YAML keeps its flow or block style)."""
    current = entry.get("args")
    if isinstance(current, list) and type(current).__module__.startswith("ruamel"):
        current[:] = args
    else:
        entry["args"] = args


def _first_path(document: Any, paths: tuple[tuple[str, ...], ...]) -> tuple[str, ...] | None:
    """The first of ``paths`` that leads to a map in ``document``."""
    for path in paths:
        holder = document
        for key in path:
            holder = holder.get(key) if isinstance(holder, MutableMapping) else None
        if isinstance(holder, MutableMapping):
            return path
    return None


def _mapping_servers(*paths: tuple[str, ...]) -> Callable[[Any], Iterator[tuple[str, MutableMapping[str, Any]]]]:
    """Servers in the first map found at one of ``paths``, by key."""

    def servers(document: Any) -> Iterator[tuple[str, MutableMapping[str, Any]]]:
        path = _first_path(document, paths)
        if path is None:
            raise WrapError(f"no servers in it (looked for {', '.join('.'.join(path) for path in paths)})")
        holder = document
        for key in path:
            holder = holder[key]
        return iter(list(holder.items()))

    return servers


def _listed_servers(document: Any) -> Iterator[tuple[str, MutableMapping[str, Any]]]:
    """Continue's ``mcpServers``: a list of servers, each named by its ``name``."""
    listed = document.get("mcpServers") if isinstance(document, MutableMapping) else None
    if not isinstance(listed, list):
        raise WrapError("no servers in it (looked for an mcpServers list)")
    return iter(
        [
            (str(entry.get("name", index) if isinstance(entry, MutableMapping) else index), entry)
            for index, entry in enumerate(listed)
        ]
    )


_JSON_PATHS = (("mcpServers",), ("servers",), ("context_servers",), ("mcp", "servers"))
JSON_LAYOUT = Layout("json", _mapping_servers(*_JSON_PATHS))
CODEX = Layout("toml", _mapping_servers(("mcp_servers",)))
GOOSE = Layout("yaml", _mapping_servers(("extensions",)), command="cmd", env="envs")
CONTINUE = Layout("yaml", _listed_servers)
# ``--client NAME``: the clients whose files wrap knows.
CLIENTS = {
    **dict.fromkeys(
        ("claude-desktop", "claude-code", "cursor", "vscode", "zed", "gemini", "windsurf", "cline"), JSON_LAYOUT
    ),
    "codex": CODEX,
    "goose": GOOSE,
    "continue": CONTINUE,
}


def mcp_otel_command() -> str:
    """This mcp-otel's absolute path: a desktop client does not have its environment on PATH."""
    here = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    if here is not None and here.name == "mcp-otel" and here.exists():
        return str(here)
    found = shutil.which("mcp-otel") or str(Path(sys.executable).with_name("mcp-otel"))
    return str(Path(found).resolve())


class _Config:
    """One client's file: its text, its document (edited in place) and its layout."""

    def __init__(self, path: Path, client: str | None = None) -> None:
        self.path = path
        try:
            self.text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise WrapError(f"cannot read {path}: {exc}") from exc
        named = CLIENTS.get(client) if client else None
        if client and named is None:
            raise WrapError(f"no client named {client!r} (known: {', '.join(CLIENTS)})")
        suffix = path.name.removesuffix(BACKUP_SUFFIX).rpartition(".")[2].lower()
        form = named.format if named else {"toml": "toml", "yaml": "yaml", "yml": "yaml"}.get(suffix, "json")
        self.document = _load(form, self.text, path)
        self.layout = named or _layout_of(form, self.document)
        self.servers = list(self.layout.servers(self.document))

    def plain(self) -> Any:
        """The document as plain values, for comparing two files' contents."""
        return json.loads(json.dumps(self.document, default=str))

    def rendered(self) -> str:
        """The file's new text (raises WrapError, with nothing written, if it cannot be made)."""
        if self.layout.format == "json":
            return self._edited_json()
        return _dump(self.layout.format, self.document, self.text)

    def _edited_json(self) -> str:
        """The original text with only the servers' commands changed (comments and all kept)."""
        from mcp_otel.proxy import jsonc

        path = _first_path(self.document, _JSON_PATHS)
        assert path is not None  # the servers were found there
        entries = {name: entry for name, entry in self.servers if isinstance(entry, dict)}
        try:
            return jsonc.edit(self.text, path, entries, (self.layout.command, "args"))
        except (ValueError, KeyError, IndexError) as exc:
            raise WrapError(f"cannot edit {self.path} in place ({exc}); nothing was changed") from exc


def _layout_of(form: str, document: Any) -> Layout:
    if form == "json":
        return JSON_LAYOUT
    if form == "toml":
        return CODEX
    if isinstance(document, MutableMapping) and isinstance(document.get("extensions"), MutableMapping):
        return GOOSE
    if isinstance(document, MutableMapping) and isinstance(document.get("mcpServers"), list):
        return CONTINUE
    raise WrapError("no servers in it (looked for Goose's extensions and Continue's mcpServers); --client names it")


def _load(form: str, text: str, path: Path) -> Any:
    try:
        if form == "json":
            from mcp_otel.proxy import jsonc

            return jsonc.loads(text)
        if form == "toml":
            return _tomlkit().parse(text)
        return _yaml(text).load(text)
    except WrapError:
        raise
    except Exception as exc:  # each library's own parse errors
        raise WrapError(f"cannot read {path}: {exc}") from exc


def _dump(form: str, document: Any, original: str) -> str:
    if form == "toml":
        return _tomlkit().dumps(document)  # type: ignore[no-any-return]
    out = io.StringIO()
    _yaml(original).dump(document, out)
    return out.getvalue()


def _tomlkit() -> Any:
    try:
        import tomlkit
    except ImportError:
        raise WrapError(f"a TOML file needs tomlkit: {_ROUND_TRIP}") from None
    return tomlkit


def _yaml(text: str) -> Any:
    """A round-trip YAML reader and writer indenting as ``text`` does (block sequences under
    their key, as Goose writes them, or indented, as Continue's examples are)."""
    try:
        from ruamel.yaml import YAML
    except ImportError:
        raise WrapError(f"a YAML file needs ruamel.yaml: {_ROUND_TRIP}") from None
    found: dict[str, int] = {}  # under a "key:" line: how deep its map ("mapping") or its list's dash ("offset")
    parent: tuple[int, str] | None = None
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if not stripped.strip() or stripped.startswith("#"):
            continue
        depth = len(line) - len(stripped)
        if parent is not None and parent[1].rstrip().endswith(":"):
            kind = "offset" if stripped.startswith("- ") else "mapping"
            found.setdefault(kind, depth - parent[0])
        parent = (depth, stripped)
    mapping, offset = max(found.get("mapping", 2), 1), max(found.get("offset", 0), 0)
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 1 << 16  # no line folded that was not
    yaml.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    # null as Goose (serde_yaml) writes it, not as an empty value
    yaml.representer.add_representer(type(None), lambda dumper, _: dumper.represent_scalar(_NULL_TAG, "null"))
    return yaml


def wrap_file(path: Path, command: str | None = None, client: str | None = None) -> WrapResult:
    """Wrap every stdio server of the configuration at ``path`` (written only if it changes)."""
    config = _Config(path, client)
    layout = config.layout
    result = WrapResult()
    command = command or mcp_otel_command()
    for name, entry in config.servers:
        if not layout.is_stdio(entry):
            result.skipped.append(name)
        elif layout.is_wrapped(entry):
            result.already.append(name)
        else:
            layout.wrap(name, entry, command)
            result.wrapped.append(name)
    if result.wrapped:
        text = config.rendered()
        backup = path.with_name(path.name + BACKUP_SUFFIX)
        if not backup.exists():
            backup.write_text(config.text, encoding="utf-8")
        path.write_text(text, encoding="utf-8")
        result.changed = True
    return result


def unwrap_file(path: Path, client: str | None = None) -> WrapResult:
    """Undo :func:`wrap_file`: the backup itself when the file is what wrapping it made, else
    each wrapped server as it was."""
    config = _Config(path, client)
    layout = config.layout
    backup_path = path.with_name(path.name + BACKUP_SUFFIX)
    backup = _Config(backup_path, client) if backup_path.exists() else None
    before = dict(backup.servers) if backup is not None else {}
    result = WrapResult()
    for name, entry in config.servers:
        if not (layout.is_stdio(entry) and layout.is_wrapped(entry)):
            result.skipped.append(name)
            continue
        layout.unwrap(entry, before.get(name))
        result.wrapped.append(name)
    if not result.wrapped:
        return result
    if backup is not None and config.plain() == backup.plain():
        path.write_text(backup.text, encoding="utf-8")  # exactly as it was
    else:
        path.write_text(config.rendered(), encoding="utf-8")
    result.changed = True
    return result


def check_file(path: Path, client: str | None = None) -> list[Any]:
    """Each server of the configuration at ``path`` started as its client would start it
    (:mod:`mcp_otel.proxy.wrap_check`), in the file's order."""
    import asyncio

    from mcp_otel.proxy.wrap_check import Server, check_servers

    config = _Config(path, client)
    layout = config.layout
    servers = []
    for name, entry in config.servers:
        if not layout.is_stdio(entry):
            kind = "reached by URL" if "url" in entry or "uri" in entry else f"type {entry.get('type')}"
            servers.append(Server(name, not_stdio=kind))
            continue
        servers.append(
            Server(
                name,
                command=str(entry[layout.command]),
                args=[str(arg) for arg in entry.get("args") or []],
                env={str(key): str(value) for key, value in (entry.get(layout.env) or {}).items()},
                inherited=[str(name) for name in entry.get("env_vars") or []],  # Codex's
                cwd=str(path.parent / str(entry["cwd"])) if entry.get("cwd") else None,
                wrapped=layout.is_wrapped(entry),
            )
        )
    return asyncio.run(check_servers(servers))
