"""The proxy's floor: a stdio relay that observes nothing, written the fastest way found in Python.

    python bare_relay.py COMMAND [ARGS...]

Two threads, each a blocking ``os.read`` / ``os.write`` loop on raw file descriptors (no event
loop, no buffering, no line splitting); the server's stderr is inherited. It is what any relay
costs per request before it looks at a message. When the client closes stdin, the server's stdin
is closed and the relay waits for the server to exit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable

CHUNK = 64 * 1024


def pump(source: int, sink: int, at_end: Callable[[], None] = lambda: None) -> None:
    try:
        while chunk := os.read(source, CHUNK):
            view = memoryview(chunk)
            while view:
                view = view[os.write(sink, view) :]
    except OSError:
        pass
    at_end()


def main(command: list[str]) -> int:
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert server.stdin is not None
    assert server.stdout is not None
    to_server = threading.Thread(target=pump, args=(0, server.stdin.fileno(), server.stdin.close), daemon=True)
    to_server.start()
    pump(server.stdout.fileno(), 1)
    return server.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
