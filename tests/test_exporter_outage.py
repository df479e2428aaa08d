"""A collector that is down or hangs never holds the agent up: calls answer the same, cost about
what they cost with a working collector, and the process exits within the export timeout of one
that exported fine: under ``mcp-otel run``, whose configurator sets the SDK up (under a plain
``opentelemetry-instrument`` the distro's configurator does, and the exit is the SDK's own)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.harness import REPO_ROOT, env_without_otel
from tests.processes import LOOPBACK, free_port

# Independent of the SDK major: run once, with mcp 2.x.
pytestmark = pytest.mark.mcp2

EXPORT_TIMEOUT = 2.0  # seconds (OTEL_EXPORTER_OTLP_TIMEOUT)


class _Collector(BaseHTTPRequestHandler):
    """Accepts every OTLP export at once."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def working() -> Iterator[str]:
    server = ThreadingHTTPServer((LOOPBACK, 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://{LOOPBACK}:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def hanging() -> Iterator[str]:
    """Accepts connections and never answers."""
    listener = socket.socket()
    listener.bind((LOOPBACK, 0))
    listener.listen(64)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://{LOOPBACK}:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for connection in accepted:
        connection.close()
    listener.close()


def _run(endpoint: str, tmp_path: Path) -> tuple[dict[str, Any], float]:
    env = env_without_otel(
        PYTHONPATH=str(REPO_ROOT),
        OTEL_EXPORTER_OTLP_ENDPOINT=endpoint,
        OTEL_TRACES_EXPORTER="otlp_proto_http",
        OTEL_METRICS_EXPORTER="otlp_proto_http",
        OTEL_LOGS_EXPORTER="none",
        OTEL_EXPORTER_OTLP_TIMEOUT=str(EXPORT_TIMEOUT),
        OTEL_BSP_SCHEDULE_DELAY="50",  # exports keep happening while the agent works
        OTEL_METRIC_EXPORT_INTERVAL="200",
    )
    agent = [sys.executable, "-m", "tests.agents.busy_agent"]
    # The OTLP exporters too, besides the local file.
    command = [
        str(Path(sys.executable).with_name("mcp-otel")),
        "run",
        "--output",
        str(tmp_path / "t.jsonl"),
        "--",
        *agent,
    ]
    started = time.monotonic()
    completed = subprocess.run(
        command,
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    assert completed.returncode == 0, completed.stderr[-3000:]
    [line] = [line for line in completed.stdout.splitlines() if line.startswith('{"answers"')]
    report: dict[str, Any] = json.loads(line)
    return report, elapsed


@pytest.mark.parametrize("outage", ["unreachable", "hanging"])
def test_an_outage_changes_nothing_the_agent_sees(working: str, hanging: str, outage: str, tmp_path: Path) -> None:
    endpoints = {"unreachable": f"http://{LOOPBACK}:{free_port()}", "hanging": hanging}
    # Compared within one run on a noisy machine.
    runs = [(_run(working, tmp_path), _run(endpoints[outage], tmp_path))]
    for (fine, fine_seconds), (down, down_seconds) in runs:
        assert down["answers"] == fine["answers"]
        assert len(down["answers"]) == 300
        # Exports happen off the calling thread: a dead collector costs the calls nothing.
        assert down["median_call_seconds"] <= 1.5 * fine["median_call_seconds"] + 0.0005
        # Exit: the OTLP exporters get one export timeout in all (the SDK alone would wait out the
        # export in flight, then the timeout again for the last spans and the last metrics).
        # The slack grows with the run's own length: on a loaded machine a run's wall time drifts
        # by a share of itself (an unbounded exit would add up to 3 timeouts, above this).
        slack = max(1.0, 0.2 * fine_seconds)
        assert down_seconds - fine_seconds <= EXPORT_TIMEOUT + slack, (outage, down_seconds, fine_seconds)
