"""A test server of the installed major over the HTTP+SSE transport (protocol 2024-11-05) on
127.0.0.1: a GET on ``/sse`` opens the session's event stream, whose first event names the
endpoint (``/messages/?session_id=...``) that the client POSTs to.

Usage: python -m tests.servers.sse_server PORT highlevel|person [absolute]
(``highlevel``: :mod:`tests.servers.highlevel_server`'s tools; ``person``:
:mod:`tests.servers.person_server`'s; ``absolute``: the endpoint is named by an absolute URL, as
some servers do.)
"""

from __future__ import annotations

import sys
from typing import Any

import uvicorn

from tests.servers import highlevel_server, person_server
from tests.servers.span_file import install_span_file


def absolute_endpoint(app: Any, origin: bytes) -> Any:
    """``app`` with its ``endpoint`` event naming the endpoint on ``origin``."""

    async def rewritten(scope: Any, receive: Any, send: Any) -> None:
        async def sending(message: Any) -> None:
            body = message.get("body", b"")
            if message["type"] == "http.response.body" and body.startswith(b"event: endpoint"):
                message = {**message, "body": body.replace(b"data: /", b"data: " + origin + b"/", 1)}
            await send(message)

        await app(scope, receive, sending)

    return rewritten


if __name__ == "__main__":
    install_span_file()
    port = int(sys.argv[1])
    server = highlevel_server.build_server() if sys.argv[2] == "highlevel" else person_server.build()
    app = server.sse_app()
    if sys.argv[3:] == ["absolute"]:
        app = absolute_endpoint(app, f"http://127.0.0.1:{port}".encode())
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
