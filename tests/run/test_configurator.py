"""Which exporters each signal gets in mcp-otel's own processes (``mcp-otel run``'s agent, the
proxy): one rule for both, from the standard ``OTEL_*`` variables, the file beside them; and the
agent's PYTHONPATH, which starts it configured by mcp-otel."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcp_otel.model.config import FILE_EXPORTER, RUN_FILE_ENV
from mcp_otel.run.configurator import AUTO_INSTRUMENTATION, agent_python_path, exporters_environment, sdk_disabled

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
        assert "OTEL_PYTHON_CONFIGURATOR" not in env  # no configurator entry point of ours to name
        assert env["OTEL_LOGS_EXPORTER"] == "none"


def test_logs_keep_what_the_user_set() -> None:
    assert exporters_environment({"OTEL_LOGS_EXPORTER": "console"}, FILE, always_file=True)["OTEL_LOGS_EXPORTER"] == (
        "console"
    )


@pytest.mark.parametrize(("value", "disabled"), [("true", True), (" TRUE ", True), ("1", False), ("false", False)])
def test_the_sdk_is_disabled_only_by_true(value: str, disabled: bool) -> None:
    assert sdk_disabled({"OTEL_SDK_DISABLED": value}) is disabled
    assert sdk_disabled({}) is False


OURS = str(AUTO_INSTRUMENTATION)


@pytest.mark.parametrize(
    ("python_path", "expected"),
    [
        (None, [OURS, "/work"]),
        ("", [OURS, "/work"]),
        ("/lib", [OURS, "/work", "/lib"]),
        (os.pathsep.join(["/lib", "/work"]), [OURS, "/lib", "/work"]),  # the working directory stays where it is
        (os.pathsep.join(["/lib", OURS]), [OURS, "/work", "/lib"]),  # ours once, first
    ],
)
def test_the_agent_python_path_is_laid_out_as_opentelemetry_instrument_lays_it_out(
    python_path: str | None, expected: list[str]
) -> None:
    assert agent_python_path(python_path, "/work").split(os.pathsep) == expected


def test_the_agents_start_up_directory_holds_only_its_sitecustomize() -> None:
    """First on the agent's path: anything else in it would shadow the agent's own modules."""
    files = {path.name for path in AUTO_INSTRUMENTATION.iterdir() if path.name != "__pycache__"}
    assert files == {"sitecustomize.py"}
    assert AUTO_INSTRUMENTATION.name.endswith("auto_instrumentation")  # docs/proxy.md's recipe leaves it out
