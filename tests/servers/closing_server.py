"""An HTTP upstream that closes a kept-alive connection under the next request, on purpose: the
race of a server ending a keep-alive connection just as its client sends on it, made to happen
every time.

Usage: python -m tests.servers.closing_server PORT MODE LOG

Every POST is a JSON-RPC request, answered with an ok tool result (``Content-Length``, keep-alive),
but for the one MODE names, which is dropped without an answer:

| MODE           | which request                   | how it is dropped                                 |
| -------------- | ------------------------------- | ------------------------------------------------- |
| close-reused   | the second on a connection      | the connection closed (FIN), nothing of an answer |
| reset-reused   | the second on a connection      | the connection reset (RST), nothing of an answer  |
| partial-reused | the second on a connection      | half a status line written, then closed           |
| reset-fresh    | the first on every connection   | the connection reset (RST), nothing of an answer  |
| accepted       | the second on a connection      | not dropped: 202 Accepted, no body (its answer    |
|                |                                 | would come on another stream, as over HTTP+SSE)   |

Each request read is a line of LOG: ``<connection> <request id> answered|dropped|accepted``, so a test
counts how often the server was given each request and how often it answered it.
"""

from __future__ import annotations

import socket
import struct
import sys
from pathlib import Path

from aiohttp import web

MODES = ("close-reused", "reset-reused", "partial-reused", "reset-fresh", "accepted")


def application(mode: str, log: Path) -> web.Application:
    connections: dict[object, list[int]] = {}  # each connection (held): its number, the requests read on it

    async def handle(request: web.Request) -> web.StreamResponse:
        message = await request.json()
        transport = request.transport
        assert transport is not None
        number, seen = connections.setdefault(request.protocol, [len(connections) + 1, 0])
        connections[request.protocol][1] += 1
        drop = (seen == 0) if mode == "reset-fresh" else (seen == 1)
        what = ("accepted" if mode == "accepted" else "dropped") if drop else "answered"
        with log.open("a") as lines:
            lines.write(f"{number} {message['id']} {what}\n")
        if what == "accepted":
            return web.Response(status=202)
        if not drop:
            result = {"content": [{"type": "text", "text": "ok"}], "isError": False}
            return web.json_response({"jsonrpc": "2.0", "id": message["id"], "result": result})
        if mode == "partial-reused":
            transport.write(b"HTTP/1.1 20")
        elif mode != "close-reused":  # a reset: linger 0 makes close send RST
            sock = transport.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.close()
        raise web.HTTPInternalServerError  # never written: the connection is gone

    app = web.Application()
    app.router.add_post("/mcp", handle)
    return app


if __name__ == "__main__":
    port, mode, log = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    assert mode in MODES, mode
    web.run_app(application(mode, log), host="127.0.0.1", port=port, print=None, keepalive_timeout=75)
