"""The attribute cache: built once per key, copies handed out, bounded, and it starts over when full."""

from __future__ import annotations

from typing import Any

from mcp_otel.attributes import AttributeCache


def test_built_once_per_key_and_each_caller_gets_its_own_span_attributes() -> None:
    built: list[str] = []

    def build(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
        built.append(name)
        return {"name": name}, {"metric": name}

    cache = AttributeCache(limit=2)
    first, metric = cache.get("a", lambda: build("a"))
    first["jsonrpc.request.id"] = "1"  # a caller adds its own id
    second, same_metric = cache.get("a", lambda: build("a"))
    assert second == {"name": "a"}
    assert same_metric is metric
    assert built == ["a"]

    cache.get("b", lambda: build("b"))
    cache.get("c", lambda: build("c"))  # full: starts over with c
    cache.get("c", lambda: build("c"))
    cache.get("a", lambda: build("a"))  # built again
    assert built == ["a", "b", "c", "a"]
