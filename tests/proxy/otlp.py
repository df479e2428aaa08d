"""Reading the proxy's OTLP JSON lines back: spans in the shape the server tests assert on
(``tests.servers.span_file.span_dict``'s), and metric points."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

_KINDS = {1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}


def _value(value: dict[str, Any]) -> Any:
    if "arrayValue" in value:
        return tuple(_value(item) for item in value["arrayValue"].get("values", []))
    if "intValue" in value:
        return int(value["intValue"])
    (found,) = value.values()
    return found


def attributes(items: list[dict[str, Any]] | None) -> dict[str, Any]:
    return {item["key"]: _value(item["value"]) for item in items or []}


def documents(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def spans(path: Path) -> list[dict[str, Any]]:
    found = []
    for document in documents(path):
        for resource in document.get("resourceSpans", []):
            service = attributes(resource["resource"].get("attributes")).get("service.name")
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    status = span.get("status", {})
                    found.append(
                        {
                            "name": span["name"],
                            "kind": f"SpanKind.{_KINDS[span['kind']]}",
                            "service": service,
                            "scope": scope["scope"]["name"],
                            "status": {
                                "status_code": _STATUS[status.get("code", 0)],
                                "description": status.get("message") or None,
                            },
                            "attributes": attributes(span.get("attributes")),
                            "context": {"trace_id": f"0x{span['traceId']}", "span_id": f"0x{span['spanId']}"},
                            "parent_id": f"0x{span['parentSpanId']}" if span.get("parentSpanId") else None,
                            "links": span.get("links", []),
                            "start_time": int(span["startTimeUnixNano"]),
                        }
                    )
    return found


def points(path: Path, name: str) -> list[dict[str, Any]]:
    """The last collection's points of histogram or counter ``name`` (cumulative: the last has them
    all): a histogram point's ``count``, a counter point's ``value``."""
    found: list[dict[str, Any]] = []
    for document in documents(path):
        for resource in document.get("resourceMetrics", []):
            for scope in resource["scopeMetrics"]:
                for metric in scope["metrics"]:
                    if metric["name"] != name:
                        continue
                    if "histogram" in metric:
                        found = [
                            {"attributes": attributes(point.get("attributes")), "count": int(point["count"])}
                            for point in metric["histogram"]["dataPoints"]
                        ]
                    else:
                        found = [
                            {"attributes": attributes(point.get("attributes")), "value": int(point["asInt"])}
                            for point in metric["sum"]["dataPoints"]
                        ]
    return found


def wait_for(path: Path, predicate: Any, timeout: float = 15.0) -> None:
    """Until ``predicate(path)`` holds (the proxy writes its last telemetry as it exits)."""
    deadline = time.monotonic() + timeout
    while not predicate(path):
        if time.monotonic() > deadline:
            raise AssertionError(f"{path}: not written in {timeout} s: {documents(path)[-3:]}")
        time.sleep(0.1)


def requests(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The spans of requests: a notification has spans of its own (tests/test_notifications.py)."""
    return [span for span in spans if not span["attributes"].get("mcp.method.name", "").startswith("notifications/")]
