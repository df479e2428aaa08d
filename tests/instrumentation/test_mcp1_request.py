"""The mcp 1.x front end's record of a request a server handles, made by position without the
record's own constructor (every request): the same record the constructor makes, every field."""

from __future__ import annotations

from types import SimpleNamespace

from mcp_otel.instrumentation.frontends.mcp1 import _received
from mcp_otel.model.messages import ServerRequest


def test_a_handled_requests_record_is_the_one_its_constructor_makes() -> None:
    params = SimpleNamespace(name="ok")
    request = SimpleNamespace(method="tools/call", params=params)
    http_request = SimpleNamespace(headers={"mcp-session-id": "s-1"})
    responder = SimpleNamespace(
        request_id=7, request_meta={"traceparent": "t"}, message_metadata=SimpleNamespace(request_context=http_request)
    )
    session = SimpleNamespace(_write_stream="stream")

    received = _received(request, responder, session, "2025-11-25", "bench", "1.30.0")

    expected = ServerRequest(
        method="tools/call",
        params=params,
        request_id=7,
        meta={"traceparent": "t"},
        protocol_version="2025-11-25",
        session_id="s-1",
        http_request=http_request,
        server_name="bench",
        server_version="1.30.0",
        write_stream="stream",
    )
    assert type(received) is ServerRequest
    assert received == expected
    assert received._asdict() == expected._asdict()  # every field, by name
