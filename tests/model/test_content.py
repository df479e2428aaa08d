"""The cases of content capture (``spec/content.json``, the file the TypeScript, Go and Rust tests
read) through the Python package's: every case's value gives exactly its text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_otel.model.config import Settings
from mcp_otel.model.content import arguments_attributes, result_attributes
from mcp_otel.semconv import GEN_AI_TOOL_CALL_ARGUMENTS, GEN_AI_TOOL_CALL_RESULT

SPEC = Path(__file__).resolve().parents[2] / "spec" / "content.json"
CASES: list[dict[str, Any]] = json.loads(SPEC.read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_every_case_captures_as_the_spec_writes_it(case: dict[str, Any]) -> None:
    settings = Settings(capture_content=True, max_content_length=case["maxLength"])
    assert arguments_attributes(case["value"], settings) == {GEN_AI_TOOL_CALL_ARGUMENTS: case["captured"]}


def test_a_tool_result_is_captured_the_same_way() -> None:
    (case,) = [case for case in CASES if "content" in case["value"]]
    settings = Settings(capture_content=True, max_content_length=case["maxLength"])
    assert result_attributes(case["value"], settings) == {GEN_AI_TOOL_CALL_RESULT: case["captured"]}
