"""The stdio relay: the server process, both pipes byte for byte, signals and shutdown.

Bytes are written on as soon as they are read, whole chunks, never held for a line: the
observer (:class:`mcp_otel.frontends.wire.WireSession`) is told each complete line after it was
relayed, and whatever it does (it never raises) cannot alter, drop or hold traffic. As the
client (``--as client``), the client's stream goes on line by line instead, each request with
the proxy's trace context added to it. The server's
stderr is the proxy's (passed through untouched); the proxy's own words go to stderr too.

Shutdown is the MCP stdio transport's: when the client closes the proxy's stdin, the server's
stdin is closed, then the server is given ``STOP_WAIT`` seconds to exit, then SIGTERM, then as
long again, then SIGKILL. SIGINT and SIGTERM sent to the proxy go to the server. The proxy exits
with the server's status (128 + N for a server ended by signal N).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import sys
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

from mcp_otel.frontends.wire import MAX_OBSERVED_LINE, WireSession
from mcp_otel.safety import report_once

CHUNK = 64 * 1024
STOP_WAIT = 2.0  # seconds, as the MCP SDKs' stdio clients wait


class Lines:
    """A byte stream cut into lines, each handed to ``on_line`` (without its newline), which
    may give back what goes on instead (``None``: the line as it came). A line longer than
    ``limit`` goes on as it came, unseen, and so do the bytes after the last newline when the
    stream ends. :meth:`feed` returns what goes on for a chunk (only the client's stream, as the
    client, is sent that way; else the chunk itself was sent, and this only observes)."""

    def __init__(self, on_line: Callable[[bytes], bytes | None], limit: int = MAX_OBSERVED_LINE) -> None:
        self._on_line = on_line
        self._limit = limit
        self._pending = bytearray()
        self._overlong = False

    def feed(self, chunk: bytes) -> bytes:
        out = bytearray()
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            if self._overlong:
                out += chunk[start : end + 1]
            else:
                self._pending += chunk[start:end]
                out += self._line(bytes(self._pending)) + b"\n"
            self._pending.clear()
            self._overlong = False
            start = end + 1
        rest = chunk[start:]
        if self._overlong:
            out += rest
        else:
            self._pending += rest
            if len(self._pending) > self._limit:
                out += self._pending
                self._pending.clear()
                self._overlong = True
        return bytes(out)

    def end(self) -> bytes:
        rest, self._pending = bytes(self._pending), bytearray()
        return rest

    def _line(self, line: bytes) -> bytes:
        try:
            replaced = self._on_line(line)
        except Exception as exc:  # the session fails open; this is only its last guard
            report_once("could not observe a proxied line", exc)
            replaced = None
        return line if replaced is None else replaced


async def relay(command: Sequence[str], session: WireSession, flush: Callable[[], None] = lambda: None) -> int:
    """Run ``command`` with this process's stdin and stdout relayed to it; its exit status.
    ``flush`` exports the telemetry so far: called (in a thread) as soon as the client hangs up,
    before the server is stopped, since the client may kill the proxy soon after (the MCP SDKs'
    stdio clients send SIGKILL 4 s after closing)."""
    loop = asyncio.get_running_loop()
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, _forward, process, number)
    client_gone = asyncio.Event()
    to_server = asyncio.create_task(_client_to_server(process, session, client_gone, flush))
    try:
        await _server_to_client(process, session)
        returncode = await process.wait()
        server_first = not client_gone.is_set()
        if not server_first:
            await to_server  # it stopped the server and flushed the telemetry
    finally:
        to_server.cancel()
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(number)
    session.end(server_exited_first=server_first, exit_status=returncode)
    return returncode if returncode >= 0 else 128 - returncode


def _forward(process: asyncio.subprocess.Process, number: int) -> None:
    if process.returncode is None:
        process.send_signal(number)


async def _client_to_server(
    process: asyncio.subprocess.Process, session: WireSession, client_gone: asyncio.Event, flush: Callable[[], None]
) -> None:
    assert process.stdin is not None
    stdin = process.stdin
    reader = await _reader(sys.stdin.buffer)
    server_open = True

    async def send(data: bytes) -> None:
        nonlocal server_open
        if server_open and data:
            try:
                stdin.write(data)
                await stdin.drain()
            except (BrokenPipeError, ConnectionResetError):  # the server is gone: its exit ends the relay
                server_open = False

    if session.as_client:  # each line as the session makes it: its requests carry our context
        rewritten = Lines(session.client_line)
        while chunk := await reader(CHUNK):
            await send(rewritten.feed(chunk))
        await send(rewritten.end())
    else:  # byte for byte, as it comes; each line observed once relayed
        lines = Lines(session.from_client)
        while chunk := await reader(CHUNK):
            await send(chunk)
            lines.feed(chunk)
    client_gone.set()
    session.end(server_exited_first=False, exit_status=0)  # the session ends with the client
    flushed = asyncio.create_task(asyncio.to_thread(flush))
    await stop_process(process)
    await flushed


async def _server_to_client(process: asyncio.subprocess.Process, session: WireSession) -> None:
    lines = Lines(session.from_server)
    assert process.stdout is not None
    write = await _writer(sys.stdout.buffer)
    client_open = True
    while chunk := await process.stdout.read(CHUNK):
        if client_open:
            try:
                await write(chunk)
            except (BrokenPipeError, ConnectionResetError):  # the client is gone; the server is being stopped
                client_open = False
        lines.feed(chunk)


async def stop_process(process: asyncio.subprocess.Process) -> None:
    """The MCP stdio transport's shutdown: stdin closed, a wait, SIGTERM, a wait, SIGKILL."""
    assert process.stdin is not None
    with contextlib.suppress(Exception):  # already closed by the server's exit
        process.stdin.close()
    for escalate in (process.terminate, process.kill):
        try:
            await asyncio.wait_for(process.wait(), STOP_WAIT)
            return
        except asyncio.TimeoutError:
            if process.returncode is None:
                escalate()
    await process.wait()


async def _reader(stream: BinaryIO) -> Callable[[int], Any]:
    """How to read this process's stdin: through the event loop for a pipe or a terminal, else
    (a file) by blocking reads, which end at its end."""
    if _is_pipe(stream):
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=CHUNK)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stream)
        return reader.read
    fd = stream.fileno()
    return lambda size: asyncio.to_thread(os.read, fd, size)


async def _writer(stream: BinaryIO) -> Callable[[bytes], Any]:
    """How to write this process's stdout: through the event loop for a pipe, else directly."""
    if _is_pipe(stream):
        loop = asyncio.get_running_loop()
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, stream)
        # No bytes held past a write: drain waits until the client's pipe took them all, so the
        # relay never ends (the server exited, the proxy about to) with a server's last answer
        # still in our buffer, and a client that reads slowly holds the server back, as directly.
        transport.set_write_buffer_limits(high=0)
        writer = asyncio.StreamWriter(transport, protocol, None, loop)

        async def write(chunk: bytes) -> None:
            writer.write(chunk)
            await writer.drain()

        return write
    fd = stream.fileno()

    async def write_directly(chunk: bytes) -> None:
        view = memoryview(chunk)
        while view:
            view = view[os.write(fd, view) :]

    return write_directly


def _is_pipe(stream: BinaryIO) -> bool:
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)
