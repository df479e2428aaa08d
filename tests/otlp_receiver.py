"""An OTLP/HTTP receiver on 127.0.0.1 for tests: it records each request's path and body (Python's
exporters send a length, Node's a chunked body) and answers 200."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@contextmanager
def receiving() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    """The receiver's endpoint (``http://127.0.0.1:PORT``) and the list it appends to."""
    received: list[tuple[str, bytes]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append((self.path, self._body()))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def _body(self) -> bytes:
            if self.headers["Content-Length"] is not None:
                return self.rfile.read(int(self.headers["Content-Length"]))
            body = b""
            while size := int(self.rfile.readline().split(b";")[0], 16):
                body += self.rfile.read(size)
                self.rfile.readline()
            self.rfile.readline()
            return body

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
