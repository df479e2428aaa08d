"""The benchmark tables people would rather look at than read, drawn from ``docs/benchmarks.json``
into ``docs/img/*.svg`` (shown in ``docs/performance.md``). Run by ``make bench`` after the
measurements, with the documentation's virtualenv (matplotlib); ``--json``/``--output`` to draw
another run. The files are the same for the same figures (no dates, fixed ids)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.pyplot as plt

matplotlib.rcParams["svg.hashsalt"] = "mcp-otel"  # element ids the same from run to run
_SAVE = {"format": "svg", "metadata": {"Date": None}, "bbox_inches": "tight"}
# The variants the instruction plot compares (the table has the peers and the rest).
_INSTRUCTION_VARIANTS = ("floor", "floor-propagated", "mcp-otel", "sdk-builtin")


def instructions(entries: list[dict[str, Any]], output: Path) -> None:
    """Instructions per tool call over the uninstrumented call: the floor, the least that
    propagates, mcp-otel (and mcp 2.x's own spans), per SDK major and transport."""
    groups = [entry for entry in entries if entry["operation"] == "tools/call"]
    figure, axes = plt.subplots(figsize=(8, 0.9 + 0.9 * len(groups)))
    labels, values, colors = [], [], []
    palette = dict(zip(_INSTRUCTION_VARIANTS, ("#9e9e9e", "#607d8b", "#1565c0", "#ef6c00"), strict=True))
    for entry in groups:
        rows = {row["variant"]: row["a"] for row in entry["rows"]}
        for variant in _INSTRUCTION_VARIANTS:
            if variant in rows:
                labels.append(f"mcp {entry['major']}.x {entry['transport']}: {variant}")
                values.append((rows[variant] - rows["baseline"]) / 1000)
                colors.append(palette[variant])
    positions = range(len(labels))[::-1]
    axes.barh(list(positions), values, color=colors)
    axes.set_yticks(list(positions), labels, fontsize=8)
    axes.set_xlabel("thousand instructions per tool call over the uninstrumented call (cachegrind)")
    for position, value in zip(positions, values, strict=True):
        axes.text(value, position, f" {value:,.0f}k", va="center", fontsize=7)
    figure.savefig(output, **_SAVE)
    plt.close(figure)


def latency(rows: dict[str, list[float]], title: str, output: Path) -> None:
    """p50 and p99 per request through each relay, in milliseconds."""
    figure, axes = plt.subplots(figsize=(8, 0.6 + 0.5 * len(rows)))
    names = list(rows)[::-1]
    positions = range(len(names))
    height = 0.38
    p50 = [rows[name][0] / 1000 for name in names]
    p99 = [rows[name][1] / 1000 for name in names]
    axes.barh([p + height / 2 for p in positions], p50, height, label="p50", color="#1565c0")
    axes.barh([p - height / 2 for p in positions], p99, height, label="p99", color="#90caf9")
    axes.set_yticks(list(positions), names, fontsize=8)
    axes.set_xlabel(f"{title}, ms per request")
    axes.legend(fontsize=8, loc="lower right")
    figure.savefig(output, **_SAVE)
    plt.close(figure)


def relays(result: dict[str, Any], output: Path) -> None:
    """Per upstream, what each HTTP relay adds per request: p50 latency over direct, and its CPU."""
    labels, added, cpu = [], [], []
    for upstream, figures in result["upstreams"].items():
        direct = figures["latency_us"]["direct"][0]
        for path, (p50, _) in figures["latency_us"].items():
            if path != "direct":
                labels.append(f"{upstream.split(' ')[0]}: {path}")
                added.append((p50 - direct) / 1000)
                cpu.append(figures["cpu_us"][path] / 1000)
    figure, axes = plt.subplots(figsize=(8, 0.6 + 0.5 * len(labels)))
    positions = range(len(labels))[::-1]
    height = 0.38
    axes.barh([p + height / 2 for p in positions], added, height, label="added p50 latency", color="#1565c0")
    axes.barh([p - height / 2 for p in positions], cpu, height, label="CPU per request", color="#ef6c00")
    axes.set_yticks(list(positions), labels, fontsize=8)
    axes.set_xlabel("tools/call over streamable HTTP, ms per request through each relay")
    axes.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2)
    figure.savefig(output, **_SAVE)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path, default=Path("docs/benchmarks.json"))
    parser.add_argument("--output", type=Path, default=Path("docs/img"))
    args = parser.parse_args()
    results = json.loads(args.json.read_text())
    args.output.mkdir(parents=True, exist_ok=True)
    if "instructions" in results:
        instructions(results["instructions"], args.output / "instructions.svg")
    if "proxy" in results:
        latency(results["proxy"]["latency_us"], "tools/call over stdio", args.output / "stdio-proxy.svg")
    if "http-proxy" in results:
        relays(results["http-proxy"], args.output / "http-proxy.svg")


if __name__ == "__main__":
    main()
