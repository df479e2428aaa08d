"""The package as people install it: the sdist and wheel `python -m build` makes, their metadata
(`twine check --strict`, real trove classifiers, the license file), and the wheel installed into
fresh virtualenvs away from the source tree, on two more Pythons than the suites run on:

* with mcp 2.x (Python 3.12): a short agent under `mcp-otel run` gives its spans and metrics, the
  report, a service named after it; `opentelemetry-instrument` found the instrumentor through its
  entry point; `mcp-otel assets` writes the repository's own files;
* without mcp (Python 3.13): `import mcp_otel`, `mcp-otel report`, `mcp-otel run` on a plain
  program, and `opentelemetry-instrument` reporting no failed instrumentor.

Each install resolves the wheel's dependencies from the package index (about a minute in all)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

import pytest

from mcp_otel.cli.assets import ASSETS
from tests.harness import REPO_ROOT

pytestmark = pytest.mark.mcp2  # the package does not depend on the major the suite runs: built once

MCP2 = next(
    line.strip()
    for line in (REPO_ROOT / "requirements" / "mcp2.txt").read_text().splitlines()
    if line.startswith("mcp=")
)

AGENT = '''
"""A short agent: an ok call, a tool error and a call it stops waiting for, in memory."""
import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("wheel-server")


@server.tool()
def ok() -> str:
    return "ok"


@server.tool()
def broken() -> str:
    raise ToolError("broken")


@server.tool()
async def slow() -> str:
    await anyio.sleep(10)
    return "late"


async def main() -> None:
    async with Client(server) as client:
        await client.call_tool("ok", {})
        await client.call_tool("broken", {})
        with anyio.move_on_after(0.3):
            await client.call_tool("slow", {})


anyio.run(main)
'''


def _python(version: str) -> str:
    """pyenv's Python ``version``, or the one on PATH, else this one."""
    pyenv = shutil.which("pyenv")
    prefix = subprocess.run([pyenv, "prefix", version], capture_output=True, text=True).stdout.strip() if pyenv else ""
    candidates = [Path(prefix) / "bin" / f"python{version}"] if prefix else []
    candidates.append(Path(shutil.which(f"python{version}") or "/nonexistent"))
    return next((str(candidate) for candidate in candidates if candidate.exists()), sys.executable)


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 300) -> str:
    completed = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert completed.returncode == 0, (command, completed.stdout[-2000:], completed.stderr[-3000:])
    return completed.stdout + completed.stderr


def _clean_env(venv: Path) -> dict[str, str]:
    """No OTEL_* settings, no source tree on the path, the virtualenv first on PATH."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("OTEL_", "PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    return env


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO_ROOT)], cwd=out)
    return out


def _wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("*.whl")
    return wheel


def _venv(root: Path, python: str, *requirements: str) -> Path:
    venv = root / "venv"
    _run([python, "-m", "venv", str(venv)], cwd=root)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _run([*pip, *requirements], cwd=root, env=_clean_env(venv), timeout=600)
    return venv


def test_metadata_is_fit_to_publish(dist: Path) -> None:
    from trove_classifiers import classifiers as known

    _run([sys.executable, "-m", "twine", "check", "--strict", *map(str, sorted(dist.iterdir()))], cwd=dist)
    with zipfile.ZipFile(_wheel(dist)) as wheel:
        names = set(wheel.namelist())
        metadata = HeaderParser().parsestr(wheel.read("mcp_otel-0.1.0.dist-info/METADATA").decode())
        entry_points = wheel.read("mcp_otel-0.1.0.dist-info/entry_points.txt").decode()
    assert metadata["License-Expression"] == "Apache-2.0"
    assert "mcp_otel-0.1.0.dist-info/licenses/LICENSE" in names
    assert "Apache License" in (REPO_ROOT / "LICENSE").read_text()[:200]
    declared = metadata.get_all("Classifier")
    assert set(declared) <= known, set(declared) - known
    pythons = {c.rsplit(" ", 1)[1] for c in declared if c.startswith("Programming Language :: Python :: 3.")}
    assert pythons == {"3.10", "3.11", "3.12", "3.13"}  # the Pythons make test runs
    assert "mcp_otel/py.typed" in names
    assert {f"mcp_otel/cli/assets/{name}" for name in ASSETS} <= names
    assert "mcp_otel = mcp_otel:McpInstrumentor" in entry_points
    assert "mcp-otel = mcp_otel.cli:main" in entry_points
    # mcp-otel run's file (mcp_otel.model.config.FILE_EXPORTER), found by the SDK's configurator
    assert "mcp_otel_file = mcp_otel.run.otlp_file:JsonLinesSpanExporter" in entry_points
    assert "mcp_otel_file = mcp_otel.run.otlp_file:JsonLinesMetricExporter" in entry_points
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        shipped = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml", *ASSETS} <= shipped
    assert not {name for name in shipped if name.startswith((".venv", ".cache", "tests/"))}


def test_the_wheel_lists_the_files_the_build_puts_in() -> None:
    """One list of assets: pyproject's force-include and mcp_otel.cli.assets.ASSETS agree."""
    import tomllib

    included = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"][
        "force-include"
    ]
    assert included == {name: f"mcp_otel/cli/assets/{name}" for name in ASSETS}


# The newest OpenTelemetry SDK google-adk 2.13 allows (opentelemetry-sdk<=1.44).
FRAMEWORK_SDK = "opentelemetry-sdk==1.44.0"


def test_the_sdk_extra_installs_beside_the_sdk_agent_frameworks_pin(dist: Path, tmp_path: Path) -> None:
    """``mcp-otel[sdk]`` resolves with the SDK an agent framework pins, as a user's pip would."""
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
    command += ["--disable-pip-version-check", "--report", str(report), f"{_wheel(dist)}[sdk]", FRAMEWORK_SDK]
    _run(command, cwd=tmp_path, timeout=600)
    resolved = {
        item["metadata"]["name"]: item["metadata"]["version"] for item in json.loads(report.read_text())["install"]
    }
    assert resolved["opentelemetry-sdk"] == "1.44.0"
    assert resolved["opentelemetry-exporter-otlp-proto-http"] == "1.44.0"
    assert "opentelemetry-exporter-otlp-json-file" not in resolved


@pytest.fixture(scope="module")
def with_mcp(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("wheel-with-mcp")
    return root, _venv(root, _python("3.12"), f"{_wheel(dist)}[sdk]", MCP2)


def test_the_wheel_with_mcp_traces_an_agent(with_mcp: tuple[Path, Path]) -> None:
    root, venv = with_mcp
    env = _clean_env(venv)
    (root / "agent.py").write_text(AGENT)
    where = _run([str(venv / "bin" / "python"), "-c", "import mcp_otel; print(mcp_otel.__file__)"], cwd=root, env=env)
    assert str(venv) in where
    assert str(REPO_ROOT) not in where
    output = root / "telemetry.jsonl"
    run = [
        str(venv / "bin" / "mcp-otel"),
        "run",
        "--output",
        str(output),
        "--format",
        "json",
        "--",
        "python",
        "agent.py",
    ]
    printed = _run(run, cwd=root, env=env)
    (row,) = json.loads(printed[printed.index("[") : printed.rindex("]") + 1])
    assert {key: row[key] for key in ("name", "calls", "ok", "failed", "cancelled")} == {
        "name": "wheel-server",
        "calls": 3,
        "ok": 1,
        "failed": 1,
        "cancelled": 1,
    }
    documents = [json.loads(line) for line in output.read_text().splitlines()]
    scopes, services, metrics = set(), set(), set()
    for document in documents:
        for resource in document.get("resourceSpans", []):
            attributes = {a["key"]: a["value"].get("stringValue") for a in resource["resource"]["attributes"]}
            services.add(attributes["service.name"])
            scopes.update(scope["scope"]["name"] for scope in resource["scopeSpans"])
        for resource in document.get("resourceMetrics", []):
            metrics.update(m["name"] for s in resource["scopeMetrics"] for m in s["metrics"])
    assert services == {"agent"}
    assert "mcp_otel" in scopes  # opentelemetry-instrument loaded the instrumentor by its entry point
    assert {"mcp.client.operation.duration", "mcp.server.operation.duration"} <= metrics
    report = _run([str(venv / "bin" / "mcp-otel"), "report", "--format", "json", str(output)], cwd=root, env=env)
    assert json.loads(report)[0]["failure_rate"] == 0.5  # the cancel in neither part
    assets = root / "assets"
    _run([str(venv / "bin" / "mcp-otel"), "assets", str(assets)], cwd=root, env=env)
    for name in ASSETS:  # the wheel's assets are the repository's files, byte for byte
        assert (assets / name).read_bytes() == (REPO_ROOT / name).read_bytes(), name


def test_the_wheel_without_mcp(dist: Path, with_mcp: tuple[Path, Path], tmp_path: Path) -> None:
    venv = _venv(tmp_path, _python("3.13"), f"{_wheel(dist)}[sdk]")
    env = _clean_env(venv)
    python = str(venv / "bin" / "python")
    missing = subprocess.run([python, "-c", "import mcp"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert missing.returncode != 0  # truly without mcp
    _run([python, "-c", "import mcp_otel; mcp_otel.McpInstrumentor"], cwd=tmp_path, env=env)
    spans = with_mcp[0] / "telemetry.jsonl"
    report = _run([str(venv / "bin" / "mcp-otel"), "report", "--format", "json", str(spans)], cwd=tmp_path, env=env)
    assert json.loads(report[: report.rindex("]") + 1])[0]["calls"] == 3
    output = tmp_path / "plain.jsonl"
    plain = [str(venv / "bin" / "mcp-otel"), "run", "--output", str(output), "--", "python", "-c", "print('plain')"]
    printed = _run(plain, cwd=tmp_path, env=env)
    assert "plain" in printed
    assert "(no MCP requests found)" in printed
    instrumented = _run(
        [str(venv / "bin" / "opentelemetry-instrument"), "python", "-c", "pass"],
        cwd=tmp_path,
        env={**env, "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"},
    )
    assert "failed" not in instrumented.lower(), instrumented


def test_the_base_install_wraps_only_when_forced_and_then_relays(dist: Path, tmp_path: Path) -> None:
    """``pip install mcp-otel`` (no extra): ``wrap`` refuses, leaving the file as it was, and
    says what to install; with ``--force`` the wrapped server answers through the proxy, which
    says once why it records nothing and writes no file."""
    import anyio
    from mcp import StdioServerParameters

    from tests.harness import stdio_parameters

    venv = _venv(tmp_path, _python("3.12"), str(_wheel(dist)))
    env = _clean_env(venv)
    sdk = subprocess.run([str(venv / "bin" / "python"), "-c", "import opentelemetry.sdk"], env=env, cwd=tmp_path)
    assert sdk.returncode != 0  # truly without the SDK
    server = stdio_parameters()
    config = tmp_path / "claude_desktop_config.json"
    entries = {"tools": {"command": server.command, "args": server.args, "env": server.env}}
    original = json.dumps({"mcpServers": entries})
    config.write_text(original)
    wrap = [str(venv / "bin" / "mcp-otel"), "wrap", str(config)]
    refused = subprocess.run(wrap, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert refused.returncode == 1
    assert "pip install 'mcp-otel[sdk]'" in refused.stderr
    assert config.read_text() == original
    assert not config.with_name(config.name + ".mcp-otel-backup").exists()
    _run([*wrap, "--force"], cwd=tmp_path, env=env)
    entry = json.loads(config.read_text())["mcpServers"]["tools"]
    assert entry["command"] == str(venv / "bin" / "mcp-otel")
    state = tmp_path / "state"
    errors = tmp_path / "proxy.err"
    parameters = StdioServerParameters(
        command=entry["command"], args=entry["args"], env={**entry["env"], "XDG_STATE_HOME": str(state)}, cwd=server.cwd
    )
    assert anyio.run(_call_ok, parameters, errors) == ["ok"]
    said = [line for line in errors.read_text().splitlines() if line.startswith("mcp-otel proxy:")]
    assert said == [
        "mcp-otel proxy: relaying without telemetry: the OpenTelemetry SDK is not installed here: "
        "pip install 'mcp-otel[sdk]'"
    ]
    assert not state.exists()


async def _call_ok(parameters: Any, errors: Path) -> list[str]:
    """What the test server's ``ok`` tool answers, through ``parameters`` (its stderr to ``errors``)."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    with errors.open("w") as errlog:
        async with stdio_client(parameters, errlog=errlog) as streams, ClientSession(*streams) as session:
            await session.initialize()
            result = await session.call_tool("ok", {})
    return [content.text for content in result.content]  # type: ignore[union-attr]
