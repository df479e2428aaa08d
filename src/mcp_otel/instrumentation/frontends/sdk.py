"""What an SDK major's front end is: the sides it feeds, and its patch table."""

from __future__ import annotations

from mcp_otel.instrumentation.client import ClientSide
from mcp_otel.instrumentation.patching import Patch
from mcp_otel.instrumentation.server import ServerSide
from mcp_otel.instrumentation.sessions import Sessions


class SdkFrontEnd:
    """A major's hooks: each finds its request's (or session's) facts and hands them to its side."""

    def __init__(self, client: ClientSide, server: ServerSide, sessions: Sessions) -> None:
        self._client = client
        self._server = server
        self._sessions = sessions

    def patches(self) -> list[Patch]:
        raise NotImplementedError
