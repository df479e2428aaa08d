"""Which exporters each signal gets in mcp-otel's own processes (``mcp-otel run``'s agent, the
proxy): one rule for both, from the standard ``OTEL_*`` variables, the file beside them."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_otel.config import FILE_EXPORTER, RUN_FILE_ENV
from mcp_otel.run_configurator import CONFIGURATOR_NAME, exporters_environment, sdk_disabled

FILE = Path("/state/x.jsonl")
ENDPOINT = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}


@pytest.mark.parametrize(
    ("environ", "proxy", "run"),
    [
        # nothing set: the file only
        ({}, (FILE_EXPORTER, FILE_EXPORTER), (FILE_EXPORTER, FILE_EXPORTER)),
        # an endpoint: OTLP over HTTP (the sdk extra's exporter) and the file
        (ENDPOINT, ("otlp_proto_http,mcp_otel_file",) * 2, ("otlp_proto_http,mcp_otel_file",) * 2),
        # a protocol named: the SDK resolves "otlp" by it
        ({**ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, ("otlp,mcp_otel_file",) * 2, ("otlp,mcp_otel_file",) * 2),
        # a per-signal endpoint: that signal only
        (
            {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"},
            ("otlp_proto_http,mcp_otel_file", FILE_EXPORTER),
            ("otlp_proto_http,mcp_otel_file", FILE_EXPORTER),
        ),
        # exporters named: exactly those for the proxy; run adds its file
        (
            {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "otlp_proto_http, console"},
            ("console", "otlp_proto_http,console"),
            ("console,mcp_otel_file", "otlp_proto_http,console,mcp_otel_file"),
        ),
        # none: nothing for the proxy; run keeps its file
        (
            {**ENDPOINT, "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"},
            ("none", "none"),
            (FILE_EXPORTER, FILE_EXPORTER),
        ),
        # the file named by its entry point: the proxy writes it beside the others
        ({"OTEL_TRACES_EXPORTER": "console,mcp_otel_file"}, ("console,mcp_otel_file", FILE_EXPORTER), None),
    ],
)
def test_each_signal_gets_the_exporters_the_settings_name(
    environ: dict[str, str], proxy: tuple[str, str], run: tuple[str, str] | None
) -> None:
    for always_file, expected in ((False, proxy), (True, run)):
        if expected is None:
            continue
        env = exporters_environment(environ, FILE, always_file=always_file)
        assert (env["OTEL_TRACES_EXPORTER"], env["OTEL_METRICS_EXPORTER"]) == expected
        assert env[RUN_FILE_ENV] == str(FILE)
        assert env["OTEL_PYTHON_CONFIGURATOR"] == CONFIGURATOR_NAME
        assert env["OTEL_LOGS_EXPORTER"] == "none"


def test_logs_keep_what_the_user_set() -> None:
    assert exporters_environment({"OTEL_LOGS_EXPORTER": "console"}, FILE, always_file=True)["OTEL_LOGS_EXPORTER"] == (
        "console"
    )


@pytest.mark.parametrize(("value", "disabled"), [("true", True), (" TRUE ", True), ("1", False), ("false", False)])
def test_the_sdk_is_disabled_only_by_true(value: str, disabled: bool) -> None:
    assert sdk_disabled({"OTEL_SDK_DISABLED": value}) is disabled
    assert sdk_disabled({}) is False
