"""The relay's client (:mod:`mcp_otel.proxy.upstream`) against a server that answers with exactly
the bytes each test gives it, on 127.0.0.1: every framing of an answer, interim and bodiless
answers, a kept-alive connection reused and one that is not, bytes a parser refuses, an answer
held back while unread, and an origin that is not there."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from mcp_otel.proxy.upstream import HIGH_WATER, UpstreamError, UpstreamPool, UpstreamResponse, UpstreamUnreachable
from tests.processes import LOOPBACK, free_port

pytestmark = pytest.mark.anyio


Answer = bytes | Callable[[asyncio.StreamWriter], None]


class Upstream:
    """A TCP server that reads each request (head and ``Content-Length`` body) and answers it with
    the next of ``answers`` (bytes, or a function of the server's writer); it counts connections."""

    def __init__(self, answers: list[Answer]) -> None:
        self.answers = answers
        self.requests: list[bytes] = []
        self.connections = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.answers:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                self.requests.append(head + await reader.readexactly(length))
                answer = self.answers.pop(0)
                if callable(answer):
                    answer(writer)
                else:
                    writer.write(answer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def upstream(
    *answers: bytes | Callable[[asyncio.StreamWriter], None],
) -> AsyncIterator[tuple[Upstream, UpstreamPool]]:
    server = Upstream(list(answers))
    port = free_port()
    listening = await asyncio.start_server(server.serve, LOOPBACK, port)
    pool = UpstreamPool(f"http://{LOOPBACK}:{port}")
    try:
        yield server, pool
    finally:
        pool.close()
        listening.close()
        await listening.wait_closed()


async def body_of(response: UpstreamResponse) -> bytes:
    return b"".join([chunk async for chunk in response.chunks()])


async def post(pool: UpstreamPool, body: bytes = b"{}") -> UpstreamResponse:
    return await pool.start("POST", "/mcp?x=1", [(b"Accept", b"text/event-stream")], body)


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
CHUNKED = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
)


async def test_the_request_goes_out_as_given() -> None:
    async with upstream(OK) as (server, pool):
        response = await post(pool, b'{"a":1}')
        assert (response.status, response.reason, await body_of(response)) == (200, "OK", b"ok")
    host = f"Host: {LOOPBACK}:".encode()
    (request,) = server.requests
    assert request.startswith(b"POST /mcp?x=1 HTTP/1.1\r\n" + host)
    assert request.endswith(b"\r\nAccept: text/event-stream\r\nContent-Length: 7\r\n\r\n" + b'{"a":1}')


async def test_every_framing_is_read_to_its_end_and_a_kept_alive_connection_reused() -> None:
    close_delimited = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end"
    async with upstream(OK, CHUNKED, b"HTTP/1.1 204 No Content\r\n\r\n", close_delimited) as (server, pool):
        bodies = []
        for _ in range(4):
            response = await post(pool)
            bodies.append((response.status, await body_of(response)))
            assert response.at_eof()
            response.release()
        assert bodies == [(200, b"ok"), (200, b"abcde"), (204, b""), (200, b"until the end")]
        assert server.connections == 1  # one connection for all four, the last closed by the server


async def test_an_interim_answer_is_passed_over() -> None:
    async with upstream(b"HTTP/1.1 100 Continue\r\n\r\n" + OK) as (_, pool):
        response = await post(pool)
        assert (response.status, await body_of(response)) == (200, b"ok")


async def test_a_head_answer_is_its_head_and_its_connection_not_reused() -> None:
    async with upstream(b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", OK) as (server, pool):
        head = await pool.start("HEAD", "/mcp", [], b"")
        assert (head.status, head.content_length, await body_of(head)) == (200, 99, b"")
        head.release()
        response = await post(pool)
        assert await body_of(response) == b"ok"
        assert server.connections == 2


async def test_header_bytes_travel_as_they_came() -> None:
    odd = b"HTTP/1.1 200 OK\r\nX-Name: caf\xc3\xa9 \xff\r\nContent-Length: 0\r\n\r\n"
    async with upstream(odd) as (_, pool):
        response = await post(pool)
        assert response.headers["x-name"].encode("utf-8", "surrogateescape") == b"caf\xc3\xa9 \xff"


async def test_a_malformed_or_cut_answer_is_an_upstream_error() -> None:
    async with upstream(b"HTTP/1.1 200 OK\r\nContent-Length: nope\r\n\r\n") as (_, pool):
        with pytest.raises(UpstreamError):
            await post(pool)

    def cut(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf")
        writer.close()

    async with upstream(cut) as (_, pool):
        response = await post(pool)
        with pytest.raises(UpstreamError):
            await body_of(response)


async def test_an_unread_answer_holds_the_upstream_back() -> None:
    """Past HIGH_WATER bytes unread, the connection stops reading: the rest waits in the
    upstream's socket, not in the proxy."""
    size = 8 * HIGH_WATER
    big = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size + b"x" * size
    async with upstream(big) as (_, pool):
        response = await post(pool)
        await asyncio.sleep(0.3)
        assert HIGH_WATER < response._buffered < 2 * HIGH_WATER
        assert len(await body_of(response)) == size


async def test_an_origin_that_is_not_there_is_unreachable() -> None:
    port = free_port()
    pool = UpstreamPool(f"http://{LOOPBACK}:{port}")
    with pytest.raises(UpstreamUnreachable, match=rf"cannot connect to {LOOPBACK}:{port}: \[Errno \d+\]"):
        await post(pool)


async def test_a_connect_that_times_out_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_otel.proxy import upstream as module

    monkeypatch.setattr(module, "CONNECT_TIMEOUT", 0)  # over before the connection is made
    async with upstream(OK) as (_, pool):
        with pytest.raises(UpstreamUnreachable, match=r": TimeoutError$"):
            await post(pool)


async def test_a_connection_idle_past_the_keepalive_is_not_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_otel.proxy import upstream as module

    monkeypatch.setattr(module, "KEEPALIVE", 0.05)
    async with upstream(OK, OK, OK) as (server, pool):
        for pause in (0, 0.2, 0):
            await asyncio.sleep(pause)
            assert await body_of(await post(pool)) == b"ok"
        assert server.connections == 2  # the second request found the first's connection too old


async def test_the_proxys_own_exchange_is_read_whole_and_bounded() -> None:
    """fetch (the proxy asking the upstream the server's name): the answer and its whole body, the
    connection back to the pool for the next exchange; an answer over its limit is an error."""
    async with upstream(CHUNKED, OK, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\ntoo long") as (server, pool):
        response, body = await pool.fetch("POST", "/mcp", [(b"Accept", b"text/event-stream")], b"{}", limit=5)
        assert (response.status, body) == (200, b"abcde")
        response, body = await pool.fetch("DELETE", "/mcp", [(b"Mcp-Session-Id", b"s1")], b"", limit=5)
        assert (response.status, body) == (200, b"ok")
        assert server.connections == 1
        assert server.requests[1].startswith(b"DELETE /mcp HTTP/1.1\r\n")
        assert b"\r\nMcp-Session-Id: s1\r\n\r\n" in server.requests[1]
        with pytest.raises(UpstreamError, match="longer than 4 bytes"):
            await pool.fetch("POST", "/mcp", [], b"{}", limit=4)
