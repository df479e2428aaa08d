"""Which transport a session talks over: a registry keyed by the session's write stream.

Transport context managers (stdio client and server, streamable HTTP client) register the stream
they hand to the session while they are open; the patches look the session's stream up at call
time. Entries hold
the stream strongly and are removed when the transport closes, so ids cannot be reused while an
entry exists and the registry stays as small as the number of open transports.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import wrapt

from mcp_otel.model import messages
from mcp_otel.model.safety import report_once


@dataclass(frozen=True)
class TransportInfo:
    network_transport: str
    server_address: str | None = None
    server_port: int | None = None
    # Reads the MCP session id at call time (it is assigned during initialize).
    session_id: Callable[[], str | None] | None = None

    def key(self) -> tuple[str, str | None, int | None]:
        """What the attributes of its requests depend on (besides the session id)."""
        return self.network_transport, self.server_address, self.server_port


class TransportRegistry:
    def __init__(self) -> None:
        self._entries: dict[int, tuple[Any, TransportInfo]] = {}
        self._lock = threading.Lock()

    def register(self, stream: Any, info: TransportInfo) -> None:
        if stream is not None:
            with self._lock:
                self._entries[id(stream)] = (stream, info)

    def unregister(self, stream: Any) -> None:
        with self._lock:
            entry = self._entries.get(id(stream))
            if entry is not None and entry[0] is stream:
                del self._entries[id(stream)]

    def lookup(self, stream: Any) -> TransportInfo | None:
        entry = self._entries.get(id(stream))
        if entry is None or entry[0] is not stream:
            return None
        return entry[1]

    def __len__(self) -> int:
        return len(self._entries)


class RegisteringTransport(wrapt.ObjectProxy):  # type: ignore[type-arg]
    """A transport context manager that registers its write stream while it is open."""

    def __init__(self, inner: Any, registry: TransportRegistry, info: TransportInfo) -> None:
        super().__init__(inner)
        self._self_registry = registry
        self._self_info = info
        self._self_stream: Any = None

    async def __aenter__(self) -> Any:
        yielded = await self.__wrapped__.__aenter__()
        try:
            self._self_stream = messages.transport_streams(yielded)
            self._self_registry.register(self._self_stream, self._self_info)
        except Exception as exc:
            report_once("could not register a transport", exc)
        return yielded

    async def __aexit__(self, *exc_info: Any) -> Any:
        self._self_registry.unregister(self._self_stream)
        return await self.__wrapped__.__aexit__(*exc_info)
