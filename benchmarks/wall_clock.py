"""Wall-clock microseconds per request, per variant, interleaved in one run: absolute orders of
magnitude beside the instruction counts (:mod:`benchmarks.instructions`), which decide.

Every variant runs in its own long-lived worker process (``worker.py``), in the environment of
its SDK major. Rounds are interleaved: each round asks every worker, in a shuffled order, for
the mean time of N sequential calls. Reported: the median over rounds, the IQR, the overhead
over the uninstrumented baseline, and ratios of overheads, never a lone absolute time.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.variants import DESCRIPTIONS, variants_of

WORKER = Path(__file__).with_name("worker.py")
PEERS = ("sdk-builtin", "traceloop", "logfire", "openinference")
# Targets of the first benchmark issue: our overhead against the floor's and against peers'.
TARGETS = {"floor": 1.5, "sdk-builtin": 1.0, "traceloop": 0.5}


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
    variants = variants_of(major, operation)
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


def markdown(results: list[dict[str, Any]]) -> list[str]:
    lines = [
        "## Wall clock",
        "",
        "Microseconds per request, for orders of magnitude: each variant in its own long-lived worker,",
        "rounds interleaved (each round asks every worker, in a shuffled order, for the mean time of N",
        "sequential requests, so drift on the shared machine hits all variants alike); the median over",
        "rounds, and the overhead over the uninstrumented baseline of the same run. Rounds differ by",
        "more than most overhead differences here: the instruction counts above decide.",
        "",
    ]
    for result in results:
        lines += [
            f"### mcp {result['major']}.x, {result['transport']}, `{result['operation']}`",
            "",
            f"Versions: {', '.join(f'{name} {version}' for name, version in sorted(result['versions'].items()))}. "
            f"{result['rounds']} rounds of {result['calls']} calls.",
            *([f"Measured {result['note']}."] if result.get("note") else []),
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
    return lines


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


def run(pythons: dict[int, str], transports: list[str], operations: list[str], rounds: int, calls: int) -> list[Any]:
    results = []
    for operation in operations:
        for transport in transports:
            for major, python in pythons.items():
                workers = measure(python, major, transport, operation, rounds, calls, seed=major)
                rows, ratios = table(workers)
                results.append(
                    {
                        "major": major,
                        "transport": transport,
                        "operation": operation,
                        "rounds": rounds,
                        "calls": calls,
                        "versions": {name: v for worker in workers for name, v in worker.versions.items()},
                        "rows": rows,
                        "ratios": {name: round(ratio, 3) for name, ratio in ratios.items()},
                    }
                )
    return results
