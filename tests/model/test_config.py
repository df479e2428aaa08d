"""Settings from the environment and keyword arguments; invalid values never raise."""

from __future__ import annotations

import logging

import pytest

from mcp_otel.model.config import SdkSpans, Settings


def test_defaults() -> None:
    assert Settings.load({}) == Settings(
        sdk_spans=SdkSpans.SUPPRESS,
        propagate=True,
        server_name=None,
        server_version=None,
        max_name_length=256,
        send_cancel=False,
        max_metric_names=100,
    )


def test_environment() -> None:
    settings = Settings.load(
        {
            "OTEL_INSTRUMENTATION_MCP_SDK_SPANS": "KEEP",
            "OTEL_INSTRUMENTATION_MCP_PROPAGATE": "false",
            "OTEL_INSTRUMENTATION_MCP_SERVER_NAME": " weather ",
            "OTEL_INSTRUMENTATION_MCP_SERVER_VERSION": "1.0",
            "OTEL_INSTRUMENTATION_MCP_MAX_NAME_LENGTH": "64",
            "OTEL_INSTRUMENTATION_MCP_SEND_CANCEL": "on",
            "OTEL_INSTRUMENTATION_MCP_MAX_METRIC_NAMES": "7",
        }
    )
    assert settings == Settings(
        sdk_spans=SdkSpans.KEEP,
        propagate=False,
        server_name="weather",
        server_version="1.0",
        max_name_length=64,
        send_cancel=True,
        max_metric_names=7,
    )


def test_keyword_arguments_win() -> None:
    environ = {"OTEL_INSTRUMENTATION_MCP_SDK_SPANS": "keep", "OTEL_INSTRUMENTATION_MCP_MAX_NAME_LENGTH": "64"}
    settings = Settings.load(environ, sdk_spans="suppress", max_name_length=10)
    assert settings.sdk_spans is SdkSpans.SUPPRESS
    assert settings.max_name_length == 10


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SDK_SPANS", "sometimes"),
        ("PROPAGATE", "maybe"),
        ("MAX_NAME_LENGTH", "0"),
        ("MAX_NAME_LENGTH", "lots"),
        ("SERVER_NAME", "   "),
    ],
)
def test_invalid_values_are_logged_and_defaulted(name: str, value: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        settings = Settings.load({f"OTEL_INSTRUMENTATION_MCP_{name}": value})
    assert settings == Settings()
    assert f"OTEL_INSTRUMENTATION_MCP_{name}" in caplog.text


def test_unknown_keyword_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert Settings.load({}, colour="blue") == Settings()
    assert "colour" in caplog.text
