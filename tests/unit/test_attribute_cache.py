"""The attribute cache: built once per key, copies handed out, bounded, and it starts over when full."""

from __future__ import annotations

from typing import Any

from mcp_otel.attributes import AttributeCache


def test_built_once_per_key_and_each_caller_gets_its_own_span_attributes() -> None:
    built: list[str] = []
    cache = AttributeCache(limit=2)

    def fetch(name: str) -> tuple[dict[str, Any], Any]:
        """As the instrumentations ask: what is kept, else built and kept."""
        found = cache.get(name)
        if found is not None:
            return found
        built.append(name)
        return cache.put(name, ({"name": name}, {"metric": name}))

    first, metric = fetch("a")
    first["jsonrpc.request.id"] = "1"  # a caller adds its own id
    second, same_metric = fetch("a")
    assert second == {"name": "a"}
    assert same_metric is metric
    assert built == ["a"]

    fetch("b")
    fetch("c")  # full: starts over with c
    fetch("c")
    fetch("a")  # built again
    assert built == ["a", "b", "c", "a"]
