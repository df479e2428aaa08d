"""The streamable HTTP relay: a reverse proxy in front of one MCP server's URL.

Every request goes on to the same path and query on the upstream's origin, with its method, its
headers (``Authorization`` included, never recorded) but the hop-by-hop ones, and its body;
every answer comes back with the upstream's status, headers and body unchanged. An SSE answer
(a POST's, or the GET stream) is relayed chunk by chunk as it arrives, never held whole, and
its events are observed after they were relayed; a JSON answer is observed once relayed, up to
:data:`~mcp_otel.proxy.wire.MAX_OBSERVED_LINE`. Bodies are relayed as they are encoded (no
decompression): a compressed body is relayed, not observed.

What the wire front end (:class:`mcp_otel.proxy.wire.WireSession`) is told, per
``Mcp-Session-Id`` (an exchange of its own when the server keeps no session, as on
2026-07-28): each POST body the client sent, each JSON answer and SSE event the server sent; an
answer refused before JSON-RPC (HTTP status >= 400 with no JSON-RPC answer in it); the client
closing a 2026-07-28 request's stream before its answer (its cancel; on earlier revisions a
client cancels with ``notifications/cancelled``, and a closed stream is not a cancel); the
upstream unreachable or dropping the connection mid-answer; a POST's answer ending before the
answers to its requests (which then come on another stream, if at all); a DELETE (the
session's end); the proxy no longer following a session (past :data:`MAX_SESSIONS`).

The HTTP+SSE transport (protocol 2024-11-05) is followed too: a GET stream whose first event is
``endpoint`` is a session's, and the POSTs to that endpoint (answered 202) are answered on it.
The session lives as long as the proxy holds its stream: the client closing it ends the session
(its requests in flight abandoned), the upstream ending or dropping it fails them. An absolute
endpoint on the upstream's origin is rewritten to the proxy's, so that the client's POSTs come
through the proxy too (the one change made to a relayed byte).
A request the listener's guard refuses (:mod:`mcp_otel.proxy.guard`) is answered by the proxy
and told to no one.

The server's name and version, once seen in any session's answer, name every session that
learnt none itself (:class:`~mcp_otel.proxy.wire.KnownServer`: a replica behind a round-robin
balancer sees sessions whose handshake went to another). While none is known, a request whose
handshake went elsewhere (an ``Mcp-Session-Id`` not seen given here, or an
``Mcp-Protocol-Version`` header, sent only after a handshake or on 2026-07-28) makes the proxy ask
the upstream itself, as a client would, beside the client's request (never on its connection,
never holding it): ``server/discover``, stateless; if that names no server, ``initialize``,
whose session is deleted at once (:meth:`HttpRelay._ask_upstream`). Until the answer, the spans
that would end without the name wait for it, that request's own included: named, they end at
the time they would have.

aiohttp's low-level server serves (its parser and multidicts in C, streaming both ways);
:mod:`mcp_otel.proxy.upstream` forwards, on llhttp (README, "Dependencies, and why").

Over 400 lines: :class:`HttpRelay` is one ASGI application, and its routes (a POST and its answer,
the GET event stream, HTTP+SSE's endpoint and session) and its asking the upstream for the server's
name share one state: the relay's sessions, its upstream client and its drains.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, AnyStr
from urllib.parse import parse_qs, urlsplit

from aiohttp import web
from yarl import URL

from mcp_otel.model import messages
from mcp_otel.model.safety import report_once
from mcp_otel.proxy.guard import ListenerGuard
from mcp_otel.proxy.jsonrpc import Key
from mcp_otel.proxy.stdio import Lines
from mcp_otel.proxy.upstream import UpstreamError, UpstreamPool, UpstreamResponse
from mcp_otel.proxy.wire import MAX_OBSERVED_LINE, KnownServer, WireSession
from mcp_otel.semconv import CLIENT_ADDRESS, CLIENT_PORT, METHOD_INITIALIZE, METHOD_SERVER_DISCOVER
from mcp_otel.version import __version__

SESSION_HEADER = "mcp-session-id"
PROTOCOL_HEADER = "mcp-protocol-version"
# The revision from which a client's closing a request's stream is its cancel.
STREAM_CLOSE_CANCELS_FROM = "2026-07-28"
# Headers that belong to one connection (RFC 9110 7.6.1), not relayed; Host and Content-Length
# are the proxy's own to set on each leg.
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
_HOP_BY_HOP_RAW = frozenset(name.encode() for name in _HOP_BY_HOP)
_TRACE_HEADERS = ("traceparent", "tracestate", "baggage")
# The HTTP+SSE transport: the event naming a session's endpoint, the query parameter naming the
# session in it (the TypeScript SDK's, the Python SDK's), and how much of a GET stream is read
# for its first event before it is relayed as it is.
ENDPOINT_EVENT = "endpoint"
SESSION_PARAMETERS = ("sessionId", "session_id")
MAX_FIRST_EVENT = 64 * 1024
# The largest request body relayed (a POST is one JSON-RPC message or batch).
MAX_BODY = MAX_OBSERVED_LINE
# Sessions tracked at once: past it, the least recently used one ends (a client that opens
# sessions and never closes them cannot grow the proxy without bound).
MAX_SESSIONS = 10_000
# Answers read on at once after their client left (past it, their connections are closed).
MAX_DRAINS = 1000
NewSession = Callable[[], WireSession]
# The proxy asking the upstream its name: seconds each exchange may take, seconds before a
# question that failed is asked again, the largest answer read, and what it asks with (the
# revisions the SDKs propose first: 2026-07-28's stateless discovery, the handshake's newest).
ASK_TIMEOUT = 5.0
ASK_AGAIN_AFTER = 30.0
_ASK_MAX_ANSWER = 1024 * 1024
_DISCOVER_VERSION = "2026-07-28"
_HANDSHAKE_VERSION = "2025-11-25"
_ASK_ID = 1
_CLIENT_INFO = {"name": "mcp-otel-proxy", "version": __version__}


class Sse:
    """Server-sent events cut out of a byte stream: each event's ``data`` handed to ``on_data``
    (an event whose data grows past ``limit`` is relayed unobserved)."""

    def __init__(self, on_data: Callable[[bytes], None], limit: int = MAX_OBSERVED_LINE) -> None:
        self._on_data = on_data
        self._limit = limit
        self._data: list[bytes] = []
        self._size = 0
        self._overlong = False
        self._lines = Lines(self._line, limit)

    def feed(self, chunk: bytes) -> None:
        self._lines.observe(chunk)

    def _line(self, line: bytes) -> None:
        line = line.removesuffix(b"\r")
        if not line:  # an event ends
            data, overlong = self._data, self._overlong
            self._data, self._size, self._overlong = [], 0, False
            if data and not overlong:
                self._on_data(b"\n".join(data))
        elif line.startswith(b"data:") and not self._overlong:
            value = _data_value(line)
            self._size += len(value) + 1
            if self._size > self._limit:
                self._data, self._overlong = [], True
            else:
                self._data.append(value)


@dataclass(slots=True)
class _Exchange:
    """One request to relay: the client's, the session it belongs to, the JSON-RPC requests in it."""

    request: web.BaseRequest
    session: WireSession
    session_id: str | None
    keys: list[Key]
    # A POST to an HTTP+SSE session: its answers come on the session's stream, held here.
    on_stream: bool = False
    # This answer is an HTTP+SSE session's stream, followed under this endpoint.
    stream: str | None = None


class _Observed:
    """What the proxy reads of an answer as it goes by: its SSE events, or a JSON body (up to
    :data:`~mcp_otel.proxy.wire.MAX_OBSERVED_LINE`); nothing of a compressed one."""

    def __init__(self, session: WireSession, headers: Mapping[str, str]) -> None:
        self._session = session
        observe = headers.get("content-encoding") in (None, "identity")
        event_stream = headers.get("content-type", "").startswith("text/event-stream")
        self._events = Sse(session.from_server) if observe and event_stream else None
        self._body: bytearray | None = bytearray() if observe and not event_stream else None

    @property
    def events(self) -> bool:
        """Whether the answer is an event stream, observed."""
        return self._events is not None

    def feed(self, chunk: bytes) -> None:
        if self._events is not None:
            self._events.feed(chunk)
        elif self._body is not None:
            self._body += chunk
            if len(self._body) > MAX_OBSERVED_LINE:
                self._body = None

    def end(self) -> None:
        if self._body:
            self._session.from_server(bytes(self._body))


class HttpRelay:
    """Relays one upstream's streamable HTTP and tells the wire sessions what passes."""

    def __init__(
        self,
        upstream: str,
        new_session: NewSession,
        *,
        as_client: bool = False,
        guard: ListenerGuard | None = None,
        known_server: KnownServer | None = None,
    ) -> None:
        """``known_server``: the server as its sessions (``new_session``'s) last saw it named; with
        it, the relay asks the upstream while it names none (see the module's docstring)."""
        parts = urlsplit(upstream)
        self._guard = guard
        self._refused = False  # one refusal said on stderr
        self._origin = f"{parts.scheme}://{parts.netloc}"
        self._new_session = new_session
        self._as_client = as_client
        self._sessions: OrderedDict[str, WireSession] = OrderedDict()
        self._exchanges: set[WireSession] = set()  # outside any session, in flight
        # HTTP+SSE sessions by their endpoint's path and query, while their stream is held here.
        self._legacy: dict[str, WireSession] = {}
        self._drains: set[asyncio.Future[None]] = set()  # answers read on after their client left
        self._upstream = UpstreamPool(self._origin)
        self._known = known_server
        self._target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._asking: asyncio.Future[None] | None = None
        self._ask_after = 0.0  # the loop's time before which a question that failed is not asked again
        self._ask_failed = False  # said once on stderr

    async def close(self) -> None:
        """The proxy stops: every session ends (what is still in flight with the client gone)."""
        if self._asking is not None:
            self._asking.cancel()
        if self._known is not None:
            self._known.answered()  # what waited for the name ends, unnamed
        drains = list(self._drains)
        for drain in drains:
            drain.cancel()
        await asyncio.gather(*drains, return_exceptions=True)
        while self._exchanges:
            self._exchanges.pop().end(server_exited_first=False, exit_status=0, recorded=False)
        while self._sessions:
            _, session = self._sessions.popitem(last=False)
            session.end(server_exited_first=False, exit_status=0)
        while self._legacy:
            self._legacy.popitem()[1].end(server_exited_first=False, exit_status=0)
        self._upstream.close()

    def runner(self, *, shutdown_timeout: float) -> web.ServerRunner:
        """What serves the relay: aiohttp's low-level server, every request handed to
        :meth:`handle` (no application, router or middlewares: their work per request is none of
        a relay's). A client that closes its request's stream cancels the handler (the
        2026-07-28 cancel); told to stop, requests in flight get ``shutdown_timeout`` seconds."""
        loop = asyncio.get_running_loop()

        def request(message: Any, payload: Any, protocol: Any, writer: Any, task: Any) -> web.BaseRequest:
            return web.BaseRequest(message, payload, protocol, writer, task, loop, client_max_size=MAX_BODY)

        server = web.Server(self.handle, request_factory=request, handler_cancellation=True, access_log=None)
        return web.ServerRunner(server, shutdown_timeout=shutdown_timeout)

    # --- one request ---------------------------------------------------------------------------

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        if self._guard is not None and (refusal := self._guard.refusal(request.headers)) is not None:
            return self._refuse(request, *refusal)
        session_id = request.headers.get(SESSION_HEADER)
        legacy = self._legacy.get(request.rel_url.raw_path_qs) if session_id is None else None
        session = legacy or self._session(session_id)
        known = self._known
        if (
            known is not None
            and known.facts.server_name is None
            and (not session.began_here or PROTOCOL_HEADER in request.headers)
        ):
            self._ask_upstream()  # before its request is observed: its spans wait for the answer
        body = await request.read() if request.can_read_body else b""
        observed = request.method == "POST" and bool(body)
        keys: list[Key] = []
        if observed and self._as_client:  # the body carries our context: observed before it goes
            body, keys = self._observe_request(session, request, body)
        forward = self._upstream.start(request.method, request.rel_url.raw_path_qs, _relayed_raw(request), body)
        if observed and not self._as_client:  # observed while the upstream reads it: off its latency
            body, keys = self._observe_request(session, request, body)
        exchange = _Exchange(request, session, session_id, keys, on_stream=legacy is not None)
        # Shielded: a client that leaves before the answer begins cancels this handler, and
        # what then becomes of the upstream request is the protocol's to say (_client_left).
        try:
            upstream = await asyncio.shield(forward)
        except asyncio.CancelledError:
            self._client_left(exchange, forward)
            raise
        except UpstreamError as exc:
            session.unreachable(keys)
            self._done(exchange, None)
            return web.Response(status=502, text=f"mcp-otel proxy: the upstream server is unreachable ({exc})\n")
        return await self._answer(exchange, upstream)

    def _refuse(self, request: web.BaseRequest, status: int, text: str) -> web.Response:
        """The proxy's own refusal: nothing relayed, nothing recorded (not the server's answer)."""
        if not self._refused:
            self._refused = True
            sent = {name: request.headers.get(name) for name in ("Host", "Origin") if name in request.headers}
            print(
                f"mcp-otel proxy: refused a request ({status} {text}: {sent}); --allow-host and --allow-origin "
                "allow more (said once)",
                file=sys.stderr,
                flush=True,
            )
        return web.Response(status=status, text=text)

    def _observe_request(self, session: WireSession, request: web.BaseRequest, body: bytes) -> tuple[bytes, list[Key]]:
        """What the client's POST says (as the client: the body with our context in each
        request's ``_meta``); the keys of its requests."""
        try:
            if self._as_client:
                opened: list[Key] = []
                return session.client_line(body, opened), opened
            context = {name: request.headers[name] for name in _TRACE_HEADERS if name in request.headers}
            keys = session.client_requests(body, attributes=_peer(request), context=context)
            return body, keys
        except Exception as exc:  # never in the way of the request
            report_once("could not observe a proxied HTTP request", exc)
            return body, []

    async def _answer(self, exchange: _Exchange, upstream: UpstreamResponse) -> web.StreamResponse:
        request, session = exchange.request, exchange.session
        response = web.StreamResponse(
            status=upstream.status, reason=upstream.reason, headers=_relayed(upstream.headers)
        )
        if upstream.content_length is not None:
            response.content_length = upstream.content_length
        new_id = upstream.headers.get(SESSION_HEADER)
        if exchange.session_id is None and new_id:  # the handshake made a session: it lives on under its id
            self._register(new_id, session)
        answer = _Observed(session, upstream.headers)
        try:
            await response.prepare(request)
            chunks = upstream.chunks()
            if answer.events and request.method == "GET" and exchange.session_id is None:
                head = self._legacy_session(exchange, await _first_event(chunks))
                await response.write(head)
                answer.feed(head)
            async for chunk in chunks:
                if upstream.at_eof():  # the answer's last bytes: relayed with its end, in one write
                    await response.write_eof(chunk)
                    answer.feed(chunk)
                    break
                await response.write(chunk)
                answer.feed(chunk)
        except (ConnectionResetError, asyncio.CancelledError) as exc:
            # The client went away (a write to its closed connection raises aiohttp's
            # ClientConnectionResetError: no fault of the upstream's).
            if exchange.stream is not None:  # the session's end: the upstream sees it too
                self._legacy_ended(exchange.stream, by_client=True)
                self._done(exchange, upstream)
            else:
                self._client_left(exchange, upstream, answer)
            if isinstance(exc, asyncio.CancelledError):
                raise
            return response
        except UpstreamError:
            # The upstream dropped the connection mid-answer: so does the proxy, as it came.
            if exchange.stream is not None:
                self._legacy_ended(exchange.stream, by_client=False)
            else:
                session.unreachable(session.in_flight(exchange.keys))
            if request.transport is not None:
                request.transport.close()
            self._done(exchange, upstream)
            return response
        answer.end()
        if exchange.stream is not None:
            self._legacy_ended(exchange.stream, by_client=False)
        elif upstream.status >= 400 and (unanswered := session.in_flight(exchange.keys)):
            session.rejected(unanswered, upstream.status)
        self._done(exchange, upstream)
        with contextlib.suppress(ConnectionResetError):
            await response.write_eof()
        return response

    def _client_left(self, exchange: _Exchange, upstream: Any, answer: _Observed | None = None) -> None:
        """The client closed its request's stream before the answer (``upstream``: the answer, or
        the request still awaiting it). On 2026-07-28 that is its cancel, which the upstream is
        told by the proxy closing its own stream. Before, a client cancels with
        notifications/cancelled, and a server finishes what it was asked: the proxy reads the
        answer on, unrelayed, for the outcome (at most :data:`MAX_DRAINS` at once)."""
        session = exchange.session
        version = exchange.request.headers.get(PROTOCOL_HEADER) or session.protocol_version or ""
        cancelled = version >= STREAM_CLOSE_CANCELS_FROM
        if cancelled:
            session.stream_closed(session.in_flight(exchange.keys))
        if cancelled or len(self._drains) >= MAX_DRAINS:
            if isinstance(upstream, asyncio.Future):
                upstream.cancel()
                self._done(exchange, None)
            else:
                self._done(exchange, upstream)
            return
        drain = asyncio.ensure_future(self._drain(exchange, upstream, answer))
        self._drains.add(drain)
        drain.add_done_callback(self._drains.discard)

    async def _drain(self, exchange: _Exchange, upstream: Any, answer: _Observed | None) -> None:
        """The rest of an answer whose client left, observed and not relayed."""
        response = None
        try:
            response = await upstream if isinstance(upstream, asyncio.Future) else upstream
            if answer is None:
                answer = _Observed(exchange.session, response.headers)
            async for chunk in response.chunks():
                answer.feed(chunk)
            answer.end()
        except UpstreamError:
            exchange.session.unreachable(exchange.session.in_flight(exchange.keys))
        except Exception as exc:  # never more than logged
            report_once("could not read on an answer whose client left", exc)
        finally:
            self._done(exchange, response)

    def _done(self, exchange: _Exchange, upstream: Any) -> None:
        """The exchange is over: its upstream connection back to the pool (read to its end) or
        closed (which the upstream sees); a DELETE's session ended; an exchange outside any
        session finished."""
        if upstream is not None:
            upstream.release()
        if exchange.on_stream or exchange.stream is not None:
            return  # an HTTP+SSE session's: it ends with its stream
        session, session_id = exchange.session, exchange.session_id
        status = upstream.status if upstream is not None else 0
        if session_id is not None and ((exchange.request.method == "DELETE" and 200 <= status < 300) or status == 404):
            self._end(session_id, recorded=status < 300)  # closed, or the upstream knows no such session
        elif session_id is None and session.session_id is None:
            self._exchanges.discard(session)
            session.finish_exchange()
        elif exchange.keys:
            session.detach(exchange.keys)  # those unanswered: answered on another stream, if at all

    # --- the server's name, asked ---------------------------------------------------------------

    def _ask_upstream(self) -> None:
        """No session here has seen the server named, and a request came whose handshake went
        elsewhere: ask the upstream, beside the relay (one question at a time; one that failed is
        asked again no sooner than :data:`ASK_AGAIN_AFTER` seconds later). Until the answer (at
        most :data:`ASK_TIMEOUT` a question), a span that would end without the server's name
        waits for it (:meth:`KnownServer.hold`): the request's, however fast, the notification's.
        The traffic never waits."""
        if self._asking is not None or asyncio.get_running_loop().time() < self._ask_after:
            return
        assert self._known is not None
        self._known.asking()
        self._asking = asyncio.ensure_future(self._asked())

    async def _asked(self) -> None:
        assert self._known is not None
        try:
            facts, how = await self._discover(), METHOD_SERVER_DISCOVER
            if facts.server_name is None:
                facts, how = await self._initialize(), METHOD_INITIALIZE
            if facts.server_name is None:
                raise UpstreamError("neither server/discover nor initialize named it")
            if self._known.facts.server_name is None:  # else a session saw it named meanwhile: newer
                self._known.learnt(facts)
            print(
                f"mcp-otel proxy: the upstream server is {facts.server_name}"
                + (f" {facts.server_version}" if facts.server_version else "")
                + f" (asked with {how})",
                file=sys.stderr,
                flush=True,
            )
        except Exception as exc:  # fail open: its sessions' spans go unnamed, as before
            self._ask_after = asyncio.get_running_loop().time() + ASK_AGAIN_AFTER
            if not self._ask_failed:
                self._ask_failed = True
                print(
                    f"mcp-otel proxy: could not ask the upstream server its name ({type(exc).__name__}: {exc}); "
                    "spans of sessions whose handshake this proxy did not see go without it (said once)",
                    file=sys.stderr,
                    flush=True,
                )
        finally:
            self._asking = None
            self._known.answered()

    async def _discover(self) -> messages.SessionFacts:
        """``server/discover`` (2026-07-28: stateless, no session made); what its answer names."""
        meta = {
            messages.PROTOCOL_VERSION_META_KEY: _DISCOVER_VERSION,
            "io.modelcontextprotocol/clientInfo": _CLIENT_INFO,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        message = {"jsonrpc": "2.0", "id": _ASK_ID, "method": METHOD_SERVER_DISCOVER, "params": {"_meta": meta}}
        headers = [
            (b"mcp-protocol-version", _DISCOVER_VERSION.encode()),
            (b"mcp-method", METHOD_SERVER_DISCOVER.encode()),
        ]
        return await self._ask(message, headers)

    async def _initialize(self) -> messages.SessionFacts:
        """``initialize``; what its answer names (the session it made is deleted: see :meth:`_ask`)."""
        params = {"protocolVersion": _HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": _CLIENT_INFO}
        return await self._ask({"jsonrpc": "2.0", "id": _ASK_ID, "method": METHOD_INITIALIZE, "params": params}, [])

    async def _ask(self, message: dict[str, Any], headers: list[tuple[bytes, bytes]]) -> messages.SessionFacts:
        """One question POSTed to the upstream's URL; what its answer names. A session the answer
        made (``Mcp-Session-Id``) is deleted at once: none is left behind."""
        headers = [
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            *headers,
        ]
        body = json.dumps(message).encode()
        fetch = self._upstream.fetch("POST", self._target, headers, body, limit=_ASK_MAX_ANSWER)
        response, data = await asyncio.wait_for(fetch, ASK_TIMEOUT)
        facts = _named(response, data) if response.status == 200 else messages.NO_FACTS
        if session_id := response.headers.get(SESSION_HEADER):
            version = facts.protocol_version or _HANDSHAKE_VERSION
            ending = [(b"mcp-session-id", session_id.encode()), (b"mcp-protocol-version", version.encode())]
            await asyncio.wait_for(
                self._upstream.fetch("DELETE", self._target, ending, b"", limit=_ASK_MAX_ANSWER), ASK_TIMEOUT
            )
        return facts

    # --- sessions ------------------------------------------------------------------------------

    def _legacy_session(self, exchange: _Exchange, head: bytes) -> bytes:
        """The first event of a GET stream outside any session (``head``, as it is relayed): an
        ``endpoint`` event makes the exchange an HTTP+SSE session, followed under the endpoint's
        path and query while this stream lasts; an absolute endpoint on the upstream's origin is
        rewritten to the proxy's own. An endpoint elsewhere is not followed."""
        found = _endpoint_event(head)
        if found is None:
            return head
        line, value = found
        request = exchange.request
        try:
            given = URL(value)
            target = URL(self._origin + request.rel_url.raw_path_qs).join(given)
        except ValueError:
            return head
        origin = URL(self._origin)
        if (target.scheme, target.host, target.port) != (origin.scheme, origin.host, origin.port):
            return head
        endpoint = target.raw_path_qs
        if given.is_absolute():
            head = head.replace(line, f"data: {request.scheme}://{request.host}{endpoint}".encode(), 1)
        query = parse_qs(target.query_string)
        session = exchange.session
        session.session_id = next((query[name][0] for name in SESSION_PARAMETERS if name in query), None)
        self._exchanges.discard(session)
        self._legacy[endpoint] = session
        exchange.stream = endpoint
        return head

    def _legacy_ended(self, endpoint: str, *, by_client: bool) -> None:
        """An HTTP+SSE session's stream ended: the client closed it (its requests in flight are
        abandoned), or the upstream ended or dropped it (they failed: their answers cannot come)."""
        session = self._legacy.pop(endpoint, None)
        if session is None:
            return
        if by_client:
            session.end(server_exited_first=False, exit_status=0)
        else:
            session.server_left()

    def _session(self, session_id: str | None) -> WireSession:
        """The session a request belongs to: its ``Mcp-Session-Id``'s (one is made for an id
        not seen before: its requests still get spans, and the upstream's answer, a 404 for an
        expired session, its outcome), or an exchange of its own."""
        if session_id is None:
            exchange = self._new_session()
            self._exchanges.add(exchange)
            return exchange
        session = self._sessions.get(session_id)
        if session is None:  # begun before this proxy saw it: through another replica, or before a restart
            session = self._new_session()
            session.began_here = False
            self._register(session_id, session)
        else:
            self._sessions.move_to_end(session_id)
        return session

    def _register(self, session_id: str, session: WireSession) -> None:
        self._exchanges.discard(session)
        session.session_id = session_id
        self._sessions[session_id] = session
        while len(self._sessions) > MAX_SESSIONS:
            _, oldest = self._sessions.popitem(last=False)
            oldest.untracked()

    def _end(self, session_id: str, *, recorded: bool = True) -> None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            session.end(server_exited_first=False, exit_status=0, recorded=recorded)


async def _first_event(chunks: AsyncIterator[bytes]) -> bytes:
    """The bytes of a stream up to its first event's end (at most about :data:`MAX_FIRST_EVENT`)."""
    head = b""
    async for chunk in chunks:
        head += chunk
        if b"\n\n" in head or b"\r\n\r\n" in head or len(head) > MAX_FIRST_EVENT:
            break
    return head


def _endpoint_event(head: bytes) -> tuple[bytes, str] | None:
    """The ``data`` line of an ``endpoint`` event that is the first in ``head``, and its value."""
    event, data = "message", []
    for line in head.split(b"\n"):
        line = line.removesuffix(b"\r")
        if not line:
            break
        if line.startswith(b"event:"):
            event = line[6:].strip().decode(errors="replace")
        elif line.startswith(b"data:"):
            data.append(line)
    if event != ENDPOINT_EVENT or len(data) != 1:
        return None
    (line,) = data
    return line, _data_value(line).decode(errors="replace").strip()


def _named(response: UpstreamResponse, data: bytes) -> messages.SessionFacts:
    """What the answer to the proxy's own question names of the server (a JSON body, or an
    event of an SSE one)."""
    events: list[bytes] = []
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        Sse(events.append).feed(data + b"\n\n")  # its last event, even unterminated
    else:
        events.append(data)
    for event in events:
        try:
            message = json.loads(event)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("id") == _ASK_ID and isinstance(message.get("result"), dict):
            return messages.handshake_facts(message["result"])
    return messages.NO_FACTS


def _data_value(line: bytes) -> bytes:
    """A ``data:`` line's value (one space after the colon is not part of it)."""
    return line[6:] if line.startswith(b"data: ") else line[5:]


def _relayed(headers: Mapping[str, str]) -> list[tuple[str, str]]:
    """Every header of an answer but the hop-by-hop ones (and those a ``Connection`` header names)."""
    return _end_to_end(list(headers.items()), _HOP_BY_HOP, "connection", ",")


def _relayed_raw(request: web.BaseRequest) -> list[tuple[bytes, bytes]]:
    """The request's headers as they came, but the hop-by-hop ones (and those a ``Connection``
    header names)."""
    return _end_to_end(request.raw_headers, _HOP_BY_HOP_RAW, b"connection", b",")


def _end_to_end(
    headers: Sequence[tuple[AnyStr, AnyStr]], hop_by_hop: frozenset[AnyStr], connection: AnyStr, comma: AnyStr
) -> list[tuple[AnyStr, AnyStr]]:
    named = {name.strip().lower() for key, value in headers if key.lower() == connection for name in value.split(comma)}
    return [(name, value) for name, value in headers if (low := name.lower()) not in hop_by_hop and low not in named]


def _peer(request: web.BaseRequest) -> dict[str, Any]:
    """The client's address and port (SERVER spans)."""
    peer = request.transport.get_extra_info("peername") if request.transport is not None else None
    if not isinstance(peer, tuple) or len(peer) < 2:
        return {}
    return {CLIENT_ADDRESS: str(peer[0]), CLIENT_PORT: int(peer[1])}
