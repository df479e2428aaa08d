"""What the HTTP listener lets through to the upstream: the MCP SDKs' defence against DNS
rebinding, kept in front of the server it guards.

A web page can rebind its own name to 127.0.0.1 and then reach a local server from the browser.
A local MCP server refuses a request whose ``Host`` is not one of its own names (421) and whose
``Origin`` is foreign (403), as the MCP specification asks and the SDKs' transport security does.
The proxy sends the upstream its own ``Host``, so the upstream can no longer tell: the proxy
checks instead, before anything is read or relayed, with the SDKs' rules and status codes.

Bound to a loopback address, the allowed ``Host`` values are the loopback names with the
listener's port, and the allowed ``Origin`` values the loopback origins on any port (the SDKs'
defaults; a request without ``Origin`` is not a browser's and passes). Bound elsewhere, the
operator's lists only (``--allow-host``, ``--allow-origin``); with none, nothing is checked. A
value ending in ``:*`` allows any port.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
INVALID_HOST = (421, "Invalid Host header")  # the SDKs' answers, word for word
INVALID_ORIGIN = (403, "Invalid Origin header")


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _in_url(host: str) -> str:
    """A host as it is written in a ``Host`` header or a URL (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


@dataclass(frozen=True)
class ListenerGuard:
    hosts: frozenset[str]  # empty: any Host
    origins: frozenset[str]  # empty: any Origin

    @classmethod
    def of(
        cls, listen_host: str, port: int, allow_hosts: Iterable[str] = (), allow_origins: Iterable[str] = ()
    ) -> ListenerGuard:
        hosts, origins = set(allow_hosts), set(allow_origins)
        if is_loopback(listen_host):
            names = (*LOOPBACK_NAMES, _in_url(listen_host))
            hosts |= {f"{name}:{port}" for name in names} | (set(names) if port == 80 else set())  # no port: 80
            origins |= {f"http://{name}:*" for name in LOOPBACK_NAMES}
        return cls(frozenset(host.lower() for host in hosts), frozenset(origin.lower() for origin in origins))

    def refusal(self, headers: Mapping[str, str]) -> tuple[int, str] | None:
        """The status and text to answer with instead of relaying, or ``None`` to relay."""
        if self.hosts and not _allowed(headers.get("Host"), self.hosts):
            return INVALID_HOST
        origin = headers.get("Origin")
        if origin and self.origins and not _allowed(origin, self.origins):
            return INVALID_ORIGIN
        return None


def _allowed(value: str | None, allowed: frozenset[str]) -> bool:
    if not value:
        return False
    value = value.lower()
    if value in allowed:
        return True
    base, colon, port = value.rpartition(":")
    return bool(colon) and port.isdigit() and f"{base}:*" in allowed
