"""The attribute cache: built once per key, shared, bounded, and it starts over when full."""

from __future__ import annotations

from typing import Any

from mcp_otel.model.attributes import AttributeCache


def test_built_once_per_key_and_shared_by_alike_requests() -> None:
    built: list[str] = []
    cache = AttributeCache(limit=2)

    def fetch(name: str) -> tuple[Any, Any]:
        """As the instrumentations ask: what is kept, else built and kept."""
        found = cache.get(name)
        if found is not None:
            return found
        built.append(name)
        return cache.put(name, ({"name": name}, {"metric": name}))

    first, metric = fetch("a")
    second, same_metric = fetch("a")
    assert second is first  # read-only: a caller that adds its own id makes a new dict
    assert same_metric is metric
    assert built == ["a"]

    fetch("b")
    fetch("c")  # full: starts over with c
    fetch("c")
    fetch("a")  # built again
    assert built == ["a", "b", "c", "a"]


def test_a_request_is_built_once_per_names_and_a_peers_huge_or_odd_names_are_never_held() -> None:
    from mcp_otel.model import attributes
    from mcp_otel.model.attributes import Request
    from mcp_otel.model.config import Settings

    settings = Settings(max_name_length=16)
    attributes._REQUESTS.clear()
    first = Request.named("tools/call", "search", None, settings)
    assert first == Request("tools/call", "search", None, "tools/call search")
    assert first.span_name() == "tools/call search"
    assert Request.of("tools/call", {"name": "search"}, settings) is first
    assert len(attributes._REQUESTS) == 1

    huge = Request.named("tools/call", "x" * 1000, None, settings)
    assert huge.target == "x" * 15 + "…"
    odd = Request.named("tools/call", ["not", "a", "name"], None, settings)  # unhashable
    assert odd.target == "['not', 'a', 'n…"
    assert Request.named(7, None, None, settings) == Request("7", None, None, "7")
    assert len(attributes._REQUESTS) == 1  # none of them kept

    for index in range(attributes._MAX_REQUESTS + 5):
        Request.named("tools/call", f"t{index}", None, settings)
    assert len(attributes._REQUESTS) <= attributes._MAX_REQUESTS


def test_a_key_that_cannot_be_hashed_is_built_each_time_and_not_kept() -> None:
    cache = AttributeCache()
    key = ("tools/call", ["a", "server", "name", "as", "a", "list"])
    assert cache.get(key) is None
    span, metric = cache.put(key, ({"a": 1}, {"m": 1}))
    assert (span, metric) == ({"a": 1}, {"m": 1})
    assert cache.get(key) is None


class _Session:
    """A session as the memo sees it: any object that can be referred to weakly."""


def test_a_settled_sessions_requests_are_kept_until_it_settles_again_or_is_forgotten() -> None:
    from mcp_otel.model.attributes import Request, SettledSessions

    settled = SettledSessions(limit=2)
    session, other = _Session(), _Session()
    request = Request("tools/call", "search", None, "tools/call search")
    entry: tuple[Any, Any] = ({"span": 1}, {"metric": 1})

    assert settled.requests(session) is None  # no handshake seen: nothing kept
    settled.settle(session)
    requests = settled.requests(session)
    assert requests == {}
    settled.keep(requests, request, entry)
    assert settled.requests(session) == {request: entry}
    assert settled.requests(other) is None

    settled.settle(session)  # a new handshake: what it knew is dropped
    assert settled.requests(session) == {}
    settled.forget(session)
    assert settled.requests(session) is None
    settled.forget(other)  # never settled: nothing to do

    settled.settle(session)
    settled.settle(other)
    requests, others = settled.requests(session), settled.requests(other)
    assert requests is not None
    assert others is not None
    settled.keep(requests, Request("tools/call", "t0"), entry)
    settled.keep(others, Request("tools/call", "t1"), entry)
    assert len(requests) + len(others) == 2
    settled.keep(requests, Request("tools/call", "t2"), entry)  # `limit` requests in all: starts over
    assert (requests, others) == ({Request("tools/call", "t2"): entry}, {})
    assert settled.requests(other) == {}  # still settled: its next requests are kept again


def test_sessions_are_held_weakly_and_bounded() -> None:
    import gc
    import weakref

    from mcp_otel.model.attributes import SettledSessions

    settled = SettledSessions(limit=2)
    first, second, third = _Session(), _Session(), _Session()
    settled.settle(first)
    alive = weakref.ref(first)
    del first
    gc.collect()
    assert alive() is None  # not kept alive by the memo

    settled.settle(second)
    settled.settle(third)  # full: starts over, with the third
    assert settled.requests(second) is None
    assert settled.requests(third) == {}

    unreferable = object()  # no weak reference to it: never settled
    settled.settle(unreferable)
    assert settled.requests(unreferable) is None
