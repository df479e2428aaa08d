"""The HTTP listener's guard: the MCP SDKs' DNS-rebinding rules (``Host`` 421, ``Origin`` 403)
for a proxy bound to a loopback address, the operator's lists for one bound elsewhere."""

from __future__ import annotations

import pytest

from mcp_otel.proxy.guard import INVALID_HOST, INVALID_ORIGIN, ListenerGuard, is_loopback

PORT = 8931


@pytest.mark.parametrize(
    ("headers", "refusal"),
    [
        ({"Host": f"127.0.0.1:{PORT}"}, None),
        ({"Host": f"localhost:{PORT}"}, None),
        ({"Host": f"LOCALHOST:{PORT}"}, None),
        ({"Host": f"[::1]:{PORT}"}, None),
        ({"Host": f"evil.example:{PORT}"}, INVALID_HOST),  # a page that rebound its name
        ({"Host": "127.0.0.1:1"}, INVALID_HOST),  # another port: another server's
        ({"Host": "127.0.0.1"}, INVALID_HOST),
        ({}, INVALID_HOST),
        ({"Host": f"127.0.0.1:{PORT}", "Origin": "http://localhost:5173"}, None),  # a local page
        ({"Host": f"127.0.0.1:{PORT}", "Origin": "http://[::1]:3000"}, None),
        ({"Host": f"127.0.0.1:{PORT}", "Origin": "http://evil.example"}, INVALID_ORIGIN),
        ({"Host": f"127.0.0.1:{PORT}", "Origin": "https://localhost.evil.example:443"}, INVALID_ORIGIN),
        ({"Host": f"127.0.0.1:{PORT}", "Origin": "null"}, INVALID_ORIGIN),
        ({"Host": f"evil.example:{PORT}", "Origin": "http://evil.example"}, INVALID_HOST),  # Host first, as the SDKs
    ],
)
def test_a_loopback_listener_keeps_the_sdks_rules(headers: dict[str, str], refusal: tuple[int, str] | None) -> None:
    assert ListenerGuard.of("127.0.0.1", PORT).refusal(headers) == refusal


def test_more_hosts_and_origins_are_allowed_when_named() -> None:
    guard = ListenerGuard.of("127.0.0.1", PORT, ["mcp.dev.internal:*", "tunnel.example:443"], ["https://app.example"])
    assert guard.refusal({"Host": "mcp.dev.internal:1"}) is None
    assert guard.refusal({"Host": "tunnel.example:443"}) is None
    assert guard.refusal({"Host": "tunnel.example:444"}) == INVALID_HOST
    assert guard.refusal({"Host": "tunnel.example:443", "Origin": "https://app.example"}) is None
    assert guard.refusal({"Host": "tunnel.example:443", "Origin": "https://other.example"}) == INVALID_ORIGIN


def test_a_host_without_a_port_is_port_80() -> None:
    assert ListenerGuard.of("127.0.0.1", 80).refusal({"Host": "localhost"}) is None
    assert ListenerGuard.of("127.0.0.1", 80).refusal({"Host": "localhost:80"}) is None


def test_the_listeners_own_loopback_address_and_ipv6() -> None:
    assert ListenerGuard.of("127.0.0.2", PORT).refusal({"Host": f"127.0.0.2:{PORT}"}) is None
    assert ListenerGuard.of("::1", PORT).refusal({"Host": f"[::1]:{PORT}"}) is None
    assert ListenerGuard.of("::1", PORT).refusal({"Host": f"evil.example:{PORT}"}) == INVALID_HOST


def test_bound_elsewhere_only_the_operators_lists_apply() -> None:
    anything = {"Host": "mcp.example.com", "Origin": "https://elsewhere.example"}
    assert ListenerGuard.of("0.0.0.0", PORT).refusal(anything) is None
    listed = ListenerGuard.of("0.0.0.0", PORT, ["mcp.example.com"], ["https://app.example"])
    assert listed.refusal({"Host": "mcp.example.com"}) is None
    assert listed.refusal(anything) == INVALID_ORIGIN
    assert listed.refusal({"Host": "10.0.0.5:8000"}) == INVALID_HOST


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        *[(host, True) for host in ("127.0.0.1", "127.8.0.1", "::1", "[::1]", "localhost")],
        *[(host, False) for host in ("0.0.0.0", "::", "10.0.0.5", "example.com")],
    ],
)
def test_what_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
