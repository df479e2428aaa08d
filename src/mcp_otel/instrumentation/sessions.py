"""Session durations: ``mcp.client.session.duration`` and ``mcp.server.session.duration``.

A session lasts from the moment its session object (or connection) is open to the moment it is
closed; which SDK objects those are is each front end's to know:

* clients, both majors: ``ClientSession.__aenter__`` to ``__aexit__`` (mcp 1.x: ``BaseSession``'s);
* mcp 1.x servers: ``ServerSession`` (``BaseSession.__aenter__`` to ``__aexit__``);
* mcp 2.x servers: a handshake-era connection, from ``Connection.for_loop`` to the runner's
  ``aclose_shielded`` of it (2026-07-28 connections are stateless: no session).

How a session ended: a client whose server went away under it (the transport closed before the
client closed the session) ended with ``error.type = connection_closed``; a session left by an
exception other than a cancellation ended with the exception's class name. Closing the session,
and a cancellation (the caller's choice), are clean ends. For a server, a client that closes
the connection ends the session normally: that is how a stdio client ends it.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Any

from opentelemetry.trace import SpanKind

from mcp_otel.model import messages
from mcp_otel.model.config import Settings
from mcp_otel.model.messages import SessionFacts
from mcp_otel.model.metrics import CallMetrics
from mcp_otel.model.outcome import bounded
from mcp_otel.model.safety import report_once
from mcp_otel.semconv import ERROR_TYPE, MCP_PROTOCOL_VERSION, MCP_SERVER_NAME, ErrorType


class Sessions:
    """Each session's one duration point, fed by the front ends' session hooks."""

    def __init__(
        self,
        metrics: CallMetrics,
        settings: Settings,
        client_closed: Callable[[Any], None] = lambda session: None,
    ) -> None:
        self._metrics = metrics
        self._settings = settings
        # A client session closed: what the client side keeps per session ends with it.
        self._client_closed = client_closed
        # Open sessions (session objects, or mcp 2.x connections) -> their start.
        self._started: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()

    async def enter(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The wrapper of a session's ``__aenter__``: it starts once open."""
        result = await wrapped(*args, **kwargs)
        self.start(instance)
        return result

    async def exit(
        self,
        wrapped: Any,
        session: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        client: bool,
        server_went_away: bool,
        server: Callable[[], tuple[SessionFacts, Any]] | None = None,
    ) -> Any:
        """A session's ``__aexit__`` (its arguments ``args``), called by a front end's wrapper
        that read, before closing, whether its server went away (once it is closed its
        transport closes too, which would look like the peer's EOF); ``server``: a server
        session's facts and write stream."""
        ending = self._ending(args, server_went_away=server_went_away)
        try:
            return await wrapped(*args, **kwargs)
        finally:
            self.end(session, ending, client=client, server=server)

    # --- bookkeeping --------------------------------------------------------------------------

    def start(self, session: Any) -> None:
        try:
            self._started[session] = time.perf_counter()
        except Exception as exc:
            report_once("could not note a session's start", exc)

    @staticmethod
    def _ending(exit_args: tuple[Any, ...], *, server_went_away: bool) -> str | None:
        """The session's ``error.type``, read as it is being closed (``None``: a clean end)."""
        try:
            error = exit_args[1] if len(exit_args) > 1 else None
            if isinstance(error, BaseException):  # a cancel is the caller's choice: a clean end
                return None if messages.is_cancellation(error) else type(error).__qualname__
            return ErrorType.CONNECTION_CLOSED if server_went_away else None
        except Exception as exc:
            report_once("could not tell how a session ended", exc)
            return None

    def end(
        self,
        session: Any,
        error_type: str | None,
        *,
        client: bool,
        server: Callable[[], tuple[SessionFacts, Any]] | None = None,
    ) -> None:
        """``session`` ended (``error_type``: how, ``None`` for a clean end); a server session's
        facts and write stream come from ``server`` (``None``: a client session's own)."""
        if client:
            try:
                self._client_closed(session)
            except Exception as exc:
                report_once("could not close a session's calls", exc)
        try:
            started = self._started.pop(session, None)
            if started is None:
                return
            attributes = self._client_facts(session) if server is None else self._server_facts(*server())
            if error_type is not None:
                attributes[ERROR_TYPE] = error_type
            kind = SpanKind.CLIENT if client else SpanKind.SERVER
            self._metrics.record_session(kind, time.perf_counter() - started, attributes)
        except Exception as exc:
            report_once("could not record a session's duration", exc)

    def _client_facts(self, session: Any) -> dict[str, Any]:
        try:
            facts = messages.session_facts(session)
        except Exception as exc:  # the point is still useful without them
            report_once("could not read the client session's facts", exc)
            facts = messages.SessionFacts()
        return self._facts(facts.server_name, facts.protocol_version)

    def _server_facts(self, facts: SessionFacts, write_stream: Any) -> dict[str, Any]:
        return self._facts(facts.server_name, facts.protocol_version)

    def _facts(self, server_name: str | None, protocol: str | None) -> dict[str, Any]:
        """A session point's attributes: those the conventions define for session durations that
        a session knows (its protocol version), and the server's name (mcp-otel's)."""
        limit = self._settings.max_name_length
        values = {MCP_SERVER_NAME: self._settings.server_name or server_name, MCP_PROTOCOL_VERSION: protocol}
        return self._metrics.attributes({key: bounded(value, limit) for key, value in values.items() if value})
