"""``mcp-otel report`` reads a line the same with either parser: msgspec's typed structs (the
``fast`` extra) and the standard library's dictionaries give the same calls, or both refuse it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("msgspec")

from mcp_otel.run import calls
from mcp_otel.run.calls import ReportError

KINDS = calls._KINDS["client"]
KEYS = [*sorted(calls._READ), "gen_ai.operation.name", "jsonrpc.request.id"]
STRINGS = st.sampled_from(
    ["tools/call", "initialize", "ok", "failed", "cancelled", "input_declined", "caller", "s", "", "tool_error"]
)
VALUES = st.one_of(
    st.builds(lambda value: {"stringValue": value}, STRINGS),
    st.builds(lambda value: {"boolValue": value}, st.booleans()),
    st.builds(lambda value: {"intValue": str(value)}, st.integers(-(2**63), 2**63 - 1)),
    st.builds(lambda value: {"doubleValue": value}, st.floats(allow_nan=False, allow_infinity=False)),
    st.just({}),
    st.just({"arrayValue": {"values": [{"stringValue": "x"}]}}),
)
ATTRIBUTE = st.one_of(
    st.fixed_dictionaries({"key": st.sampled_from(KEYS), "value": VALUES}),
    st.fixed_dictionaries({"key": st.sampled_from(KEYS)}),  # no value
)
TIME = st.one_of(st.integers(0, 2**62), st.integers(0, 2**62).map(str))
SPAN = st.fixed_dictionaries(
    {"kind": st.sampled_from([1, 2, 3, "SPAN_KIND_CLIENT", "SPAN_KIND_SERVER"])},
    optional={
        "name": st.just("tools/call t"),
        "startTimeUnixNano": TIME,
        "endTimeUnixNano": TIME,
        "attributes": st.lists(ATTRIBUTE, max_size=8),
        "status": st.fixed_dictionaries(
            {}, optional={"code": st.sampled_from([0, 1, 2, "STATUS_CODE_ERROR"]), "message": st.just("m")}
        ),
    },
)
LINE = st.fixed_dictionaries(
    {
        "resourceSpans": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "scopeSpans": st.lists(
                        st.fixed_dictionaries({}, optional={"spans": st.lists(SPAN, max_size=4)}), max_size=2
                    )
                },
            ),
            max_size=2,
        )
    }
)


def read(parse: Any, line: bytes) -> list[calls.Call] | str:
    try:
        return list(parse(line, KINDS))
    except ReportError:
        return "refused"


@settings(max_examples=400, deadline=None)
@given(LINE)
def test_both_parsers_read_every_line_alike(document: dict[str, Any]) -> None:
    line = json.dumps(document).encode()
    assert read(calls._calls_in_typed_line, line) == read(calls._calls_in_json_line, line)


@pytest.mark.parametrize(
    "line",
    [
        b"{truncated",
        b"\xff\xfe",
        b"[1]",
        b"7",
        b'{"resourceSpans": 7}',
        b'{"resourceSpans": null}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"kind": 3, "attributes": 7}]}]}]}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"kind": 3, "attributes": [{"value": {}}]}]}]}]}',
        b'{"resourceSpans": [{"scopeSpans": 5}]}',
        # A span that is no MCP request's, with a malformed value of an attribute a call reads.
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"kind": 3, "attributes": '
        b'[{"key": "error.type", "value": {"intValue": "x"}}]}]}]}]}',
        # An MCP request's span without its times.
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"kind": 3, "attributes": '
        b'[{"key": "mcp.method.name", "value": {"stringValue": "tools/call"}}]}]}]}]}',
    ],
)
def test_both_parsers_refuse_a_malformed_line(line: bytes) -> None:
    assert read(calls._calls_in_typed_line, line) == read(calls._calls_in_json_line, line) == "refused"


def test_lines_of_other_signals_have_no_calls() -> None:
    line = b'{"resourceMetrics": [{"scopeMetrics": []}]}'
    assert read(calls._calls_in_typed_line, line) == read(calls._calls_in_json_line, line) == []
