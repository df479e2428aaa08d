"""Reading a wrapped method's arguments however the caller passed them."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_otel.instrumentation import binding


class Session:
    async def call_tool(self, name: str, arguments: Any = None, timeout: Any = None, *, meta: Any = None) -> None:
        pass

    def send(self, request: Any) -> None:
        pass


CALL_TOOL = Session().call_tool
SEND = Session().send


@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        (("echo", {"a": 1}), {}, ("echo", {"a": 1}, None)),  # the SDK's own: all by position
        (("echo",), {}, ("echo", None, None)),  # defaults not passed: absent
        (("echo", {"a": 1}, 5), {"meta": {"m": 1}}, ("echo", {"a": 1}, {"m": 1})),
        ((), {"name": "echo", "arguments": {"a": 1}, "meta": {}}, ("echo", {"a": 1}, {})),  # fastmcp: by keyword
        (("echo",), {"arguments": {"a": 2}}, ("echo", {"a": 2}, None)),
        ((), {}, (None, None, None)),
    ],
)
def test_arguments_are_read_however_they_were_passed(args: Any, kwargs: Any, expected: Any) -> None:
    assert binding.arguments_of(CALL_TOOL, args, kwargs, "name", "arguments", "meta") == expected


@pytest.mark.parametrize(
    ("args", "kwargs", "names", "expected"),
    [
        (("echo", {"a": 1}), {}, ("arguments", "name"), ({"a": 1}, "echo")),  # in the order asked
        (("echo", {"a": 1}), {}, ("name",), ("echo",)),  # one name: a 1-tuple, not the value
        (("echo", {"a": 1}), {}, ("arguments",), ({"a": 1},)),
        (("echo",), {}, ("arguments",), (None,)),
        (("echo",), {}, ("name", "no_such_parameter"), ("echo", None)),
        (("echo", {"a": 1}), {"timeout": 5}, ("name", "arguments"), ("echo", {"a": 1})),  # others by keyword
        (("echo",), {"arguments": {"a": 2}}, ("name",), ("echo",)),
        (("echo",), {"arguments": {"a": 2}}, ("arguments", "name"), ({"a": 2}, "echo")),
    ],
)
def test_positional_reads_match_the_slots(args: Any, kwargs: Any, names: Any, expected: Any) -> None:
    assert binding.arguments_of(CALL_TOOL, args, kwargs, *names) == expected


def test_one_parameter_methods_and_their_wrappers_share_readers() -> None:
    request = object()
    assert binding.arguments_of(SEND, (request,), {}, "request") == (request,)
    assert binding.arguments_of(Session.send, (request,), {}, "request") == (request,)  # the plain function
    assert binding.arguments_of(SEND, (), {"request": request}, "request") == (request,)


def test_replace_puts_the_value_where_the_caller_passed_it() -> None:
    slot = binding.slot_of(CALL_TOOL, "meta")
    assert slot is not None
    assert slot.replace(("echo",), {}, {"t": 1}) == (("echo",), {"meta": {"t": 1}})
    arguments = binding.slot_of(CALL_TOOL, "arguments")
    assert arguments is not None
    assert arguments.replace(("echo", {}), {}, {"a": 1}) == (("echo", {"a": 1}), {})
    assert arguments.replace(("echo",), {"arguments": {}}, {"a": 1}) == (("echo",), {"arguments": {"a": 1}})
