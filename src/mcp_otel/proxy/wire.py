"""The wire front end: where a JSON-RPC message, from a stdio line or an HTTP body or event,
becomes a span.

A :class:`WireSession` is told each message the client sent and each message the server sent,
and that the client hung up or the server exited; over HTTP (:mod:`mcp_otel.proxy.http`) also
that the HTTP layer refused a request, that the client closed a request's stream, and that the
server could not be reached. It stands in for the side that is not instrumented, as that side's
patches would:

* as the server (the default): each request the client sends gets a SERVER span, each request
  the server sends (``elicitation/create``, ``sampling/createMessage``, ``roots/list``,
  ``ping``) a CLIENT span; the bytes go through unchanged;
* as the client: the mirror image, and each request the client sends carries the CLIENT span's
  context in ``params._meta`` (:meth:`WireSession.client_line` rewrites that line), so that an
  instrumented server's spans are its children.

Outcomes come from :mod:`mcp_otel.model.classify` with the facts the wire gives, and requests are
opened and finished by :mod:`mcp_otel.model.lifecycle`, as the patches' are:

* an answer: its ``result`` (``isError``, a ``resultType`` that is no result yet) or ``error``;
* a ``notifications/cancelled`` for a request in flight: cancelled, by its sender (``caller``
  on the sender's span, ``client`` on the receiver's); an answer after it changes nothing; an
  answer that says the request was cancelled (the SDKs' ``Request cancelled``, ``-32800``) is
  the same fact, when the notification went by another way (another replica);
* a side leaving with requests in flight, as in process: the sender gone, its requests are
  cancelled (``disconnect`` on the receiver's span, ``caller`` on the sender's); the receiver
  gone, they failed (``shutdown`` on its own span, ``connection_closed`` on the sender's); but
  the server dying fails the requests it sent too (a crash, not a choice);
* the person's no to an elicitation (``decline``, ``cancel``) or a sampling request: the
  client's tool call it was asked for, when it is the only one in flight, ends cancelled
  (``input_declined``), as in process;
* over HTTP+SSE (2024-11-05) the answers come on the session's event stream: the client closing
  it abandons its requests in flight (``disconnect``), the server ending or dropping it fails
  them (``connection_closed``);
* over HTTP: a request refused before JSON-RPC (401, 403, 404 for an expired session, 5xx)
  failed with ``error.type`` the HTTP status (on a SERVER span a 4xx is the caller's fault:
  status UNSET, as HTTP's conventions say); the client closing a 2026-07-28 request's stream
  before its answer is its cancel (``disconnect`` on the receiver's span, ``caller`` on the
  sender's, as in process); a server that cannot be reached, or drops the connection mid-answer,
  failed it (``connection_closed``);
* never an outcome not seen: over HTTP an answer can come on a stream the proxy does not hold
  (a POST answered 202 with the answer on the session's event stream, a POST stream that ended
  before its answer, a server's request, answered by a POST that may reach another replica). A
  request still waiting for such an answer when its exchange or session ends here is finished
  unobserved: no span, no point, a count by reason (:meth:`Lifecycle.unobserved`), not a guess.

Messages are decoded only as far as an outcome needs (:mod:`mcp_otel.proxy.jsonrpc`).

Nothing here ever raises into the relay: a line that is not JSON-RPC is skipped (and relayed
as it is), and every failure of our own is logged once.

Over 400 lines: :class:`WireSession` is one state machine per relayed session (the requests in
flight each way, the server's name as it is learnt, the session's end), and every step of it reads
and changes that one state; how a line is decoded is :mod:`mcp_otel.proxy.jsonrpc`'s.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import msgspec
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanKind, Tracer

from mcp_otel.model import messages
from mcp_otel.model.attributes import (
    AttributeCache,
    Attributes,
    Request,
    round_attributes,
    server_identity,
    session_attributes,
    traced_notification,
)
from mcp_otel.model.classify import (
    RpcError,
    classify_client_error,
    classify_client_result,
    classify_http_rejection,
    classify_server_call,
    declined_in,
    elicitation_action,
    is_declined_answer,
    unfinished,
)
from mcp_otel.model.config import Settings
from mcp_otel.model.lifecycle import Answered, Call, Classify, Lifecycle, unnamed_negotiation
from mcp_otel.model.messages import SessionFacts
from mcp_otel.model.metrics import CallMetrics
from mcp_otel.model.outcome import CallOutcome, Verdict, bounded
from mcp_otel.model.propagation import MetaPropagator
from mcp_otel.model.safety import report_once
from mcp_otel.proxy.jsonrpc import Facts, Key, Message, decode_line, request_key, rpc_error
from mcp_otel.semconv import (
    ERROR_TYPE,
    HTTP_RESPONSE_STATUS_CODE,
    JSONRPC_REQUEST_ID,
    MCP_ELICITATION_ACTION,
    MCP_PROTOCOL_VERSION,
    MCP_SERVER_NAME,
    METHOD_CANCELLED,
    METHOD_ELICITATION_CREATE,
    METHOD_INITIALIZE,
    METHOD_SERVER_DISCOVER,
    METHOD_TOOLS_CALL,
    NETWORK_TRANSPORT,
    TRANSPORT_PIPE,
    CancelReason,
    ErrorType,
    UnobservedReason,
)

# Lines longer than this are relayed without being looked at (their request keeps its span,
# ended by what comes next: the session's end at the latest).
MAX_OBSERVED_LINE = 64 * 1024 * 1024
# Requests in flight tracked per direction: a peer that never answers cannot grow the proxy
# without bound (the ones past it are relayed, with no span).
MAX_IN_FLIGHT = 10_000


class _WireCall(Call):
    """One request in flight on the wire."""

    input_declined = False
    detached = False  # its answer can only come on a stream this proxy may not hold


class KnownServer:
    """The server a proxy fronts, as it was last named (its name and version, no protocol): a
    proxy fronts one upstream, so this names every session that learnt no name of its own (its
    handshake went through another replica, or it has none, on 2026-07-28). Shared by the
    sessions of one relay; a newer name replaces it."""

    def __init__(self) -> None:
        self.facts = messages.NO_FACTS
        # While the relay asks the upstream its name: the ends of spans that would not name it.
        self._held: list[Callable[[], None]] | None = None

    def learnt(self, facts: SessionFacts) -> None:
        if facts.server_name is not None and (facts.server_name, facts.server_version) != self.facts[1:]:
            self.facts = SessionFacts(None, facts.server_name, facts.server_version)

    def asking(self) -> None:
        """The relay asks the upstream the server's name: a span that would end without it
        waits for the answer (:meth:`hold`), however fast its own request was."""
        if self._held is None:
            self._held = []

    def hold(self, finish: Callable[[], None]) -> bool:
        """Whether ``finish`` (a span's end) waits for :meth:`answered`: only while asking."""
        if self._held is None or len(self._held) >= MAX_IN_FLIGHT:
            return False
        self._held.append(finish)
        return True

    def answered(self) -> None:
        """The question is over (answered, failed, or the relay stopping): the spans that waited
        end, named if the name was learnt, at the time each would have."""
        held, self._held = self._held, None
        for finish in held or ():
            try:
                finish()
            except Exception as exc:  # the next must end all the same
                report_once("could not end a span that waited for the server's name", exc)


class WireSession:
    """One session between a client and a server: a stdio session, or an HTTP one (an
    ``Mcp-Session-Id``'s, or a single exchange of a session-less server)."""

    def __init__(
        self,
        tracer: Tracer,
        metrics: CallMetrics,
        settings: Settings,
        *,
        as_client: bool = False,
        connection: Mapping[str, Any] | None = None,
        streams: bool = False,
        attribute_cache: AttributeCache | None = None,
        known_server: KnownServer | None = None,
    ) -> None:
        """``connection``: the attributes every span of the session has (its network transport,
        the server's address as the client sees it); by default a stdio pipe's. ``streams``: the
        session's messages travel on several streams, not all of which this proxy may hold
        (HTTP): a server's request is answered on a POST of its own. ``attribute_cache``: where
        its requests' attributes are kept, shared by the sessions of one relay (the same
        connection and settings; a 2026-07-28 exchange is a session of its own); by default
        its own. ``known_server``: the server as the relay last saw it named, shared by its
        sessions (the name of a session that learns none itself; what one learns, it learns too)."""
        self._as_client = as_client
        self._known = known_server
        self._streams = streams
        self._connection = dict(connection or {NETWORK_TRANSPORT: TRANSPORT_PIPE})
        self.session_id: str | None = None  # the HTTP session's Mcp-Session-Id, once known
        self.began_here = True  # False: an HTTP session first seen mid-way (its start went elsewhere)
        self._metrics = metrics
        self._lifecycle = Lifecycle(tracer, metrics)
        self._settings = settings
        self._propagator = MetaPropagator()
        self._started = time.perf_counter()
        # Requests in flight by their id, as each side sent them.
        self._from_client: dict[Key, _WireCall] = {}
        self._from_server: dict[Key, _WireCall] = {}
        # What the server says it is (its handshake's answer), and the protocol it speaks.
        self._facts = messages.NO_FACTS
        self._ended = False
        self._attributes = AttributeCache() if attribute_cache is None else attribute_cache
        # A server/discover probe the server refused, held (answered, not yet ended) until the
        # handshake that follows names the server.
        self._negotiated: Answered | None = None

    @property
    def as_client(self) -> bool:
        return self._as_client

    @property
    def protocol_version(self) -> str | None:
        """The protocol the handshake agreed on (``None``: none yet, or none on 2026-07-28)."""
        return self._facts.protocol_version

    # --- what the relay tells ------------------------------------------------------------------

    def from_client(self, line: bytes) -> None:
        self._observe(line, from_client=True)

    def client_requests(
        self, body: bytes, *, attributes: Mapping[str, Any] | None = None, context: Mapping[str, str] | None = None
    ) -> list[Key]:
        """A message (or batch) the client sent over HTTP; the keys of the requests it made.
        ``attributes``: what the transport tells of each of them (the client's address);
        ``context``: trace context that came beside it (HTTP headers), read when the request's
        ``_meta`` carries none."""
        return self._observe(body, from_client=True, attributes=attributes, context=context)

    def client_line(self, line: bytes, opened: list[Key] | None = None) -> bytes:
        """As the client: a line the client sent, as it goes to the server (a request with our
        CLIENT span's context in ``params._meta``; anything else as it came). ``opened``: the
        keys of the requests it made are added to it."""
        try:
            message = json.loads(line) if len(line) <= MAX_OBSERVED_LINE and line.strip() else None
        except ValueError:
            message = None
        key = request_key(message.get("id")) if isinstance(message, dict) else None
        if not (isinstance(message, dict) and isinstance(message.get("method"), str) and key is not None):
            keys = self._observe(line, from_client=True)
            if opened is not None:
                opened.extend(keys)
            return line
        try:
            call = self._request(key, message["method"], message.get("params"), from_client=True)
            if call is not None and opened is not None:
                opened.append(key)
            carrier: dict[str, str] = {}
            if call is not None:
                self._propagator.inject(carrier, call.span)
            params = message.get("params")
            if carrier and (params is None or isinstance(params, dict)):
                params = message["params"] = dict(params or {})
                meta = params.get("_meta")
                params["_meta"] = {**(meta if isinstance(meta, dict) else {}), **carrier}
                ending = line[len(line.rstrip(b"\r")) :]
                return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + ending
        except Exception as exc:
            report_once("could not add the trace context to a proxied request", exc)
        return line

    def from_server(self, line: bytes) -> None:
        self._observe(line, from_client=False)

    def client_closed(self) -> None:
        """The client hung up: its requests were abandoned; the server's to it went unanswered."""
        if self._as_client:
            self._end_all(_CANCELLED_BY_CALLER, _SHUT_DOWN)
        else:
            self._end_all(_DISCONNECTED, _CONNECTION_CLOSED)

    def server_exited(self) -> None:
        """The server process exited: the requests it was handling, and its own, failed with it."""
        if self._as_client:
            self._end_all(_CONNECTION_CLOSED, _DISCONNECTED)
        else:
            self._end_all(_SHUT_DOWN, _SHUT_DOWN)

    def server_left(self) -> None:
        """Over HTTP+SSE: the server ended or dropped the stream its answers come on (the session's
        end): the client's requests in flight failed with it (``connection_closed``, as the client
        saw); its own are answered on POSTs this proxy may not hold (unobserved)."""
        self._finish_client_requests(list(self._from_client), _CONNECTION_CLOSED)
        self.end(server_exited_first=True, exit_status=0)

    def untracked(self) -> None:
        """The proxy stops following the session (it has not ended): what is in flight is
        unobserved, and it has no duration point."""
        if not self._ended:
            self._ended = True
            self._end_unobserved(UnobservedReason.SESSION_UNTRACKED)

    def end(self, *, server_exited_first: bool, exit_status: int, recorded: bool = True) -> None:
        """The session is over: what is still in flight ended with whoever left first; its
        duration is recorded once, as the side we stand in for saw it (as in process: a server
        that exited first with a failure status ended it with ``shutdown``; for a client, a server
        that went away under it is ``connection_closed``). ``recorded``: false for a session the
        server did not know (an HTTP session id it answered 404 to). A session that did not
        begin here has no duration point either."""
        if self._ended:
            return
        self._ended = True
        if server_exited_first:
            self.server_exited()
        else:
            self.client_closed()
        if not recorded or not self.began_here:  # a duration from its middle is none
            return
        try:
            attributes: dict[str, Any] = {}  # the conventions' session attributes, and the server's name
            if name := self._settings.server_name or self._server_facts().server_name:
                attributes[MCP_SERVER_NAME] = bounded(name, self._settings.max_name_length)
            if self._facts.protocol_version:
                attributes[MCP_PROTOCOL_VERSION] = self._facts.protocol_version
            if server_exited_first and self._as_client:
                attributes[ERROR_TYPE] = ErrorType.CONNECTION_CLOSED
            elif server_exited_first and exit_status != 0:
                attributes[ERROR_TYPE] = ErrorType.SHUTDOWN
            kind = SpanKind.CLIENT if self._as_client else SpanKind.SERVER
            self._metrics.record_session(kind, time.perf_counter() - self._started, attributes)
        except Exception as exc:
            report_once("could not record the proxied session", exc)

    # --- what the HTTP relay tells besides -----------------------------------------------------

    def in_flight(self, keys: list[Key]) -> list[Key]:
        """Those of the client's requests ``keys`` that are still unanswered."""
        return [key for key in keys if key in self._from_client]

    def rejected(self, keys: list[Key], status: int) -> None:
        """The HTTP layer refused the client's requests ``keys`` with ``status`` (no JSON-RPC
        answer came)."""
        outcome = partial(classify_http_rejection, status, receiver=self._receives(True))
        self._finish_client_requests(keys, outcome, {HTTP_RESPONSE_STATUS_CODE: status})

    def stream_closed(self, keys: list[Key]) -> None:
        """The client closed the stream of its requests ``keys`` before their answers: on
        2026-07-28, that is its cancel."""
        self._finish_client_requests(keys, _DISCONNECTED if self._receives(True) else _CANCELLED_BY_CALLER)

    def unreachable(self, keys: list[Key]) -> None:
        """The server could not be reached for the client's requests ``keys``, or dropped the
        connection before answering them."""
        self._finish_client_requests(keys, _CONNECTION_CLOSED)

    def detach(self, keys: list[Key]) -> None:
        """The stream of the client's requests ``keys`` ended: those still unanswered can now only
        be answered on another stream (the session's event stream, a resumed one)."""
        for key in keys:
            if (call := self._from_client.get(key)) is not None:
                call.detached = True

    def finish_exchange(self) -> None:
        """An HTTP exchange outside any session is over (its answer relayed): a request it left
        unanswered is answered elsewhere, if at all (a 202); it is no session of its own to record."""
        self._ended = True
        self._end_negotiated()
        self._end_unobserved(UnobservedReason.ANSWER_ELSEWHERE)

    def _finish_client_requests(
        self, keys: list[Key], outcome: Classify, late: Mapping[str, Any] | None = None
    ) -> None:
        for key in keys:
            call = self._from_client.pop(key, None)
            if call is not None:
                self._finish(call, outcome, late)

    # --- messages -----------------------------------------------------------------------------

    def _observe(
        self,
        line: bytes,
        *,
        from_client: bool,
        attributes: Mapping[str, Any] | None = None,
        context: Mapping[str, str] | None = None,
    ) -> list[Key]:
        opened: list[Key] = []
        if len(line) > MAX_OBSERVED_LINE or not line.strip():
            return opened
        try:
            for message in decode_line(line):  # not JSON-RPC: relayed, not ours to judge
                if (key := self._message(message, from_client, attributes, context)) is not None:
                    opened.append(key)
        except Exception as exc:
            report_once("could not observe a proxied message", exc)
        return opened

    def _message(
        self,
        message: Message,
        from_client: bool,
        attributes: Mapping[str, Any] | None = None,
        context: Mapping[str, str] | None = None,
    ) -> Key | None:
        """Observe one message; the key of a request that got a span."""
        method = message.method
        key = request_key(message.id)
        if isinstance(method, str):
            if key is not None:
                call = self._request(key, method, message.params, from_client, attributes, context)
                return key if call is not None else None
            self._notified(method, message.params, from_client, context)  # while a cancelled call is in flight
            if method == METHOD_CANCELLED:
                self._cancelled(message.params, from_client)
        elif key is not None and (message.result is not msgspec.UNSET or message.error is not msgspec.UNSET):
            self._answer(key, message, from_client)
        return None

    def _receives(self, from_client: bool) -> bool:
        """Whether the side we stand in for receives a request that ``from_client`` tells the
        sender of (its span is then a SERVER span)."""
        return from_client != self._as_client

    def _request(
        self,
        key: Key,
        method: str,
        params: Any,
        from_client: bool,
        extra: Mapping[str, Any] | None = None,
        context: Mapping[str, str] | None = None,
    ) -> _WireCall | None:
        calls = self._from_client if from_client else self._from_server
        if len(calls) >= MAX_IN_FLIGHT and key not in calls:
            report_once(f"more than {MAX_IN_FLIGHT} requests in flight one way: later ones get no span")
            return None
        params = params if isinstance(params, dict) else None
        request = Request.of(method, params, self._settings)
        # A 2026-07-28 request names its protocol itself.
        version = messages.envelope_protocol_version(params) if params and "_meta" in params else None
        shared, metric_attributes = self._request_attributes(request, version)
        attributes = {**shared, **extra} if extra else {**shared}
        attributes[JSONRPC_REQUEST_ID] = bounded(str(key[1]), self._settings.max_name_length)
        input_responses = params.get("inputResponses") if params else None
        if input_responses is not None:  # a round of a multi-round call (2026-07-28)
            attributes.update(round_attributes(input_responses))
        receives = self._receives(from_client)
        # The sender's context is the parent; but the request of a server we stand in for is a
        # child of our span of the client's request it is handling (its own _meta holds at
        # most what it was given).
        parent = self._handled() if not (receives or from_client) else None
        links: list[Link] = []
        if parent is None:
            parent, links = self._parent(params, context)
        previous = calls.get(key)
        if previous is not None:  # its id again while in flight: its sender gave up on the first
            self._finish(previous, _ABANDONED[receives])
        kind = SpanKind.SERVER if receives else SpanKind.CLIENT
        # Never the proxy's own context as the parent.
        call = self._lifecycle.open(
            _WireCall, kind, request, attributes, metric_attributes, parent=parent or Context(), links=links
        )
        call.input_declined = declined_in(input_responses)  # a round: the person's no to the last one's input
        calls[key] = call
        return call

    def _request_attributes(self, request: Request, version: str | None) -> Attributes:
        """What every request alike in this session has, span and metric attributes (kept:
        built once per request and what the session knows, shared, read-only)."""
        facts = self._server_facts()
        key = (request, facts, self.session_id, version)
        return self._attributes.get(key) or self._attributes.put(key, self._new_attributes(request, version, facts))

    def _server_facts(self) -> SessionFacts:
        """What the session knows of its server; with no name of its own, the relay's (one upstream)."""
        facts, known = self._facts, self._known
        if facts.server_name is not None or known is None or known.facts.server_name is None:
            return facts
        return SessionFacts(facts.protocol_version, known.facts.server_name, known.facts.server_version)

    def _new_attributes(self, request: Request, version: str | None, facts: SessionFacts) -> Attributes:
        attributes = session_attributes(request, self._settings, facts, self.session_id)
        if version and MCP_PROTOCOL_VERSION not in attributes:
            attributes[MCP_PROTOCOL_VERSION] = version
        attributes.update(self._connection)
        return attributes, self._metrics.attributes(attributes)

    def _handled(self) -> Context | None:
        """The parent of a request the server sends: the client's request it is handling, when
        only one is in flight (a server's elicitation during a tool call is a child of its span,
        as in process)."""
        if len(self._from_client) == 1:
            (call,) = self._from_client.values()
            return trace.set_span_in_context(call.span, Context())
        return None

    def _parent(self, params: Any, context: Mapping[str, str] | None = None) -> tuple[Context | None, list[Link]]:
        """The sender's context in ``params._meta``, else in ``context`` (HTTP headers) (a link
        only, when remote context is not trusted, and the span starts a trace of its own);
        ``None``: none came."""
        meta = params.get("_meta") if isinstance(params, dict) else None
        found = self._propagator.remote(meta) if meta else None  # most requests carry no _meta
        if found is None and context:
            found = self._propagator.remote(context)
        if found is None:
            return None, []
        remote, span_context = found
        if not self._settings.trust_remote_context:
            return Context(), [Link(span_context)]
        return remote, []

    def _notified(self, method: str, params: Any, from_client: bool, context: Mapping[str, str] | None = None) -> None:
        """A notification: its span, as the side we stand in for would make it (a SERVER span
        where it receives it, a CLIENT span where it sends it), ended at once. Its parent: the
        sender's context in ``_meta`` (received), else the request it concerns (a cancel names its
        sender's request, a progress report the other side's), else none (never the proxy's)."""
        if not traced_notification(method, self._settings):
            return
        params = params if isinstance(params, dict) else None
        request = Request.of(method, params, self._settings)
        receives = self._receives(from_client)
        parent, links = self._parent(params, context) if receives else (None, [])
        if parent is None and not links:
            key = request_key(messages.concerned_request_id(method, params))
            calls = self._from_client if (method == METHOD_CANCELLED) == from_client else self._from_server
            call = None if key is None else calls.get(key)
            if call is not None:
                parent = trace.set_span_in_context(call.span, Context())
        version = messages.envelope_protocol_version(params) if params and "_meta" in params else None
        attributes, _ = self._request_attributes(request, version)
        kind = SpanKind.SERVER if receives else SpanKind.CLIENT
        span = self._lifecycle.notification(kind, request, attributes, parent=parent or Context(), links=links)
        if (
            MCP_SERVER_NAME in attributes
            or self._known is None
            or not self._held(partial(self._end_named, span, request, time.time_ns()))
        ):
            span.end()

    def _cancelled(self, params: Any, from_client: bool) -> None:
        """A ``notifications/cancelled`` from a request's sender (the client's for its own
        request, the server's for its own): the receiver stops, and answers nothing."""
        key = request_key(params.get("requestId")) if isinstance(params, dict) else None
        if key is None:
            return
        call = (self._from_client if from_client else self._from_server).pop(key, None)
        if call is not None:
            self._finish(call, _ABANDONED[self._receives(from_client)])

    def _answer(self, key: Key, message: Message, from_client: bool) -> None:
        """An answer: from the server, to the client's request; from the client, to the server's."""
        call = (self._from_server if from_client else self._from_client).pop(key, None)
        if call is None:  # cancelled before, or not a request we saw
            return
        result: Any = message.result
        if isinstance(result, Facts):
            result = result.as_result()
        elif result is msgspec.UNSET:  # an error answer
            result = None
        error = rpc_error(message.error)
        late: dict[str, Any] = {}
        if not from_client and isinstance(result, dict) and self._names_server(call.method, result):
            late = self._learn_server(call, result)
        elif self._learnt_since(call):
            late = self._named_late(call)
        declined = from_client and is_declined_answer(call.method, result, error)  # to the server's input request
        if declined:
            self._note_declined()
        if call.method == METHOD_ELICITATION_CREATE and (action := elicitation_action(result)):
            late[MCP_ELICITATION_ACTION] = action
        receives = self._receives(not from_client)  # the request came from the other side
        facts = (result, error, declined, call.input_declined, self._settings.capture_content, call.method)
        classify = _receiver_outcome if receives else _sender_outcome
        if unnamed_negotiation(call, error):  # named by the handshake that follows (or the session's end)
            self._end_negotiated()
            self._negotiated = Answered(call, classify, late, facts)
            return
        self._finish(call, classify, late, facts)

    def _finish(
        self, call: _WireCall, classify: Classify, late: Mapping[str, Any] | None = None, facts: tuple[Any, ...] = ()
    ) -> None:
        """Finish ``call`` (:meth:`Lifecycle.finish`); one that would name no server waits while
        the relay asks the upstream (:meth:`KnownServer.hold`), then ends named, as it would have."""
        if (
            self._known is not None
            and self._facts.server_name is None
            and MCP_SERVER_NAME not in call.metric_attributes
            and not (late and MCP_SERVER_NAME in late)
        ):
            answered = Answered(call, classify, dict(late or {}), facts)
            if self._held(partial(self._finish_named, answered)):
                return
        self._lifecycle.finish(call, classify, late, facts)

    def _held(self, finish: Callable[[], None]) -> bool:
        """Whether ``finish`` waits for the server's name (this session knows none; the relay is
        asking the upstream)."""
        return self._known is not None and self._facts.server_name is None and self._known.hold(finish)

    def _finish_named(self, answered: Answered) -> None:
        """A call that waited for the server's name: named, if it was learnt (by the relay, or
        by its session meanwhile)."""
        if self._server_facts().server_name is not None:
            answered.late.update(self._named_late(answered.call))
        answered.finish(self._lifecycle)

    def _end_named(self, span: Span, request: Request, at: int) -> None:
        """A notification's span that waited for the server's name: named, if it was learnt."""
        if self._server_facts().server_name is not None:
            span.set_attributes(server_identity(session_attributes(request, self._settings, self._server_facts())))
        span.end(end_time=at)

    def _end_negotiated(self, learnt: Mapping[str, Any] | None = None) -> None:
        """The refused probe ends, with the server's identity the handshake that followed learnt
        (``learnt``), if any."""
        held, self._negotiated = self._negotiated, None
        if held is not None:
            held.finish(self._lifecycle, learnt)

    def _names_server(self, method: str, result: dict[str, Any]) -> bool:
        """Whether an answer names the server: the handshake's (``initialize``,
        ``server/discover``), or, while the server is not yet known (a session whose handshake
        went through another replica, or a 2026-07-28 one that has none), any result whose
        ``_meta`` carries its identity."""
        if method in _HANDSHAKES:
            return True
        meta = result.get("_meta") if self._facts.server_name is None else None
        return isinstance(meta, dict) and messages.SERVER_INFO_META_KEY in meta

    def _learn_server(self, call: _WireCall, result: dict[str, Any]) -> dict[str, Any]:
        """The answer names the server (the handshake's, the protocol too): every later span says
        it, and so does this request's own span."""
        self._facts = self._facts.updated_by(messages.handshake_facts(result))
        if self._known is not None:
            self._known.learnt(self._facts)
        learnt = session_attributes(Request(call.method), self._settings, self._facts)
        self._end_negotiated(learnt)
        if call.method not in _HANDSHAKES:  # its own attributes stand
            learnt = server_identity(learnt)
        self._lifecycle.relearn(call, learnt)
        return learnt

    def _learnt_since(self, call: Call) -> bool:
        """Whether the relay learnt the server's name since ``call`` opened without it, its session
        knowing none itself (a request before its own handshake still names none)."""
        known = self._known
        return (
            known is not None
            and known.facts.server_name is not None
            and self._facts.server_name is None
            and MCP_SERVER_NAME not in call.metric_attributes
        )

    def _named_late(self, call: Call) -> dict[str, Any]:
        """The server's name and version, on a span (and its point) that opened without them."""
        learnt = server_identity(session_attributes(Request(call.method), self._settings, self._server_facts()))
        self._lifecycle.relearn(call, learnt)
        return learnt

    def _note_declined(self) -> None:
        """The person declined the server's input request: the client's tool call it was asked
        for (when only one is in flight) may end in a cancel, not a failure."""
        tool_calls = [call for call in self._from_client.values() if call.method == METHOD_TOOLS_CALL]
        if len(tool_calls) == 1:
            tool_calls[0].input_declined = True

    # --- ending -------------------------------------------------------------------------------

    def _end_all(self, client_requests: Classify, server_requests: Classify) -> None:
        """What is in flight when a side left ends as that says, but a request whose answer could
        only come on a stream not held here (its stream ended unanswered; a server's, over HTTP)."""
        self._end_negotiated()
        elsewhere = UnobservedReason.ANSWER_ELSEWHERE
        for calls, outcome in ((self._from_client, client_requests), (self._from_server, server_requests)):
            streams = self._streams and calls is self._from_server
            while calls:
                _, call = calls.popitem()
                if streams or call.detached:
                    self._lifecycle.unobserved(call, elsewhere)
                else:
                    self._finish(call, outcome)

    def _end_unobserved(self, reason: UnobservedReason) -> None:
        for calls in (self._from_client, self._from_server):
            while calls:
                self._lifecycle.unobserved(calls.popitem()[1], reason)


# The requests whose answer is the server's handshake: it names the server and the protocol.
_HANDSHAKES = (METHOD_INITIALIZE, METHOD_SERVER_DISCOVER)
# A request its sender cancelled (or gave up on by sending its id again), by whose span it is:
# the receiver's (``True``), the sender's.
_ABANDONED: dict[bool, Classify] = {
    True: partial(classify_server_call, peer_cancelled=True),
    False: partial(CallOutcome.cancelled, CancelReason.CALLER),
}
# Requests in flight when a side left (see the module's docstring).
_DISCONNECTED: Classify = partial(classify_server_call, is_cancellation=True, transport_closed=True)
_SHUT_DOWN: Classify = partial(classify_server_call, is_cancellation=True, transport_closed=False)
_CONNECTION_CLOSED: Classify = partial(CallOutcome.failed, ErrorType.CONNECTION_CLOSED)
_CANCELLED_BY_CALLER = _ABANDONED[False]


def _receiver_outcome(
    result: Any, error: RpcError | None, declined: bool, input_declined: bool, keep_message: bool, method: str
) -> Verdict:
    if error is None and not declined and (result_type := unfinished(result)) is not None:
        return result_type  # an input round or a task: no outcome yet
    return classify_server_call(
        answer=result,
        rpc_error=error,
        peer_cancelled=error is not None and error.is_cancel_reply(),
        keep_message=keep_message,
        answer_declined=declined,
        input_declined=input_declined,
        method=method,
    )


def _sender_outcome(
    result: Any, error: RpcError | None, declined: bool, input_declined: bool, keep_message: bool, method: str
) -> Verdict:
    if error is not None:
        return classify_client_error(
            error,
            cancel_sent=error.is_cancel_reply(),
            keep_message=keep_message,
            answer_declined=declined,
            input_declined=input_declined,
            method=method,
        )
    if (result_type := unfinished(result)) is not None:
        return result_type
    return classify_client_result(result, answer_declined=declined, input_declined=input_declined)
