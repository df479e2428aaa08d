"""The relay's connections to its upstream: HTTP/1.1 requests on asyncio protocols, answers parsed
by llhttp (``httptools``, what uvicorn parses with), connections kept alive and pooled.

The relay asks one origin for one exchange at a time per connection: a request (method, target,
the client's headers as they came, bytes, and a body read whole) and an answer whose head comes
first and whose body streams, decoded from its framing (``Content-Length``, chunked, or until
the connection closes), held back from the upstream (its reading paused) while the relay has
:data:`HIGH_WATER` bytes of it unrelayed. Nothing else an HTTP client library does is wanted
here: no redirects followed, no decompression, no cookies, no proxies from the environment. That
is why the relay does not forward with aiohttp's client any more: per request it cost as much CPU
as all of the relay's serving (README, "Dependencies, and why").

A request sent on a pooled connection the upstream closed under it, before a byte of an answer
(a server ending an idle keep-alive connection just as the proxy sent on it: RFC 9112 9.3.1),
went nowhere and goes out once more on a new connection; a request the upstream may have read
(on a new connection, or with part of an answer come) is never sent twice.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import AsyncIterator, Iterable
from typing import cast
from urllib.parse import urlsplit

import httptools
from multidict import CIMultiDict, CIMultiDictProxy

KEEPALIVE = 2.0  # seconds an idle connection is kept (before the usual servers' 5 s drop it)
CONNECT_TIMEOUT = 30.0
HIGH_WATER = 256 * 1024  # bytes of an answer held unrelayed before the upstream's reading pauses
_LOW_WATER = HIGH_WATER // 4


class UpstreamError(Exception):
    """The upstream could not be reached, or dropped the connection before the answer's end."""


class UpstreamUnreachable(UpstreamError):
    """No connection to the upstream could be made."""


class _ClosedBeforeTheAnswer(UpstreamError):
    """The connection closed (or was reset) with nothing of an answer received."""


class UpstreamResponse:
    """One answer from the upstream: its head at once, its body as it comes."""

    def __init__(self, connection: _Connection, status: int, reason: str, headers: CIMultiDict[str]) -> None:
        self._connection: _Connection | None = connection
        self.status = status
        self.reason = reason
        self.headers = CIMultiDictProxy(headers)
        length = headers.get("content-length")
        self.content_length = int(length) if length is not None and length.isdigit() else None
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._ended = False
        self._error: UpstreamError | None = None
        self._waiter: asyncio.Future[None] | None = None

    def at_eof(self) -> bool:
        """The whole body arrived, and every byte of it was taken."""
        return self._ended and not self._chunks

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes, as they arrive (an :class:`UpstreamError` if the connection drops first)."""
        while True:
            if self._chunks:
                chunk = self._chunks.popleft()
                self._buffered -= len(chunk)
                if self._buffered <= _LOW_WATER and self._connection is not None:
                    self._connection.resume()
                yield chunk
            elif self._ended:
                return
            elif self._error is not None:
                raise self._error
            else:
                self._waiter = asyncio.get_running_loop().create_future()
                try:
                    await self._waiter
                finally:
                    self._waiter = None

    def release(self) -> None:
        """Done with. An answer that came whole gave its connection back as it ended (to the pool,
        if the upstream keeps it alive); one that did not is abandoned and its connection closed
        (which the upstream sees)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    # --- told by the connection ---

    def _feed(self, data: bytes) -> None:
        self._chunks.append(data)
        self._buffered += len(data)
        if self._buffered > HIGH_WATER and self._connection is not None:
            self._connection.pause()
        self._wake()

    def _end(self) -> None:
        self._ended = True
        self._wake()

    def _fail(self, error: UpstreamError) -> None:
        if not self._ended:
            self._error = error
            self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


class _Connection(asyncio.Protocol):
    """One kept-alive connection to the upstream: one exchange at a time."""

    def __init__(self, pool: UpstreamPool) -> None:
        self._pool = pool
        self._transport: asyncio.Transport | None = None
        self._parser = httptools.HttpResponseParser(self)
        self._head: asyncio.Future[UpstreamResponse] | None = None
        self._response: UpstreamResponse | None = None
        self._headers: CIMultiDict[str] = CIMultiDict()
        self._reason = ""
        self._head_only = False  # a HEAD request's answer: its head is all of it
        self._received = False  # a byte of the current exchange's answer came
        self._paused = False
        self.idle_since = 0.0
        self.closed = False

    # --- the exchange ---

    def send(self, data: bytes, *, head_only: bool) -> asyncio.Future[UpstreamResponse]:
        assert self._transport is not None
        self._head = asyncio.get_running_loop().create_future()
        self._response = None
        self._headers = CIMultiDict()
        self._head_only = head_only
        self._received = False
        self._transport.write(data)
        return self._head

    def close(self) -> None:
        if self._transport is not None and not self.closed:
            self._transport.close()
        self.closed = True

    def pause(self) -> None:
        if self._transport is not None and not self._paused and not self.closed:
            self._paused = True
            self._transport.pause_reading()

    def resume(self) -> None:
        if self._transport is not None and self._paused and not self.closed:
            self._paused = False
            self._transport.resume_reading()

    # --- asyncio.Protocol ---

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's are not asyncio's classes

    def data_received(self, data: bytes) -> None:
        self._received = True
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            pass  # a 101: no body follows that this relay reads; the connection is not reused
        except httptools.HttpParserError as exc:
            self._fail(UpstreamError(f"the upstream's answer is not HTTP/1.1: {exc}"))
            self.close()

    def eof_received(self) -> bool | None:
        return None  # the connection closes (connection_lost follows)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._pool.gone(self)
        response = self._response
        if response is not None and not response._ended and self._close_delimited(response):
            response._end()  # an answer with neither a length nor chunks ends with its connection
            return
        if not self._received:
            self._fail(_ClosedBeforeTheAnswer(f"the upstream closed the connection before answering ({exc})"))
        else:
            self._fail(UpstreamError(f"the upstream dropped the connection mid-answer ({exc})"))

    # --- httptools' callbacks ---

    def on_status(self, status: bytes) -> None:
        self._reason = status.decode("latin-1")

    def on_header(self, name: bytes, value: bytes) -> None:
        # As aiohttp decodes them: bytes that are not UTF-8 travel on unchanged.
        self._headers.add(name.decode("utf-8", "surrogateescape"), value.decode("utf-8", "surrogateescape"))

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        if 100 <= status < 200 and status != 101:  # an interim answer: the real one follows
            self._headers = CIMultiDict()
            return
        response = UpstreamResponse(self, status, self._reason, self._headers)
        self._response = response
        if self._head_only or status == 101:
            # Its head is all of it. After a HEAD the parser may await a body, after a 101 the
            # bytes are another protocol's: the connection is not reused.
            response._end()
        if self._head is not None and not self._head.done():
            self._head.set_result(response)

    def on_body(self, body: bytes) -> None:
        if self._response is not None and not self._response._ended:
            self._response._feed(body)

    def on_message_complete(self) -> None:
        response = self._response
        if response is None or self._head_only:  # an interim answer's end, or a HEAD's
            return
        response._end()
        # The answer is all here: the connection is free for the next exchange at once (the
        # relay may still be writing this one's last bytes when the client sends its next).
        self._response, response._connection = None, None
        if self._parser.should_keep_alive():
            self.resume()
            self._pool.idle(self)
        else:
            self.close()

    # ---

    def _close_delimited(self, response: UpstreamResponse) -> bool:
        return response.content_length is None and "chunked" not in response.headers.get("transfer-encoding", "")

    def _fail(self, error: UpstreamError) -> None:
        if self._head is not None and not self._head.done():
            self._head.set_exception(error)
            self._head.exception()  # retrieved here: an abandoned exchange's failure is no one's news
        elif self._response is not None:
            self._response._fail(error)


class UpstreamPool:
    """Connections to one origin (``scheme://host[:port]``), reused while idle under
    :data:`KEEPALIVE` seconds."""

    def __init__(self, origin: str) -> None:
        parts = urlsplit(origin)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or "localhost"
        self._port = parts.port or (443 if self._https else 80)
        self._host_header = parts.netloc.rsplit("@", 1)[-1].encode("idna")
        self._ssl = ssl.create_default_context() if self._https else None
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()

    def start(
        self, method: str, target: str, headers: Iterable[tuple[bytes, bytes]], body: bytes
    ) -> asyncio.Future[UpstreamResponse]:
        """The request sent, at once when an idle connection is at hand (so that the relay's own
        work on it is done while the upstream reads it); the answer's head to come (its body
        streams: :meth:`UpstreamResponse.chunks`)."""
        data = self._request_bytes(method, target, headers, body)
        head_only = method == "HEAD"
        connection = self._pooled()
        head = connection.send(data, head_only=head_only) if connection is not None else None
        return asyncio.ensure_future(self._answer(connection, head, data, head_only))

    async def fetch(
        self, method: str, target: str, headers: Iterable[tuple[bytes, bytes]], body: bytes, *, limit: int
    ) -> tuple[UpstreamResponse, bytes]:
        """One exchange of the proxy's own (no client's): the answer and its body read whole, at
        most ``limit`` bytes of it (more: an :class:`UpstreamError`); its connection back to the
        pool, or closed."""
        response = await self.start(method, target, headers, body)
        try:
            data = bytearray()
            async for chunk in response.chunks():
                data += chunk
                if len(data) > limit:
                    raise UpstreamError(f"the upstream's answer is longer than {limit} bytes")
            return response, bytes(data)
        finally:
            response.release()

    async def _answer(
        self,
        connection: _Connection | None,
        head: asyncio.Future[UpstreamResponse] | None,
        data: bytes,
        head_only: bool,
    ) -> UpstreamResponse:
        if connection is not None and head is not None:
            try:
                return await self._awaited(connection, head)
            except _ClosedBeforeTheAnswer:
                pass  # it went nowhere: once more, on a new connection
        connection = await self._connect()
        return await self._awaited(connection, connection.send(data, head_only=head_only))

    async def _awaited(self, connection: _Connection, head: asyncio.Future[UpstreamResponse]) -> UpstreamResponse:
        try:
            return await head
        except BaseException:  # failed, or given up on (the client left): the upstream sees it closed
            connection.close()
            raise

    def idle(self, connection: _Connection) -> None:
        connection.idle_since = asyncio.get_running_loop().time()
        self._idle.append(connection)

    def gone(self, connection: _Connection) -> None:
        self._open.discard(connection)
        if connection in self._idle:
            self._idle.remove(connection)

    def close(self) -> None:
        for connection in list(self._open):
            connection.close()
        self._idle.clear()

    def _pooled(self) -> _Connection | None:
        """The most recently used idle connection still worth trying; those idle past
        :data:`KEEPALIVE` are closed (the pool is in the order they went idle: the least recently
        used first, so a pool once wide does not stay open)."""
        now = asyncio.get_running_loop().time()
        while self._idle and now - self._idle[0].idle_since >= KEEPALIVE:
            self._idle.pop(0).close()
        while self._idle:
            connection = self._idle.pop()
            if not connection.closed:  # its close is seen, but not yet its connection_lost
                return connection
        return None

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        connection = _Connection(self)
        server_hostname = self._host if self._ssl is not None else None
        try:
            await asyncio.wait_for(
                loop.create_connection(
                    lambda: connection, self._host, self._port, ssl=self._ssl, server_hostname=server_hostname
                ),
                CONNECT_TIMEOUT,
            )
        except (OSError, asyncio.TimeoutError) as exc:
            reason = str(exc) or type(exc).__name__  # a timeout's message is empty
            raise UpstreamUnreachable(f"cannot connect to {self._host}:{self._port}: {reason}") from exc
        self._open.add(connection)
        return connection

    def _request_bytes(self, method: str, target: str, headers: Iterable[tuple[bytes, bytes]], body: bytes) -> bytes:
        lines = [f"{method} {target} HTTP/1.1\r\n".encode("latin-1"), b"Host: ", self._host_header, b"\r\n"]
        for name, value in headers:
            lines += (name, b": ", value, b"\r\n")
        if body or method in ("POST", "PUT", "PATCH"):
            lines.append(b"Content-Length: %d\r\n" % len(body))
        lines.append(b"\r\n")
        lines.append(body)
        return b"".join(lines)
