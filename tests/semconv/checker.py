"""Checks spans and metric points against the MCP semantic conventions' rules (``mcp_model.json``,
transcribed from semantic-conventions-genai at its pinned commits) and returns every violation as
a sentence. mcp-otel's own attributes and its documented differences (``extensions``,
``differences``) are allowed; anything else the conventions do not define, or define otherwise,
is a violation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

MODEL_FILE = Path(__file__).with_name("mcp_model.json")
TOOLS_CALL, PROMPTS_GET, SERVER_DISCOVER = "tools/call", "prompts/get", "server/discover"
EXECUTE_TOOL = "execute_tool"
# The codes the documented differences are about (mcp_model.json "differences").
CALLER_CODES_2026 = {"-32020", "-32021", "-32022"}
NOT_DONE = {"-32042": "input_required"}
NEGOTIATION = ({"-32600", "-32601", "-32602", "-32022"}, "negotiation")


@dataclass(frozen=True)
class Span:
    name: str
    kind: str  # CLIENT | SERVER
    status: str  # UNSET | OK | ERROR
    description: str | None
    attributes: Mapping[str, Any]


@dataclass(frozen=True)
class Point:
    metric: str
    attributes: Mapping[str, Any]


@cache
def model() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(MODEL_FILE.read_text())
    return loaded


def _expand(entries: Mapping[str, Any]) -> dict[str, str]:
    """An attribute set with its ``@include`` groups resolved."""
    resolved: dict[str, str] = {}
    for group in entries.get("@include", ()):
        resolved.update(_expand(model()["groups"][group]))
    resolved.update({key: value for key, value in entries.items() if key != "@include"})
    return resolved


def defined(signal: str) -> dict[str, str]:
    """The attributes the conventions define for a span kind (``CLIENT``, ``SERVER``) or a metric."""
    section = model()["spans"] if signal in model()["spans"] else model()["metrics"]
    return _expand(section[signal])


def _undefined(signal: str, attributes: Iterable[str]) -> list[str]:
    allowed = defined(signal)
    extensions = model()["extensions"]
    namespaces = tuple(model()["namespaces"])
    wrong = []
    for key in attributes:
        if key in allowed or key in extensions:
            continue
        if key.startswith("gen_ai.prompt.variable.") and "gen_ai.prompt.variable.*" in allowed:
            continue
        if key.startswith(namespaces):
            wrong.append(f"{signal}: {key} is not defined there")
    return wrong


def _not_done(attributes: Mapping[str, Any]) -> bool:
    """A documented difference: an error answer that says the request has no result yet."""
    code = attributes.get("rpc.response.status_code")
    result_type = attributes.get("mcp.request.result_type")
    if code in NOT_DONE:
        return result_type == NOT_DONE[code]
    return (
        attributes.get("mcp.method.name") == SERVER_DISCOVER
        and code in NEGOTIATION[0]
        and result_type == NEGOTIATION[1]
    )


def _own_crash(kind: str, attributes: Mapping[str, Any]) -> bool:
    """A documented difference: mcp 1.x answers an agent callback's exception with -32602; the
    agent's SERVER span says what happened (its own failure: error.type the exception's class)."""
    error_type = str(attributes.get("error.type", ""))
    code = attributes.get("rpc.response.status_code")
    return kind == "SERVER" and code == "-32602" and bool(error_type) and not error_type.lstrip("-").isdigit()


def _is_error_code(kind: str, code: str) -> bool:
    """Whether the conventions count a JSON-RPC code as an error on this side (with our
    documented difference: 2026-07-28's caller codes are callers' faults too)."""
    if kind == "CLIENT":
        return True
    return int(code) not in model()["server_non_error_codes"] and code not in CALLER_CODES_2026


def span_violations(span: Span) -> list[str]:
    attributes = span.attributes
    method = attributes.get("mcp.method.name")
    where = f"{span.kind} span {span.name!r}"
    found = [f"{where}: {problem}" for problem in _undefined(span.kind, attributes)]
    if not method:
        return [*found, f"{where}: mcp.method.name is required"]
    target = attributes.get("gen_ai.tool.name") or attributes.get("gen_ai.prompt.name")
    if span.name != (f"{method} {target}" if target else method):
        found.append(f"{where}: the name is not '{{mcp.method.name}} {{target}}'")
    if (attributes.get("gen_ai.operation.name") == EXECUTE_TOOL) != (method == TOOLS_CALL) or (
        "gen_ai.operation.name" in attributes and attributes["gen_ai.operation.name"] != EXECUTE_TOOL
    ):
        found.append(f"{where}: gen_ai.operation.name is execute_tool on tools/call and on nothing else")
    if method == TOOLS_CALL and "gen_ai.tool.name" not in attributes:
        found.append(f"{where}: gen_ai.tool.name is conditionally required on a tool call")
    if method == PROMPTS_GET and "gen_ai.prompt.name" not in attributes:
        found.append(f"{where}: gen_ai.prompt.name is conditionally required on prompts/get")
    if method in model()["resource_uri_methods"] and "mcp.resource.uri" not in attributes:
        found.append(f"{where}: mcp.resource.uri is conditionally required on {method}")
    # mcp 2.x's in-process direct path (no transport) sends no JSON-RPC message: no id to record.
    if (
        not method.startswith("notifications/")
        and "network.transport" in attributes
        and "jsonrpc.request.id" not in attributes
    ):
        found.append(f"{where}: jsonrpc.request.id is conditionally required on a request")
    if str(attributes.get("mcp.protocol.version", "")) >= "2026-07-28" and "mcp.session.id" in attributes:
        found.append(f"{where}: mcp.session.id must not be set on 2026-07-28 and later")
    found += _status_violations(where, span.kind, span.status == "ERROR", attributes)
    if span.status != "ERROR" and span.description:
        found.append(f"{where}: a status description without status ERROR")
    return found


def _status_violations(where: str, kind: str, is_error: bool, attributes: Mapping[str, Any]) -> list[str]:
    """Recording Errors and rpc.response.status_code: error.type if and only if the operation
    failed (then its status is ERROR); a JSON-RPC error code names error.type when it classifies
    as an error on this side, and is no failure when it does not."""
    found = []
    error_type = attributes.get("error.type")
    if (error_type is not None) != is_error:
        found.append(f"{where}: error.type {error_type!r} with the operation {'failed' if is_error else 'not failed'}")
    code = attributes.get("rpc.response.status_code")
    if code is None:
        return found
    if not isinstance(code, str):
        return [*found, f"{where}: rpc.response.status_code is a string"]
    if _not_done(attributes) or _own_crash(kind, attributes):
        return found  # documented differences
    if _is_error_code(kind, code) and (not is_error or error_type != code):
        found.append(f"{where}: code {code} is an error on this side, error.type its string")
    if not _is_error_code(kind, code) and is_error:
        found.append(f"{where}: code {code} is the caller's, not an error of this side")
    return found


def point_violations(point: Point) -> list[str]:
    attributes = point.attributes
    where = f"{point.metric} point {dict(attributes)}"
    found = [f"{where}: {problem}" for problem in _undefined(point.metric, attributes)]
    if point.metric.endswith(".session.duration"):
        return found
    method = attributes.get("mcp.method.name")
    if not method:
        return [*found, f"{where}: mcp.method.name is required"]
    if (attributes.get("gen_ai.operation.name") == EXECUTE_TOOL) != (method == TOOLS_CALL):
        found.append(f"{where}: gen_ai.operation.name is execute_tool on tools/call and on nothing else")
    kind = "CLIENT" if point.metric.startswith("mcp.client.") else "SERVER"
    # A point's operation failed as its span's did: the outcome says so (ours), or error.type.
    failed = attributes.get("mcp.request.outcome") == "failed"
    code = attributes.get("rpc.response.status_code")
    is_error = failed and (code is None or _is_error_code(kind, code) or _own_crash(kind, attributes))
    return found + _status_violations(where, kind, is_error, attributes)


def same_as_spans(spans: Iterable[Span], points: Iterable[Point]) -> list[str]:
    """A span and its point have the same error.type and rpc.response.status_code (Recording
    Errors; the code is conditionally required on both): each span with an outcome has a point on
    its side with its method, outcome and both values."""
    keys = {
        (
            point.metric,
            point.attributes.get("mcp.method.name"),
            point.attributes.get("mcp.request.outcome"),
            point.attributes.get("error.type"),
            point.attributes.get("rpc.response.status_code"),
        )
        for point in points
    }
    found = []
    for span in spans:
        attributes = span.attributes
        if "mcp.request.outcome" not in attributes:
            continue
        key = (
            "mcp.client.operation.duration" if span.kind == "CLIENT" else "mcp.server.operation.duration",
            attributes.get("mcp.method.name"),
            attributes["mcp.request.outcome"],
            attributes.get("error.type"),
            attributes.get("rpc.response.status_code"),
        )
        if key not in keys:
            found.append(f"{span.kind} span {span.name!r}: no point with its error.type and status code {key[3:]}")
    return found
