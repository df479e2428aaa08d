"""Who configures the SDK. mcp-otel is an instrumentation: under ``opentelemetry-instrument`` the
SDK is configured exactly as without it (opentelemetry-distro's configurator when the distro is
installed, else none), and mcp-otel's instrumentor still instruments. ``mcp-otel run`` configures
its agent itself (its file, the OTLP exporters' bounded exit), the distro installed or not, and
says nothing about the distro's configurator."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_otel.run.configurator import AUTO_INSTRUMENTATION
from tests.cli.distro import distro_path
from tests.harness import env_without_otel
from tests.processes import LOOPBACK, free_port

INSTRUMENT = str(Path(sys.executable).with_name("opentelemetry-instrument"))
MCP_OTEL = str(Path(sys.executable).with_name("mcp-otel"))

# What the process sees of its telemetry, as one JSON line first on stdout.
PROBE = """
import builtins, json, os, subprocess, sys
from importlib.metadata import entry_points

run_configurator = "mcp_otel.run.configurator" in sys.modules  # before the probe imports it
from opentelemetry import trace
from mcp_otel import McpInstrumentor
from mcp_otel.run.configurator import exporters_of

provider = trace.get_tracer_provider()
trace.get_tracer("probe").start_span("probe").end()
exporters = []
for holder, attribute, signal, _ in exporters_of(provider, None):
    exporter = getattr(holder, attribute)
    inner = getattr(exporter, "_inner", None)
    exporters.append(type(exporter).__name__ + (f"({type(inner).__name__})" if inner is not None else ""))
child = [sys.executable, "-c", "import sys; print('mcp_otel.run.configurator' in sys.modules)"]
print(json.dumps({
    "configurators": sorted(ep.name for ep in entry_points(group="opentelemetry_configurator")),
    "run_configurator": run_configurator,
    "tracer_provider": f"{type(provider).__module__}.{type(provider).__qualname__}",
    "span_exporters": sorted(exporters),
    "instrumented": McpInstrumentor().is_instrumented_by_opentelemetry,
    "child_run_configurator": subprocess.run(child, capture_output=True, text=True).stdout.strip() == "True",
    "otlp_protocol": os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL"),
    "python_path": os.environ["PYTHONPATH"].split(os.pathsep),
    "sitecustomize": sys.modules["sitecustomize"].__file__,
    "user_sitecustomize_runs": getattr(builtins, "USER_SITECUSTOMIZE_RUNS", 0),
}), flush=True)
"""

# Exporters the distro's configurator can make here (its own default, OTLP over gRPC, is not installed).
CONSOLE = {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"}


def probe(
    command: list[str], cwd: Path, env: dict[str, str]
) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    (cwd / "probe.py").write_text(PROBE)
    completed = subprocess.run(
        [*command, sys.executable, "probe.py"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.splitlines()[0]), completed


def test_opentelemetry_instrument_uses_the_distros_configurator(tmp_path: Path) -> None:
    distro = str(distro_path())
    seen, completed = probe([INSTRUMENT], tmp_path, env_without_otel(PYTHONPATH=distro, **CONSOLE))
    assert completed.stderr == ""  # no "Configuration of ... not loaded" either way round
    assert {key: seen[key] for key in ("configurators", "run_configurator", "tracer_provider", "span_exporters")} == {
        "configurators": ["configurator"],  # the distro's, the only one
        "run_configurator": False,  # nothing of ours configured the SDK
        "tracer_provider": "opentelemetry.sdk.trace.TracerProvider",
        "span_exporters": ["ConsoleSpanExporter"],  # the SDK's configuration, no exit budget
    }
    assert seen["instrumented"] is True  # the instrumentor still loads by its entry point
    assert seen["otlp_protocol"] == "grpc"  # the distro's defaults


def test_opentelemetry_instrument_without_a_configurator_configures_nothing(tmp_path: Path) -> None:
    seen, completed = probe([INSTRUMENT], tmp_path, env_without_otel(**CONSOLE))
    assert completed.stderr == ""
    assert {key: seen[key] for key in ("configurators", "run_configurator", "tracer_provider", "span_exporters")} == {
        "configurators": [],
        "run_configurator": False,
        "tracer_provider": "opentelemetry.trace.ProxyTracerProvider",  # the API's: the user's choice stands
        "span_exporters": [],
    }
    assert seen["instrumented"] is True


def test_mcp_otel_run_configures_its_agent_beside_the_distro(tmp_path: Path) -> None:
    output = tmp_path / "telemetry.jsonl"
    endpoint = f"http://{LOOPBACK}:{free_port()}"  # nothing listens: the export at exit is bounded
    env = env_without_otel(
        PYTHONPATH=str(distro_path()),
        OTEL_EXPORTER_OTLP_ENDPOINT=endpoint,
        OTEL_EXPORTER_OTLP_TIMEOUT="1",
        OTEL_METRICS_EXPORTER="none",
    )
    seen, completed = probe([MCP_OTEL, "run", "--output", str(output), "--"], tmp_path, env)
    assert "Configuration of" not in completed.stderr  # the distro's configurator is simply not asked
    assert {key: seen[key] for key in ("configurators", "run_configurator", "tracer_provider", "span_exporters")} == {
        "configurators": ["configurator"],
        "run_configurator": True,
        "tracer_provider": "opentelemetry.sdk.trace.TracerProvider",
        "span_exporters": ["JsonLinesSpanExporter", "_BoundedExporter(OTLPSpanExporter)"],
    }
    assert seen["instrumented"] is True
    assert seen["otlp_protocol"] == "grpc"  # the distro's step ran first, as under opentelemetry-instrument
    assert seen["child_run_configurator"] is True  # its Python children too
    spans = [
        span["name"]
        for line in output.read_text().splitlines()
        for resource in json.loads(line).get("resourceSpans", [])
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]
    assert spans == ["probe"]


def test_mcp_otel_run_keeps_the_users_pythonpath_and_sitecustomize(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import builtins\nbuiltins.USER_SITECUSTOMIZE_RUNS = getattr(builtins, 'USER_SITECUSTOMIZE_RUNS', 0) + 1\n"
    )
    agent = tmp_path / "agent"
    agent.mkdir()
    env = env_without_otel(PYTHONPATH=str(site), OTEL_TRACES_EXPORTER="none", OTEL_METRICS_EXPORTER="none")
    seen, completed = probe([MCP_OTEL, "run", "--output", str(tmp_path / "t.jsonl"), "--"], agent, env)
    # Laid out as opentelemetry-instrument lays it out: ours, the working directory, the user's.
    assert seen["python_path"] == [str(AUTO_INSTRUMENTATION), str(agent), str(site)]
    assert seen["run_configurator"] is True
    assert seen["user_sitecustomize_runs"] == 1
    assert seen["sitecustomize"] == str(site / "sitecustomize.py")  # `import sitecustomize` gives theirs
    assert seen["span_exporters"] == ["JsonLinesSpanExporter"]
    assert completed.stderr.count("mcp-otel run:") == 0  # nothing to complain about


def test_mcp_otel_run_says_when_the_command_is_not_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_otel.cli.main import main

    assert main(["run", "--output", str(tmp_path / "t.jsonl"), "--", "mcp-otel-no-such-agent"]) == 127
    assert "mcp-otel: cannot run mcp-otel-no-such-agent: no such command" in capsys.readouterr().err
