"""The benchmark runner: per-request cost of ``tools/call`` (and ``resources/read``) per variant,
interleaved in one run.

    python benchmarks/run.py --python1 PY --python2 PY [--rounds R] [--calls N] [--operations OP ...]

Every variant runs in its own long-lived worker process (``worker.py``), in the environment of
its SDK major. Rounds are interleaved: each round asks every worker, in a shuffled order, for
the mean time of N sequential calls, so drift on a shared machine hits all variants alike.
Reported: the median over rounds, the overhead over the uninstrumented baseline, and ratios of
overheads, never a lone absolute time. Writes Markdown and JSON.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.variants import DESCRIPTIONS, OPERATIONS, VARIANTS

WORKER = Path(__file__).with_name("worker.py")
PEERS = ("sdk-builtin", "traceloop", "logfire", "openinference")
# Targets from the benchmark issue: our overhead against the floor's and against peers'.
TARGETS = {"floor": 1.5, "sdk-builtin": 1.0, "traceloop": 0.5}
# The peers are about tool calls: other requests are measured against the baseline and the floor
# (and mcp 2.x's own spans, which cover every request).
OTHER_OPERATION_VARIANTS = ("baseline", "floor", "mcp-otel", "sdk-builtin")


@dataclass
class Worker:
    variant: str
    process: subprocess.Popen[str]
    versions: dict[str, str] = field(default_factory=dict)
    samples: list[float] = field(default_factory=list)  # microseconds per call, one per round

    def measure(self, calls: int) -> None:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(f"{calls}\n")
        self.process.stdin.flush()
        self.samples.append(json.loads(self.process.stdout.readline())["ns_per_call"] / 1000)

    def median(self) -> float:
        return statistics.median(self.samples)


def start(python: str, variant: str, transport: str, operation: str) -> Worker:
    process = subprocess.Popen(
        [python, str(WORKER), variant, transport, operation],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    ready = process.stdout.readline()
    if not ready:
        raise RuntimeError(f"worker {variant} over {transport} did not start")
    return Worker(variant, process, json.loads(ready)["versions"])


def measure(
    python: str, major: int, transport: str, operation: str, rounds: int, calls: int, seed: int
) -> list[Worker]:
    variants = [
        variant for variant in VARIANTS[major] if operation == "tools/call" or variant in OTHER_OPERATION_VARIANTS
    ]
    what = f"mcp {major}.x {operation} over {transport}"
    print(f"bench: {what}: starting {len(variants)} workers ...", file=sys.stderr)
    workers = [start(python, variant, transport, operation) for variant in variants]
    order = random.Random(seed)
    try:
        for round_number in range(rounds):
            print(f"bench: {what}: round {round_number + 1}/{rounds}", file=sys.stderr)
            for worker in order.sample(workers, len(workers)):
                worker.measure(calls)
    finally:
        for worker in workers:
            assert worker.process.stdin is not None
            worker.process.stdin.close()
            worker.process.wait(timeout=30)
    return workers


def table(workers: list[Worker]) -> tuple[list[dict[str, Any]], dict[str, float]]:
    by_name = {worker.variant: worker for worker in workers}
    baseline = by_name["baseline"].median()
    overhead = {worker.variant: worker.median() - baseline for worker in workers}
    ours = overhead["mcp-otel"]
    rows = []
    for worker in workers:
        spread = statistics.quantiles(worker.samples, n=4) if len(worker.samples) >= 4 else [0, 0, 0]
        rows.append(
            {
                "variant": worker.variant,
                "description": DESCRIPTIONS[worker.variant],
                "median_us": round(worker.median(), 1),
                "iqr_us": round(spread[2] - spread[0], 1),
                "overhead_us": round(overhead[worker.variant], 1),
            }
        )
    ratios = {name: ours / overhead[name] for name in ("floor", *PEERS) if name in overhead and overhead[name] > 0}
    return rows, ratios


def markdown(results: list[dict[str, Any]], command: str) -> str:
    lines = [
        "# Benchmarks",
        "",
        "Per-request cost of `tools/call` (and of `resources/read`, a request that is not a tool call),",
        "client and server in one process (in-memory), or the server as a stdio subprocess set up like",
        "the client. Each variant runs in its own worker process;",
        "rounds are interleaved in one run and the median of the rounds is reported. Overheads are",
        "over the uninstrumented baseline of the same run; compare ratios, not absolute times.",
        "",
        f"Machine: {platform.machine()}, {platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}, {_cores()} cores (shared, noisy).",
        f"Command: `{command}`",
        "",
    ]
    for result in results:
        lines += [
            f"## mcp {result['major']}.x, {result['transport']}, `{result['operation']}`",
            "",
            f"Versions: {', '.join(f'{name} {version}' for name, version in sorted(result['versions'].items()))}. "
            f"{result['rounds']} rounds of {result['calls']} calls.",
            "",
            "| variant | what | median µs/call | IQR µs | overhead µs |",
            "|---|---|---:|---:|---:|",
        ]
        for row in result["rows"]:
            lines.append(
                f"| {row['variant']} | {row['description']} | {row['median_us']:.0f} | {row['iqr_us']:.0f} "
                f"| {row['overhead_us']:+.0f} |"
            )
        lines += ["", "| mcp-otel overhead ÷ | ratio | target |", "|---|---:|---:|"]
        for name, ratio in result["ratios"].items():
            target = TARGETS.get(name)
            verdict = "-" if target is None else (f"<= {target} met" if ratio <= target else f"<= {target} MISSED")
            lines.append(f"| {name} overhead | {ratio:.2f} | {verdict} |")
        lines += ["", *_notes(result), ""]
    return "\n".join(lines)


def _notes(result: dict[str, Any]) -> list[str]:
    """What the numbers of one table can and cannot say."""
    rows = {row["variant"]: row for row in result["rows"]}
    notes = []
    noise = max(row["iqr_us"] for row in result["rows"])
    notes.append(
        f"Spread: rounds differ by up to {noise:.0f} µs (IQR) on this machine; overhead differences "
        "smaller than that are not measured."
    )
    floor = rows["floor"]["overhead_us"]
    for peer in PEERS:
        if peer in rows and rows[peer]["overhead_us"] < floor:
            notes.append(
                f"The floor ({floor:+.0f} µs) already costs more than {peer} ({rows[peer]['overhead_us']:+.0f} µs): "
                f"recording mcp-otel's data (two spans with the semconv attributes, two histogram points) costs "
                f"the SDK more than everything {peer} records, so no instrumentation recording that data can "
                f"meet a target against {peer}."
            )
    return [f"- {note}" for note in notes]


def _cores() -> int:
    import os

    return os.cpu_count() or 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python1", required=True, help="python of the mcp 1.x benchmark environment")
    parser.add_argument("--python2", required=True, help="python of the mcp 2.x benchmark environment")
    parser.add_argument("--transports", nargs="+", default=["memory", "stdio"])
    parser.add_argument("--operations", nargs="+", default=list(OPERATIONS), choices=OPERATIONS)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--markdown", type=Path, default=Path("docs/benchmarks.md"))
    parser.add_argument("--json", type=Path, default=Path("docs/benchmarks.json"))
    args = parser.parse_args()
    results = []
    for operation in args.operations:
        for transport in args.transports:
            for major, python in ((1, args.python1), (2, args.python2)):
                workers = measure(python, major, transport, operation, args.rounds, args.calls, seed=major)
                results.append(_result(workers, major, transport, operation, args.rounds, args.calls))
    command = "make bench"
    args.markdown.parent.mkdir(parents=True, exist_ok=True)
    args.markdown.write_text(markdown(results, command))
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(markdown(results, command))


def _result(workers: list[Worker], major: int, transport: str, operation: str, rounds: int, calls: int) -> Any:
    rows, ratios = table(workers)
    versions = {name: version for worker in workers for name, version in worker.versions.items()}
    return {
        "major": major,
        "transport": transport,
        "operation": operation,
        "rounds": rounds,
        "calls": calls,
        "versions": versions,
        "rows": rows,
        "ratios": {name: round(ratio, 3) for name, ratio in ratios.items()},
    }


if __name__ == "__main__":
    main()
