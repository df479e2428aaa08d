"""``mcp-otel wrap --check``: each server of a client's file started the way that client would
start it, asked ``initialize`` and ``tools/list``, and one line per server said of it.

A desktop client starts a stdio server with the command, arguments and ``env`` of its entry and
little of the user's shell: the MCP SDKs pass ``HOME``, ``LOGNAME``, ``PATH``, ``SHELL``, ``TERM``
and ``USER`` (their ``get_default_environment``), so that is all a server gets here too. A
server that answers in a terminal but not there (``npx`` not on that ``PATH``, a variable only
the shell sets) shows up as it would in the client. The exchange is plain JSON-RPC over the
pipes, so the check needs no MCP SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_otel.proxy.stdio import STOP_WAIT, stop_process
from mcp_otel.version import __version__

INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")  # the MCP SDKs' default environment
TIMEOUT = 60.0  # seconds a server gets to answer both requests (npx may fetch its package first)
PROTOCOL_VERSION = "2025-06-18"
_STDERR_KEPT = 4096


@dataclass
class Server:
    """A server of a client's file, as its client would start it."""

    name: str
    command: str = ""
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)  # the entry's own
    inherited: Sequence[
        str
    ] = ()  # variables the client passes from its environment besides the SDKs' (Codex's env_vars)
    cwd: str | None = None
    wrapped: bool = False
    not_stdio: str = ""  # why it is not started (reached by URL, a built-in), when it is not


@dataclass
class ServerCheck:
    name: str
    wrapped: bool
    not_stdio: str = ""
    answered: bool = False
    reason: str = ""  # why it did not answer
    tools: int | None = None
    telemetry: str = ""  # where a wrapped server's telemetry goes

    def line(self) -> str:
        if self.not_stdio:
            return f"{self.name}: not stdio ({self.not_stdio}): not started"
        answer = f"answers ({self.tools} tools)" if self.answered else f"does not answer: {self.reason}"
        wrapped = f"wrapped, {self.telemetry}" if self.wrapped else "not wrapped"
        return f"{self.name}: {answer}; {wrapped}"


def client_environment(
    entry_env: Mapping[str, str] | None, inherited: Sequence[str] = (), environ: Mapping[str, str] = os.environ
) -> dict[str, str]:
    """What a client passes a server: the SDKs' default environment and the variables the entry
    names, then the entry's ``env``."""
    env = {name: environ[name] for name in (*INHERITED, *inherited) if name in environ}
    env.update({str(key): str(value) for key, value in (entry_env or {}).items()})
    return env


def telemetry_of(args: Sequence[str], env: Mapping[str, str]) -> str:
    """Where a wrapped entry's proxy writes (its ``--output``, else its name's default file)."""
    from mcp_otel.proxy.telemetry import default_output

    before = list(args[: list(args).index("--")]) if "--" in args else list(args)
    output = _option(before, "--output")
    where = output if output is not None else str(default_output(_option(before, "--name") or "server", env))
    endpoint = env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    return f"telemetry to {where}" + (f" and {endpoint}" if endpoint else "")


def _option(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args[:-1] else None


async def check_server(
    name: str, command: str, args: Sequence[str], env: Mapping[str, str], cwd: str | None, wrapped: bool
) -> ServerCheck:
    check = ServerCheck(name, wrapped=wrapped)
    if wrapped:
        check.telemetry = telemetry_of(args, env)
    try:
        process = await asyncio.create_subprocess_exec(
            command,
            *args,
            env=dict(env),
            cwd=cwd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        check.reason = f"cannot start {command!r}: {exc.strerror or exc}"
        return check
    stderr = bytearray()
    draining = asyncio.ensure_future(_drain(process, stderr))
    try:
        check.tools = await asyncio.wait_for(_exchange(process), TIMEOUT)
        check.answered = True
    except asyncio.TimeoutError:
        check.reason = f"no answer within {TIMEOUT:.0f} s"
    except _NoAnswer as exc:
        check.reason = str(exc)
    finally:
        await stop_process(process)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(draining, STOP_WAIT)
    said = stderr.decode("utf-8", "replace")
    if not check.reason and not check.answered:  # its stdout ended: it exited
        check.reason = f"exited with status {process.returncode} before answering" + _last_words(said)
    if wrapped and "relaying without telemetry: " in said:
        check.telemetry = "no telemetry: " + said.split("relaying without telemetry: ", 1)[1].splitlines()[0]
    return check


class _NoAnswer(Exception):
    pass


async def _exchange(process: asyncio.subprocess.Process) -> int:
    """``initialize``, ``notifications/initialized``, ``tools/list``: the number of tools."""
    client = {"name": "mcp-otel wrap --check", "version": __version__}
    _send(process, 1, "initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": client})
    await _answer(process, 1, "initialize")
    _send(process, None, "notifications/initialized")
    _send(process, 2, "tools/list", {})
    tools = (await _answer(process, 2, "tools/list")).get("tools")
    return len(tools) if isinstance(tools, list) else 0


def _send(process: asyncio.subprocess.Process, request_id: int | None, method: str, params: Any = None) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        message["id"] = request_id
    if params is not None:
        message["params"] = params
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")


async def _answer(process: asyncio.subprocess.Process, request_id: int, method: str) -> dict[str, Any]:
    """The result of request ``request_id``, skipping the server's notifications and requests."""
    assert process.stdout is not None
    while True:
        try:
            line = await process.stdout.readline()
        except ValueError:  # a line longer than the stream's limit: not an answer we wait for
            continue
        if not line:
            raise _NoAnswer("")  # it exited: the caller says with what status
        try:
            message = json.loads(line)
        except ValueError:
            raise _NoAnswer(f"wrote what is not JSON-RPC to stdout: {line[:80]!r}") from None
        if not isinstance(message, dict) or message.get("id") != request_id or "method" in message:
            continue
        if "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {}
            raise _NoAnswer(f"answered {method} with an error: {error.get('message', error)}")
        result = message.get("result")
        return result if isinstance(result, dict) else {}


async def _drain(process: asyncio.subprocess.Process, kept: bytearray) -> None:
    """Read the server's stderr (it must not fill its pipe), keeping its last few KB."""
    assert process.stderr is not None
    while chunk := await process.stderr.read(65536):
        kept += chunk
        del kept[:-_STDERR_KEPT]


def _last_words(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return f": {lines[-1][:200]}" if lines else ""


async def check_servers(servers: Sequence[Server]) -> list[ServerCheck]:
    """Each server checked at once, in their order."""

    async def one(server: Server) -> ServerCheck:
        if server.not_stdio:
            return ServerCheck(server.name, wrapped=False, not_stdio=server.not_stdio)
        env = client_environment(server.env, server.inherited)
        return await check_server(server.name, server.command, server.args, env, server.cwd, server.wrapped)

    return list(await asyncio.gather(*(one(server) for server in servers)))
