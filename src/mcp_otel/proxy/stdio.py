"""The stdio relay: the server process, both pipes byte for byte, signals and shutdown.

Bytes are written on as soon as they are read, whole chunks, never held for a line: the
observer (:class:`mcp_otel.proxy.wire.WireSession`) is told each complete line after it was
relayed, and whatever it does (it never raises) cannot alter, drop or hold traffic. As the
client (``--as client``), the client's stream goes on line by line instead, each request with
the proxy's trace context added to it. The server's stderr is the proxy's (passed through
untouched); the proxy's own words go to stderr too.

The relay is the event loop's callbacks on the pipes' transports, not streams: a chunk goes on
in the callback that read it, with no task, future or buffer between. Each side's flow control
pauses the other: while the server's stdin holds more than its pipe took, the client is not
read; while the client's stdout has not taken a chunk whole, the server is not read.

Shutdown is the MCP stdio transport's: when the client closes the proxy's stdin, the server's
stdin is closed, then the server is given ``STOP_WAIT`` seconds to exit, then SIGTERM, then as
long again, then SIGKILL. SIGINT and SIGTERM sent to the proxy go to the server; sent by the
client (:mod:`mcp_otel.proxy.signals` says who sent them), they are also the client leaving, as
when it closes stdin. The proxy exits with the server's status (128 + N for a server ended by
signal N).

The server's environment is the one the proxy was started with, not the proxy interpreter's own:
Python's locale coercion (PEP 538) puts ``LC_CTYPE`` in its own where the locale is C, as it is
where desktop clients start servers (:func:`server_environment`).

Over 400 lines: the client's pipes and the server process are asyncio protocols of one relay that
pause, drain and stop one another; split, each would reach into the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import locale
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Protocol, cast

from mcp_otel.model.safety import report_once
from mcp_otel.proxy.signals import STOPS, SignalSenders, unwatched
from mcp_otel.proxy.wire import MAX_OBSERVED_LINE, WireSession

CHUNK = 64 * 1024
STOP_WAIT = 2.0  # seconds, as the MCP SDKs' stdio clients wait
# The block of variables this process was started with, as the kernel keeps it (Linux): setenv
# does not change it.
STARTED_WITH = Path("/proc/self/environ")
# What Python's locale coercion sets LC_CTYPE to: the first the C library has (pylifecycle.c).
COERCION_TARGETS = ("C.UTF-8", "C.utf8", "UTF-8")


class Lines:
    """A byte stream cut into lines, each handed to ``on_line`` (without its newline), which
    may give back what goes on instead (``None``: the line as it came). A line longer than
    ``limit`` goes on as it came, unseen, and so do the bytes after the last newline when the
    stream ends. :meth:`feed` returns what goes on for a chunk (only the client's stream, as the
    client, is sent that way); :meth:`observe` only hands on the lines of a chunk already sent."""

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

    def observe(self, chunk: bytes) -> None:
        """:meth:`feed`, building nothing to send: most chunks are one whole line, handed on as
        a slice of the chunk."""
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            if self._overlong:
                self._overlong = False
            elif self._pending:
                self._pending += chunk[start:end]
                self._line(bytes(self._pending))
                self._pending.clear()
            else:
                self._line(chunk[start:end])
            start = end + 1
        if start < len(chunk) and not self._overlong:
            self._pending += chunk[start:]
            if len(self._pending) > self._limit:
                self._pending.clear()
                self._overlong = True

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


async def relay(
    command: Sequence[str],
    session: WireSession,
    flush: Callable[[], None] = lambda: None,
    senders: SignalSenders | None = None,
) -> int:
    """Run ``command`` with this process's stdin and stdout relayed to it; its exit status.
    ``flush`` exports the telemetry so far: called (in a thread) as soon as the client hangs up,
    before the server is stopped, since the client may kill the proxy soon after (the MCP SDKs'
    stdio clients send SIGKILL 4 s after closing). ``senders``: who sends SIGINT and SIGTERM,
    where the process watches them (:meth:`SignalSenders.watch`); else the loop takes them."""
    senders = senders or SignalSenders()
    loop = asyncio.get_running_loop()
    to_client = await _ToClient.connect(sys.stdout.buffer)
    _, server = await loop.subprocess_exec(
        lambda: _Server(loop, session, to_client),
        *command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None,
        env=server_environment(),
    )
    client = _Client(server, session, flush)

    def stopped(number: int, sender: int | None) -> None:
        """SIGINT or SIGTERM: passed on to the server. Sent by the client, it is the client
        leaving (its calls in flight abandoned, as when it closes stdin); by anyone else (an
        operator, a service manager), the server's shutdown, which its exit will say."""
        if sender is not None and senders.from_client(sender):
            client.hung_up()
        _forward(server, number)

    def handed(number: int, sender: int) -> None:  # in the watching thread
        try:
            loop.call_soon_threadsafe(stopped, number, sender)
        except RuntimeError:  # the loop is closed: the relay is over
            unwatched(number, sender)

    if senders.watching:
        senders.listen(handed)
    else:
        for number in STOPS:
            loop.add_signal_handler(number, stopped, number, None)
    try:
        await client.start(sys.stdin.buffer)
        await server.relayed  # its stdout ended, and every byte of it reached the client
        returncode = await server.wait()
        left = client.left
        server_first = left is None and client.flushed is None
        if left is not None:
            await left  # it stopped the server and flushed the telemetry
        if client.flushed is not None:
            await client.flushed
    finally:
        client.close()
        if senders.watching:
            senders.stop()
        else:
            for number in STOPS:
                loop.remove_signal_handler(number)
    session.end(server_exited_first=server_first, exit_status=returncode)
    return returncode if returncode >= 0 else 128 - returncode


def server_environment() -> dict[bytes, bytes] | None:
    """The server's environment: the one the proxy was started with, whatever its interpreter
    did to its own (``None``: the inherited one is that). On Linux, that block itself; elsewhere
    the inherited one without the ``LC_CTYPE`` that Python's locale coercion set, where it did."""
    if sys.platform == "win32":  # no coercion there
        return None
    try:
        block = STARTED_WITH.read_bytes()
    except OSError:  # no /proc (macOS, BSD)
        return _without_coercion()
    environment: dict[bytes, bytes] = {}
    for entry in block.split(b"\0"):
        name, equals, value = entry.partition(b"=")
        if equals:  # one without '=' is no variable (os.environ skips it too)
            environment.setdefault(name, value)  # a name given twice: the first, as getenv sees
    return environment


def _without_coercion() -> dict[bytes, bytes] | None:
    if not _coerced():
        return None
    environment = dict(os.environb)
    environment.pop(b"LC_CTYPE", None)
    return environment


def _coerced() -> bool:
    """Whether Python's locale coercion (PEP 538) set this process's ``LC_CTYPE``. It sets one of
    its targets, one the C library has (so the one in effect), only with ``LC_ALL`` unset or
    empty and coercion not turned off, and only where the locale was C, which turns UTF-8 mode
    on as well (PEP 540): where that mode was asked for, against, or is the default (3.15), it
    tells nothing, and ``LANG`` unset (as desktop clients start servers) is taken for the sign."""
    environ = os.environ
    ctype = environ.get("LC_CTYPE")
    if ctype not in COERCION_TARGETS or environ.get("LC_ALL") or locale.setlocale(locale.LC_CTYPE) != ctype:
        return False
    told = "utf8" in sys._xoptions or sys.version_info >= (3, 15)
    if not sys.flags.ignore_environment:  # Python read these (an empty one is unset to it)
        if environ.get("PYTHONCOERCECLOCALE") == "0":
            return False
        told = told or bool(environ.get("PYTHONUTF8"))
    return not environ.get("LANG") if told else sys.flags.utf8_mode == 1


class _Process(Protocol):
    """What :func:`stop_process` needs of a process: :class:`asyncio.subprocess.Process` has it."""

    @property
    def returncode(self) -> int | None: ...

    @property
    def stdin(self) -> Any: ...

    def terminate(self) -> None: ...

    def kill(self) -> None: ...

    async def wait(self) -> int:
        """The exit status, once exited; cancelling one wait must not cancel another's."""
        ...


async def stop_process(process: _Process) -> None:
    """The MCP stdio transport's shutdown: stdin closed, a wait, SIGTERM, a wait, SIGKILL."""
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


def _forward(server: _Server, number: int) -> None:
    if server.returncode is None:
        server.send_signal(number)


class _Server(asyncio.SubprocessProtocol):
    """The server process, whose stdout goes to the client as each chunk comes (then observed),
    and whose stdin, when it holds more than the pipe took, pauses reading the client."""

    def __init__(self, loop: asyncio.AbstractEventLoop, session: WireSession, to_client: _ToClient) -> None:
        self._lines = Lines(session.from_server)
        self._exited = loop.create_future()
        self.relayed: asyncio.Future[None] = loop.create_future()
        self.to_client = to_client
        to_client.on_full = self._client_full
        self.stdin: asyncio.WriteTransport | None = None
        self.on_stdin_full: Callable[[bool], None] = lambda full: None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.SubprocessTransport, transport)
        self.stdin = cast(asyncio.WriteTransport, self._transport.get_pipe_transport(0))
        self._stdout = cast(asyncio.ReadTransport, self._transport.get_pipe_transport(1))

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        assert isinstance(data, bytes)
        self.to_client.write(data)
        self._lines.observe(data)

    def pipe_connection_lost(self, fd: int, exc: BaseException | None) -> None:
        if fd == 0:  # the server is gone, or its stdin closed: its exit ends the relay
            self.stdin = None
        elif fd == 1:
            self.to_client.when_drained(self.relayed)

    def process_exited(self) -> None:
        if not self._exited.done():
            self._exited.set_result(None)

    # The server's stdin: its flow control pauses the client's stream.
    def pause_writing(self) -> None:
        self.on_stdin_full(True)

    def resume_writing(self) -> None:
        self.on_stdin_full(False)

    def _client_full(self, full: bool) -> None:  # the client's stdout pauses the server's
        self._stdout.pause_reading() if full else self._stdout.resume_reading()

    def send(self, data: bytes) -> None:
        if self.stdin is not None and data and not self.stdin.is_closing():
            self.stdin.write(data)

    # As asyncio.subprocess.Process, for stop_process.
    @property
    def returncode(self) -> int | None:
        return self._transport.get_returncode()

    def send_signal(self, number: int) -> None:
        self._transport.send_signal(number)

    def terminate(self) -> None:
        self._transport.terminate()

    def kill(self) -> None:
        self._transport.kill()

    async def wait(self) -> int:
        # Shielded: the exit is one future for every waiter, and stop_process's wait_for cancels
        # what it times out on (the relay awaited it next, and met a CancelledError).
        await asyncio.shield(self._exited)
        returncode = self._transport.get_returncode()
        assert returncode is not None
        return returncode


class _ToClient(asyncio.Protocol):
    """This process's stdout. On a pipe, no byte is held past a write: while the client's pipe
    has not taken a chunk whole, the server's stdout is not read, so a client that reads slowly
    holds the server back, as directly, and the relay never ends (the server exited, the proxy
    about to) with a server's last answer still in our buffer. A file is written directly."""

    def __init__(self) -> None:
        self._transport: asyncio.WriteTransport | None = None
        self._fd: int | None = None
        self._drained: asyncio.Future[None] | None = None  # resolved once nothing is left to write
        self.on_full: Callable[[bool], None] = lambda full: None

    @classmethod
    async def connect(cls, stream: BinaryIO) -> _ToClient:
        to_client = cls()
        if _is_pipe(stream):
            transport, _ = await asyncio.get_running_loop().connect_write_pipe(lambda: to_client, stream)
            transport.set_write_buffer_limits(high=0)
        else:
            to_client._fd = stream.fileno()
        return to_client

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.WriteTransport, transport)  # uvloop's are no asyncio.WriteTransport

    def write(self, chunk: bytes) -> None:
        if self._transport is not None:
            if not self._transport.is_closing():  # uvloop raises on a write to a closed pipe
                self._transport.write(chunk)
        elif self._fd is not None:
            try:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(self._fd, view) :]
            except OSError:  # the client is gone; the server is being stopped
                self._fd = None

    def when_drained(self, future: asyncio.Future[None]) -> None:
        """Resolve ``future`` once every byte written has left (or the client is gone)."""
        if self._transport is None or not self._transport.get_write_buffer_size():
            future.set_result(None)
        else:
            self._drained = future

    def pause_writing(self) -> None:
        self.on_full(True)

    def resume_writing(self) -> None:
        self.on_full(False)
        self._settle()

    def connection_lost(self, exc: Exception | None) -> None:  # the client is gone
        self._transport = None
        self.on_full(False)
        self._settle()

    def _settle(self) -> None:
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)
        self._drained = None


class _Client(asyncio.Protocol):
    """This process's stdin, relayed to the server's as each chunk comes, each line observed
    once relayed; as the client (``--as client``), line by line as the session rewrites them,
    each request with the proxy's trace context added. Its end ends the session: the server is
    stopped and the telemetry flushed (:attr:`left`)."""

    def __init__(self, server: _Server, session: WireSession, flush: Callable[[], None]) -> None:
        self._server = server
        self._session = session
        self._flush = flush
        self._rewritten = Lines(session.client_line) if session.as_client else None
        self._lines = Lines(session.from_client)
        self._transport: asyncio.ReadTransport | None = None
        self._reading_file: asyncio.Task[None] | None = None
        self._server_ready = asyncio.Event()
        self._server_ready.set()
        self.left: asyncio.Task[None] | None = None
        self.flushed: asyncio.Future[None] | None = None  # the client left by a signal: the flush
        self._closed = False
        server.on_stdin_full = self._server_full

    async def start(self, stream: BinaryIO) -> None:
        loop = asyncio.get_running_loop()
        if _is_pipe(stream):
            await loop.connect_read_pipe(lambda: self, stream)
        else:  # a file: blocking reads in a thread, which end at its end
            self._reading_file = asyncio.create_task(self._read_file(stream.fileno()))

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.ReadTransport, transport)

    def data_received(self, data: bytes) -> None:
        if self._rewritten is not None:
            self._server.send(self._rewritten.feed(data))
        else:
            self._server.send(data)
            self._lines.observe(data)

    def eof_received(self) -> bool:
        if self._rewritten is not None:
            self._server.send(self._rewritten.end())
        self.left = asyncio.create_task(self._leave())
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if self.left is None and not self._closed:  # a read failed: the client is gone too
            self.eof_received()

    def close(self) -> None:
        self._closed = True
        if self.left is not None:
            self.left.cancel()
        if self._reading_file is not None:
            self._reading_file.cancel()
        if self._transport is not None:
            self._transport.close()

    def hung_up(self) -> None:
        """The client ended the proxy with a signal, its stdin still open: it left all the same
        (the signal goes on to the server, whose exit ends the relay)."""
        if self.left is None and self.flushed is None:
            self._session.end(server_exited_first=False, exit_status=0)
            self.flushed = asyncio.ensure_future(asyncio.to_thread(self._flush))

    async def _leave(self) -> None:
        self._session.end(server_exited_first=False, exit_status=0)  # the session ends with the client
        flushed = asyncio.create_task(asyncio.to_thread(self._flush))
        await stop_process(self._server)
        await flushed

    def _server_full(self, full: bool) -> None:  # the server's stdin pauses the client's
        if self._transport is not None:
            self._transport.pause_reading() if full else self._transport.resume_reading()
        self._server_ready.clear() if full else self._server_ready.set()

    async def _read_file(self, fd: int) -> None:
        while chunk := await asyncio.to_thread(os.read, fd, CHUNK):
            self.data_received(chunk)
            await self._server_ready.wait()
        self.eof_received()


def _is_pipe(stream: BinaryIO) -> bool:
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)
