"""The package root's public names: what ``from mcp_otel import ...`` gives, and the deprecated
``ToolOutcome``, which still imports (the same class as ``Outcome``) and says it is deprecated."""

from __future__ import annotations

import warnings

import pytest

import mcp_otel
from mcp_otel.instrumentation.instrumentor import McpInstrumentor
from mcp_otel.semconv import CancelReason, Outcome


def test_the_root_exports_the_instrumentor_and_the_outcome_values() -> None:
    assert sorted(mcp_otel.__all__) == ["CancelReason", "McpInstrumentor", "Outcome", "__version__"]
    assert (mcp_otel.McpInstrumentor, mcp_otel.Outcome, mcp_otel.CancelReason) == (
        McpInstrumentor,
        Outcome,
        CancelReason,
    )
    assert [value.value for value in mcp_otel.Outcome] == ["ok", "failed", "cancelled"]


def test_tool_outcome_is_outcome_and_warns_that_it_is_deprecated() -> None:
    with pytest.warns(DeprecationWarning, match=r"mcp_otel\.ToolOutcome is deprecated: use mcp_otel\.Outcome"):
        from mcp_otel import ToolOutcome
    assert ToolOutcome is Outcome


def test_the_current_names_import_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from mcp_otel import CancelReason, McpInstrumentor, Outcome  # noqa: F401


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Nothing'"):
        mcp_otel.Nothing  # noqa: B018
