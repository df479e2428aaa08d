"""Sizing one gateway collector of the scaled topology (docs/stack.md, "Past one machine"): what it costs
per span, and what a trace held for its sampling decision costs in memory.

    python benchmarks/gateway_sizing.py [--traces N] [--output docs/gateway-sizing.json]

One gateway (collector.yaml + gateway.yaml, the built collector) with the real Jaeger and
Prometheus behind it, fed over OTLP/HTTP by a generator process: traces of one tool call each, its
CLIENT and SERVER span as mcp-otel writes them (scope, attributes, outcomes 70% ok, 10% failed,
20% cancelled). Measured from the gateway's own process (/proc), not from a clock around it:
- CPU per span: the gateway's CPU time over the spans it took in (the generator runs on the
  other core); so one core sustains 1 / that many spans per second;
- memory per 10,000 traces held: with a decision_wait longer than the run, the resident memory
  after each batch of traces, the slope over the batches.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp_otel.semconv import SPAN_METRICS_CALLS
from tests.processes import LOOPBACK, free_port, running, wait_until
from tests.stack.stack import GATEWAY_CONFIGS, OPTIMIZED_BIN, Prometheus, jaeger, prometheus

# The optimized builds (`make collector`, `make jaeger`): a gateway's cost is what a deployment's is.
COLLECTOR, JAEGER = OPTIMIZED_BIN / "mcp-otelcol", OPTIMIZED_BIN / "jaeger"

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")

GENERATOR = Path(__file__).with_name("span_generator.py")
WARM_UP = 1000  # traces sent before measuring


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime


def resident_mib(pid: int) -> float:
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE / 2**20


def generate(endpoint: str, start: int, count: int) -> float:
    began = time.monotonic()
    subprocess.run([sys.executable, str(GENERATOR), endpoint, str(start), str(count)], check=True)
    return time.monotonic() - began


def counted(server: Prometheus, spans: int) -> bool:
    result = server.query(f"sum({SPAN_METRICS_CALLS[0]})", time.time())
    return bool(result) and float(result[0]["value"][1]) >= spans


def throughput(process: subprocess.Popen[bytes], endpoint: str, server: Prometheus, traces: int) -> dict[str, Any]:
    """The gateway's CPU time per span, its idle cost (flushes, writes, timers) taken away."""
    cpu, began = cpu_seconds(process.pid), time.monotonic()
    time.sleep(20)
    idle = (cpu_seconds(process.pid) - cpu) / (time.monotonic() - began)
    cpu, began = cpu_seconds(process.pid), time.monotonic()
    generator_seconds = generate(endpoint, WARM_UP, traces)
    # Spans are counted when the span metrics flush (every 15 s); the decisions follow.
    spans = 2 * (WARM_UP + traces)
    wait_until(lambda: counted(server, spans), 120, "every span counted")
    time.sleep(6)  # the last decisions (decision_wait 5 s) and their export
    busy = cpu_seconds(process.pid) - cpu - idle * (time.monotonic() - began)
    return {
        "generator_seconds": generator_seconds,
        "idle_cpu_share": idle,
        "spans": 2 * traces,
        "cpu_seconds": busy,
        "cpu_us_per_span": busy / (2 * traces) * 1e6,
        "spans_per_core_second": 2 * traces / busy,
    }


def memory(process: subprocess.Popen[bytes], endpoint: str, traces: int) -> dict[str, Any]:
    """Resident memory as traces pile up undecided (decision_wait longer than the run)."""
    points, sent = [], WARM_UP
    for _ in range(4):
        generate(endpoint, sent, traces // 2)
        sent += traces // 2
        time.sleep(3)
        points.append((sent, resident_mib(process.pid)))
    slope = (points[-1][1] - points[0][1]) / (points[-1][0] - points[0][0])
    return {"rss_points": points, "mib_per_10k_traces": slope * 10_000}


def measure(directory: Path, traces: int) -> dict[str, Any]:
    directory.mkdir(parents=True, exist_ok=True)
    figures: dict[str, Any] = {}
    with prometheus(directory, with_rules=False) as server, jaeger(directory, server.url, JAEGER) as store:
        for phase, decision_wait in (("throughput", "5s"), ("memory", "600s")):
            grpc, http = free_port(), free_port()
            env = {
                **os.environ,
                "MCP_OTEL_GATEWAY_NAME": "gateway-1",
                "MCP_OTEL_COLLECTOR_GRPC": f"{LOOPBACK}:{grpc}",
                "MCP_OTEL_COLLECTOR_HTTP": f"{LOOPBACK}:{http}",
                "MCP_OTEL_TRACES_OTLP": store.otlp,
                "MCP_OTEL_PROMETHEUS_REMOTE_WRITE": f"{server.url}/api/v1/write",
                "MCP_OTEL_DECISION_WAIT": decision_wait,
                "MCP_OTEL_NUM_TRACES": str(4 * traces),
            }
            gateway = [str(COLLECTOR), *(flag for c in GATEWAY_CONFIGS for flag in ("--config", str(c)))]
            log = directory / f"gateway-{phase}.log"
            with running(gateway, ports=[grpc, http], env=env, log=log) as process:
                endpoint = f"http://{LOOPBACK}:{http}"
                generate(endpoint, 0, WARM_UP)  # every series exists, the heap has grown once
                time.sleep(2)
                if phase == "throughput":
                    figures |= throughput(process, endpoint, server, traces)
                else:
                    figures |= memory(process, endpoint, traces)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", type=int, default=50_000, help="traces per measured batch")
    parser.add_argument("--output", type=Path, default=Path("docs/gateway-sizing.json"))
    parser.add_argument("--work", type=Path, default=Path(".cache/gateway-sizing"))
    args = parser.parse_args()
    figures = measure(args.work, args.traces)
    figures["machine"] = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    args.output.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
