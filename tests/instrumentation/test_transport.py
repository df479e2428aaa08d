"""The transport registry: lookups by identity, removal, no confusion after removal."""

from __future__ import annotations

from mcp_otel.instrumentation.transport import TransportInfo, TransportRegistry


def test_register_lookup_unregister() -> None:
    registry = TransportRegistry()
    stream, other = object(), object()
    info = TransportInfo("pipe")
    registry.register(stream, info)
    assert registry.lookup(stream) is info
    assert registry.lookup(other) is None
    registry.unregister(other)
    assert len(registry) == 1
    registry.unregister(stream)
    assert registry.lookup(stream) is None
    assert len(registry) == 0


def test_none_is_never_registered() -> None:
    registry = TransportRegistry()
    registry.register(None, TransportInfo("pipe"))
    assert len(registry) == 0
    registry.unregister(None)
