"""The calls in OTLP JSON span files, read back: what ``mcp-otel report`` summarizes.

Reads the JSON lines the OpenTelemetry OTLP JSON file exporter writes (``mcp-otel run``) and
the collector's file exporter writes: one ``{"resourceSpans": [...]}`` object per line; lines
with other signals are skipped. A call is a span of the chosen side (CLIENT: the agent's view,
by default) whose ``mcp.method.name`` is the chosen method (``tools/call`` by default; any
request's, for :data:`EVERY_METHOD`). Its outcome is ``mcp.request.outcome`` (``tool.outcome``);
spans without it (other instrumentations, older versions) are counted by their status, ERROR as
failed and anything else as ok (docs/decisions.md rule 5), and flagged (:attr:`Call.derived`). Spans of
requests answered with no result yet (an input round, a task creation, a version negotiation
step) are not calls, nor are notifications' spans (a ``notifications/*`` method: no answer, so no
outcome to count, whichever method).

Files are streamed a line at a time (:func:`iter_calls`), with their rotated generations. With the
``fast`` extra, lines are parsed by msgspec (``docs/benchmarks.md`` says what it gains); the
standard library's parser reads the same calls (``tests/run/test_report_parsers.py``).
"""

from __future__ import annotations

import glob
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from mcp_otel.model.outcome import outcome_of_span
from mcp_otel.semconv import (
    CALLER_FAULT_STATUS_CODES,
    ERROR_TYPE,
    GEN_AI_CONVERSATION_ID,
    GEN_AI_PROMPT_NAME,
    GEN_AI_TOOL_NAME,
    MCP_METHOD_NAME,
    MCP_REQUEST_CANCEL_REASON,
    MCP_REQUEST_OUTCOME,
    MCP_REQUEST_RESULT_TYPE,
    MCP_SERVER_NAME,
    METHOD_TOOLS_CALL,
    NOTIFICATION_PREFIX,
    RPC_RESPONSE_STATUS_CODE,
    SERVER_ADDRESS,
    TOOL_CANCEL_REASON,
    TOOL_OUTCOME,
    CancelReason,
    Outcome,
)

try:  # the ``fast`` extra
    import msgspec

    _FAST = True
except ImportError:  # the standard library's parser
    _FAST = False

# OTLP JSON enum values: numbers from the OpenTelemetry file exporters, names from some others.
_KINDS = {"client": (3, "SPAN_KIND_CLIENT"), "server": (2, "SPAN_KIND_SERVER")}
_STATUS_ERROR = (2, "STATUS_CODE_ERROR")
UNKNOWN = "(unknown)"
# The method filter that keeps every request.
EVERY_METHOD = "*"
INPUT_DECLINED = CancelReason.INPUT_DECLINED.value
# The span attributes a call is made of; the others are not even converted.
_READ = frozenset(
    {
        ERROR_TYPE,
        GEN_AI_CONVERSATION_ID,
        GEN_AI_PROMPT_NAME,
        GEN_AI_TOOL_NAME,
        MCP_METHOD_NAME,
        MCP_REQUEST_CANCEL_REASON,
        MCP_REQUEST_OUTCOME,
        MCP_REQUEST_RESULT_TYPE,
        MCP_SERVER_NAME,
        RPC_RESPONSE_STATUS_CODE,
        SERVER_ADDRESS,
        TOOL_CANCEL_REASON,
        TOOL_OUTCOME,
    }
)


class ReportError(Exception):
    """A file or line that could not be read: the message names it."""


class Call(NamedTuple):
    server: str
    tool: str  # the tool (or prompt) name, UNKNOWN for methods without one
    method: str
    outcome: Outcome
    # A failure's error.type; a server's caller fault has none, its code stands for it.
    error_type: str | None
    seconds: float
    derived: bool  # outcome derived from the span status (no outcome attribute)
    declined: bool = False  # cancelled because a person said no (input_declined)
    ended: int = 0  # when, in nanoseconds since the epoch
    caller_fault: bool = False  # failed, and its rpc.response.status_code blames the request
    conversation: str | None = None  # gen_ai.conversation.id, from the application's baggage


def with_generations(path: Path) -> list[Path]:
    """``path`` and the generations it was rotated into (``PATH.1`` the newest ... ``PATH.N``),
    oldest first; ``path`` itself also when it is not there (then the reader says so)."""
    generations = []
    for candidate in path.parent.glob(glob.escape(path.name) + ".*"):
        suffix = candidate.name[len(path.name) + 1 :]
        if suffix.isdigit():
            generations.append((int(suffix), candidate))
    older = [candidate for _, candidate in sorted(generations, reverse=True)]
    return [*older, path] if path.exists() or not older else older


def iter_calls(
    paths: Iterable[Path],
    problems: list[str],
    side: str = "client",
    method: str = METHOD_TOOLS_CALL,
    since: int | None = None,
    conversation: str | None = None,
) -> Iterator[Call]:
    """Every request of ``method`` in the files and their rotated generations (ended at or after
    ``since``, nanoseconds since the epoch, if given; of one ``conversation``, if given), read a
    line at a time; one message per file or line that could not be read is appended to
    ``problems`` (the rest is still read)."""
    kinds, every = _KINDS[side], method == EVERY_METHOD
    for path in (generation for given in paths for generation in with_generations(given)):
        try:
            with path.open("rb") as lines:
                read_any = False
                for number, line in enumerate(lines, start=1):
                    if line.isspace():
                        continue
                    read_any = True
                    try:
                        for call in _calls_in_line(line, kinds):
                            if (
                                (every or call.method == method)
                                and (since is None or call.ended >= since)
                                and (conversation is None or call.conversation == conversation)
                            ):
                                yield call
                    except ReportError as exc:
                        problems.append(f"{path}:{number}: {exc}")
        except OSError as exc:
            problems.append(f"{path}: cannot read: {exc}")
            continue
        if not read_any:
            problems.append(f"{path}: empty, no telemetry in it")


def read_calls(
    paths: Iterable[Path], side: str = "client", method: str = METHOD_TOOLS_CALL
) -> tuple[list[Call], list[str]]:
    """Every request of ``method`` in the files, as a list (for small files; the report streams),
    and one message per file or line that could not be read."""
    problems: list[str] = []
    calls = list(iter_calls(paths, problems, side, method))
    return calls, problems


def _calls_in_json_line(line: bytes, kinds: tuple[int, str]) -> list[Call]:
    """The calls of one line's spans of ``kinds``, parsed by the standard library; the whole line
    is refused if it is malformed."""
    try:
        document = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ReportError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except UnicodeDecodeError:
        raise ReportError("not UTF-8 text") from None
    if not isinstance(document, dict):
        raise ReportError("not an OTLP JSON object")
    if "resourceSpans" not in document:
        return []  # metrics or logs
    calls = []
    try:
        for resource in document["resourceSpans"]:
            for scope in resource.get("scopeSpans") or ():
                for span in scope.get("spans") or ():
                    if span.get("kind") not in kinds:
                        continue
                    attributes = {}
                    for item in span.get("attributes") or ():
                        if (key := item["key"]) in _READ:
                            attributes[key] = _value(item.get("value"))
                    if MCP_METHOD_NAME not in attributes:  # not an MCP request's span
                        continue
                    call = _call(
                        attributes,
                        (span.get("status") or {}).get("code"),
                        span.get("startTimeUnixNano"),
                        span.get("endTimeUnixNano"),
                    )
                    if call is not None:
                        calls.append(call)
    except (AttributeError, TypeError, KeyError, ValueError) as exc:
        raise ReportError(f"not OTLP JSON spans ({type(exc).__name__}: {exc})") from None
    return calls


def _value(value: dict[str, Any] | None) -> Any:
    """An OTLP JSON AnyValue (int64 values come as strings)."""
    if not value:
        return None
    if "stringValue" in value:
        return value["stringValue"]
    for key in ("boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    return None


if _FAST:
    # The fields of an OTLP JSON line a call is made of, as typed structs: msgspec skips every
    # other field while parsing and builds no dictionaries, which is most of what it gains.

    class _AnyValue(msgspec.Struct, gc=False):
        """The scalar kinds of an OTLP AnyValue (int64 values come as strings)."""

        stringValue: str | None = None
        boolValue: bool | None = None
        doubleValue: float | None = None
        intValue: int | str | None = None

    class _KeyValue(msgspec.Struct, gc=False):
        key: str
        value: _AnyValue | None = None

    class _Status(msgspec.Struct, gc=False):
        code: int | str | None = None

    class _Span(msgspec.Struct, gc=False):
        kind: int | str | None = None
        startTimeUnixNano: int | str | None = None
        endTimeUnixNano: int | str | None = None
        attributes: list[_KeyValue] | None = None
        status: _Status | None = None

    class _ScopeSpans(msgspec.Struct, gc=False):
        spans: list[_Span] | None = None

    class _ResourceSpans(msgspec.Struct, gc=False):
        scopeSpans: list[_ScopeSpans] | None = None

    class _Line(msgspec.Struct, gc=False):
        resourceSpans: list[_ResourceSpans] | msgspec.UnsetType = msgspec.UNSET

    _decode = msgspec.json.Decoder(_Line).decode

    def _calls_in_typed_line(line: bytes, kinds: tuple[int, str]) -> list[Call]:
        """The calls of one line's spans of ``kinds``, parsed by msgspec; the whole line is refused
        if it is malformed (also when a field a call is made of has the wrong type)."""
        try:
            document = _decode(line)
        except msgspec.ValidationError as exc:
            if "$." not in str(exc):  # the line itself is not an object
                raise ReportError("not an OTLP JSON object") from None
            raise ReportError(f"not OTLP JSON spans ({exc})") from None
        except msgspec.DecodeError as exc:
            raise ReportError(f"not JSON ({exc})") from None
        calls = []
        try:
            for resource in document.resourceSpans or ():
                for scope in resource.scopeSpans or ():
                    for span in scope.spans or ():
                        if span.kind not in kinds:
                            continue
                        attributes = {}
                        for attribute in span.attributes or ():
                            if (key := attribute.key) in _READ:
                                value = attribute.value  # a string, nearly always: read inline
                                attributes[key] = (
                                    value.stringValue
                                    if value is not None and value.stringValue is not None
                                    else _scalar(value)
                                )
                        if MCP_METHOD_NAME not in attributes:
                            continue
                        call = _call(
                            attributes,
                            span.status and span.status.code,
                            span.startTimeUnixNano,
                            span.endTimeUnixNano,
                        )
                        if call is not None:
                            calls.append(call)
        except (TypeError, ValueError) as exc:
            raise ReportError(f"not OTLP JSON spans ({type(exc).__name__}: {exc})") from None
        return calls

    def _scalar(value: _AnyValue | None) -> Any:
        if value is None:
            return None
        for scalar in (value.stringValue, value.boolValue, value.doubleValue):
            if scalar is not None:
                return scalar
        return None if value.intValue is None else int(value.intValue)

    _calls_in_line = _calls_in_typed_line
else:
    _calls_in_line = _calls_in_json_line


def _call(attributes: dict[str, Any], status_code: Any, start: Any, end: Any) -> Call | None:
    """The call a span of an MCP request states, from its attributes a call is made of (converted),
    its status code and its start and end times; ``None`` for a request with no result yet, and
    for a notification's span (no answer: not a call, whatever its status)."""
    method = attributes[MCP_METHOD_NAME]
    if method is None or (method.__class__ is str and method.startswith(NOTIFICATION_PREFIX)):
        return None
    outcome = outcome_of_span(attributes, status_code in _STATUS_ERROR)
    if outcome is None:  # an input round or a task creation: not a finished call
        return None
    error_type = code = None
    if outcome is Outcome.FAILED:
        code = attributes.get(RPC_RESPONSE_STATUS_CODE)
        error_type = attributes.get(ERROR_TYPE) or code
    tool = attributes.get(GEN_AI_TOOL_NAME)
    if tool is None:
        tool = attributes.get(GEN_AI_PROMPT_NAME, UNKNOWN)
    reason = attributes.get(MCP_REQUEST_CANCEL_REASON)
    if reason is None:
        reason = attributes.get(TOOL_CANCEL_REASON)
    return Call(
        str(attributes.get(MCP_SERVER_NAME) or attributes.get(SERVER_ADDRESS) or UNKNOWN),
        str(tool),
        str(method),
        outcome,
        None if error_type is None else str(error_type),
        (int(end) - int(start)) / 1e9,
        MCP_REQUEST_OUTCOME not in attributes and TOOL_OUTCOME not in attributes,
        reason == INPUT_DECLINED,
        int(end),
        code is not None and str(code) in CALLER_FAULT_STATUS_CODES,
        None if (conversation := attributes.get(GEN_AI_CONVERSATION_ID)) is None else str(conversation),
    )
