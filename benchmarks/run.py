"""The benchmark runner: ``docs/benchmarks.md`` (and ``.json``) from its measurements.

    python benchmarks/run.py --python1 PY --python2 PY [--measure WHAT ...]

* ``instructions``: instructions per request under cachegrind, per variant (the deciding figure);
* ``exemplars``: instructions per tool call under each exemplar filter;
* ``wall-clock``: microseconds per request, interleaved rounds (orders of magnitude);
* ``report``: ``mcp-otel report`` over 10k, 100k and 1M calls: time and peak memory;
* ``scale``: memory per call in flight, and cost per call with 100 vs 10,000 tool names;
* ``proxy``: ``mcp-otel proxy`` against a direct connection and a bare relay (:mod:`benchmarks.proxy`);
* ``http-proxy``: ``mcp-otel proxy`` over streamable HTTP against direct (:mod:`benchmarks.http_proxy`).

Measurements not asked for keep their figures from the previous run (the JSON file), so one
can be re-run alone; the document is always written whole.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import http_proxy, instructions, proxy, report_cost, scale, wall_clock
from benchmarks.variants import OPERATIONS

SECTIONS: dict[str, Callable[[Any], list[str]]] = {
    "instructions": instructions.markdown,
    "exemplars": instructions.exemplars_markdown,
    "wall-clock": wall_clock.markdown,
    "report": report_cost.markdown,
    "scale": scale.markdown,
    "proxy": proxy.markdown,
    "http-proxy": http_proxy.markdown,
}


def measure(what: str, args: argparse.Namespace) -> Any:
    pythons = {1: args.python1, 2: args.python2}
    if what == "instructions":
        return instructions.run(pythons)
    if what == "exemplars":
        return instructions.exemplars(pythons)
    if what == "wall-clock":
        return wall_clock.run(pythons, ["memory", "stdio"], list(OPERATIONS), args.rounds, args.calls)
    if what == "report":
        return report_cost.run(args.python2)
    if what == "proxy":
        return proxy.run(args.python2)
    if what == "http-proxy":
        return http_proxy.run(args.python2)
    return scale.run(pythons)


def markdown(results: dict[str, Any], command: str) -> str:
    lines = [
        "# Benchmarks",
        "",
        "What mcp-otel costs per request against the uninstrumented call, the floor (the same data",
        "recorded by hand) and the peers; what `mcp-otel report` costs per call read; and how the",
        "instrumentation's costs grow with calls in flight and with tool names.",
        "",
        f"Machine: {platform.machine()}, {platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}, {os.cpu_count()} cores (shared, noisy). Command: `{command}`",
        "",
    ]
    for name, section in SECTIONS.items():
        if name in results:
            lines += section(results[name])
    return "\n".join(lines).rstrip() + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python1", required=True, help="python of the mcp 1.x benchmark environment")
    parser.add_argument("--python2", required=True, help="python of the mcp 2.x benchmark environment")
    # --measure with no section: the document rendered again from the JSON, nothing measured.
    parser.add_argument("--measure", nargs="*", choices=list(SECTIONS), default=list(SECTIONS))
    parser.add_argument("--rounds", type=int, default=15, help="wall clock: rounds")
    parser.add_argument("--calls", type=int, default=300, help="wall clock: calls per round")
    parser.add_argument("--markdown", type=Path, default=Path("docs/benchmarks.md"))
    parser.add_argument("--json", type=Path, default=Path("docs/benchmarks.json"))
    args = parser.parse_args()
    previous = json.loads(args.json.read_text()) if args.json.exists() else {}
    results = previous if isinstance(previous, dict) else {}
    for what in args.measure:
        results[what] = measure(what, args)
        args.json.write_text(json.dumps(results, indent=2) + "\n")  # a later failure keeps this one
    document = markdown(results, "make bench")
    args.markdown.write_text(document)
    print(document)


if __name__ == "__main__":
    main()
