"""Opt-in capture of tool arguments and results (``gen_ai.tool.call.arguments`` / ``.result``).

Off by default: nothing a tool is given or answers is recorded unless the user asks
(``capture_content``, or the GenAI instrumentations' ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``).
When on, the value is written as JSON, values under secret-looking keys replaced by
``[REDACTED]`` at any depth, and the text cut to ``max_content_length`` characters. The text is
the same in every language (``spec/content.json``): no spaces, object keys sorted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from mcp_otel.model.config import Settings
from mcp_otel.model.outcome import bounded
from mcp_otel.model.safety import report_once
from mcp_otel.semconv import (
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_RESULT,
    MAX_CONTENT_DEPTH,
    REDACTED,
    SECRET_KEY_PATTERN,
    TOO_DEEP,
)

SECRET_KEY = re.compile(SECRET_KEY_PATTERN, re.IGNORECASE)


def redacted(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON data, with every secret-looking key's value replaced."""
    if depth > MAX_CONTENT_DEPTH:
        return TOO_DEEP
    dump = getattr(value, "model_dump", None)
    if callable(dump):  # pydantic models (results, content blocks)
        value = dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, Mapping):
        return {
            str(key): REDACTED if SECRET_KEY.search(str(key)) else redacted(item, depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redacted(item, depth + 1) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _always(_: Any) -> bool:
    return True


def _captured(key: str, value: Any, settings: Settings, is_content: Callable[[Any], bool] = _always) -> dict[str, str]:
    """``{key: JSON}`` when capture is on and ``value`` is content; fails open (``{}``, logged once)."""
    if not settings.capture_content or value is None:
        return {}
    try:
        if not is_content(value):
            return {}
        text = json.dumps(redacted(value), ensure_ascii=False, default=str, sort_keys=True, separators=(",", ":"))
    except Exception as exc:  # the call goes on without the attribute
        report_once("could not capture tool content", exc)
        return {}
    return {key: bounded(text, settings.max_content_length)}


def _is_result(result: Any) -> bool:
    """A tool result (content, structured content, isError); a JSON-RPC error is no result."""
    if isinstance(result, Mapping):
        return "content" in result or "structuredContent" in result
    return hasattr(result, "content")


def arguments_attributes(arguments: Any, settings: Settings) -> dict[str, str]:
    return _captured(GEN_AI_TOOL_CALL_ARGUMENTS, arguments, settings)


def result_attributes(result: Any, settings: Settings) -> dict[str, str]:
    return _captured(GEN_AI_TOOL_CALL_RESULT, result, settings, _is_result)
