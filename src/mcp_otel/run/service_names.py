"""What a service is called: the name a command or an upstream URL gives the program it runs or
reaches (``service.name`` under ``mcp-otel run`` and the proxy), and whether the user named it
already (theirs wins, as in the SDK)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

# Python's own options that take a value (python -X dev -W error agent.py).
_PYTHON_OPTIONS_WITH_VALUE = frozenset({"-W", "-X", "--check-hash-based-pycs"})
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?(\.exe)?")


def service_name_of(command: Sequence[str]) -> str | None:
    """The service an agent's command names: a Python script's stem (``python agent.py`` ->
    ``agent``), a module's name (``python -m pkg.agent`` -> ``pkg.agent``), or the program's own
    name (``./agent.py``, ``my-agent``); ``None`` for ``python -c`` or an interactive Python."""
    if not command:
        return None
    program = Path(command[0]).name
    if not _PYTHON.fullmatch(program):
        return Path(program).stem or None
    words = iter(command[1:])
    for word in words:
        if word == "-m":
            return next(words, None)
        if word.startswith("-m") and len(word) > 2:
            return word[2:]
        if word == "-c" or word.startswith("-c") or word == "-":
            return None
        if word in _PYTHON_OPTIONS_WITH_VALUE:
            next(words, None)
        elif not word.startswith("-"):
            return Path(word).stem or None
    return None


def names_the_service(env: Mapping[str, str]) -> bool:
    """Whether the user named the service (``OTEL_SERVICE_NAME``, or ``service.name`` in
    ``OTEL_RESOURCE_ATTRIBUTES``): theirs wins, as in the SDK."""
    if env.get("OTEL_SERVICE_NAME", "").strip():
        return True
    pairs = (pair.split("=", 1)[0].strip() for pair in env.get("OTEL_RESOURCE_ATTRIBUTES", "").split(","))
    return "service.name" in pairs


# Programs that run a package by name: the server is the package (``npx -y @scope/server-x``).
_PACKAGE_RUNNERS = frozenset({"npx", "bunx", "pnpx", "uvx", "pipx"})
_VERSION_SUFFIX = re.compile(r"@[^@/]*$")


def server_name_of(command: Sequence[str]) -> str:
    """The server a command starts, for ``service.name``: the package a runner runs
    (``npx -y @modelcontextprotocol/server-filesystem ./notes`` -> ``server-filesystem``), a
    Python module or script (``python -m weather`` -> ``weather``), else the program's name."""
    if not command:
        return "server"
    program = Path(command[0]).name
    if program in _PACKAGE_RUNNERS:
        words = [word for word in command[1:] if word not in ("run", "dlx")]
        package = next((word for word in words if not word.startswith("-")), None)
        if package:
            return _VERSION_SUFFIX.sub("", package.rstrip("/")).rsplit("/", 1)[-1] or program
    return service_name_of(command) or program  # the agent's rule, for Python and plain programs


def upstream_name_of(url: str) -> str:
    """The server an upstream URL names, for ``service.name``: its host, and its port when the
    URL gives one (``http://mcp.internal:8000/mcp`` -> ``mcp.internal:8000``)."""
    parts = urlsplit(url)
    host = parts.hostname or "server"
    return f"{host}:{parts.port}" if parts.port else host
