"""How the instrumentation's costs grow with the work: memory per call in flight, and the cost per
call with 100 vs 10,000 distinct tool names.

* In flight: 10,000 concurrent tool calls, client and server in one process (in memory), every
  call held in the server's handler until all are; the memory traced by ``tracemalloc`` then,
  over what the same process had before the calls, for the baseline and for mcp-otel. mcp-otel's
  share is split by side: allocations made under ``mcp_otel/instrumentation/client.py`` or
  ``mcp_otel/instrumentation/server.py`` frames (the spans the SDK makes for us included); the front ends' own hooks
  count as other.
* Names: instructions per call (cachegrind, as :mod:`benchmarks.instructions`) when the calls
  cycle through 100 and through 10,000 tool names. mcp-otel admits the first 100 names to its
  metrics (``max_metric_names``) and reads the rest as ``_OTHER``, so its cost must stay flat.

    python benchmarks/scale.py in-flight VARIANT CALLS   (one measurement, JSON on stdout)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import instructions
from benchmarks.server import TOOLS_ENV

IN_FLIGHT = 10_000
NAMES = (100, 10_000)
FRAMES = 25  # deep enough to see our frame under the SDK's span construction


def run(pythons: dict[int, str]) -> dict[str, Any]:
    memory = {}
    for major, python in pythons.items():
        for variant in ("baseline", "mcp-otel"):
            print(f"bench: scale: mcp {major}.x, {IN_FLIGHT:,} calls in flight, {variant}", file=sys.stderr)
            completed = subprocess.run(
                [python, __file__, "in-flight", variant, str(IN_FLIGHT)], capture_output=True, text=True, check=True
            )
            memory[f"{major}/{variant}"] = json.loads(completed.stdout)
    jobs = {
        (major, variant, names): instructions.Job(
            python, variant, "memory", "tools/call", env=((TOOLS_ENV, str(names)),)
        )
        for major, python in pythons.items()
        for variant in ("baseline", "mcp-otel")
        for names in NAMES
    }
    print(f"bench: scale: {2 * len(jobs)} runs under cachegrind ...", file=sys.stderr)
    counted = instructions.per_request(list(jobs.values()))
    per_call = {f"{major}/{variant}/{names}": round(counted[job]) for (major, variant, names), job in jobs.items()}
    return {"in_flight": IN_FLIGHT, "memory": memory, "names": per_call}


async def hold(variant: str, calls: int) -> dict[str, int]:
    import anyio

    from benchmarks import server
    from benchmarks.variants import set_up
    from benchmarks.worker import session

    set_up(variant, "memory")
    # Tracebacks deep enough to tell whose allocation it is, where there is something to tell.
    frames = FRAMES if variant == "mcp-otel" else 1
    hold = server.Hold(calls)
    async with session("memory", variant, server.build(hold)) as client_session:
        await client_session.list_tools()
        tracemalloc.start(frames)
        before = tracemalloc.take_snapshot()
        async with anyio.create_task_group() as group:
            for _ in range(calls):
                group.start_soon(client_session.call_tool, "ok", {})
            await hold.all_held.wait()
            held = tracemalloc.take_snapshot()
            hold.release.set()
        tracemalloc.stop()
    grown = held.compare_to(before, "traceback" if frames > 1 else "filename")
    sides = {"client": 0, "server": 0, "other": 0}
    for stat in grown:
        side = _instrumentation_side(stat.traceback) if frames > 1 else None
        if side is not None:
            sides[side] += stat.size_diff
    return {"bytes": sum(stat.size_diff for stat in grown), **{f"{side}_bytes": n for side, n in sides.items()}}


_OURS = ("/mcp_otel/", "/opentelemetry/", "/wrapt/")
_THEIRS = ("/mcp/", "/anyio/", "/pydantic/", "/pydantic_core/", "/benchmarks/")


def _instrumentation_side(traceback: tracemalloc.Traceback) -> str | None:
    """Whose allocation it is: the innermost frame of a known package decides (the SDK's call runs
    inside our wrapper, so an outer frame of ours says nothing). Ours: the side of the innermost
    ``mcp_otel`` frame (``client`` or ``server``, else ``other``); the SDK's: ``None``."""
    frames = [frame.filename for frame in reversed(traceback)]  # innermost first
    for index, filename in enumerate(frames):
        if any(part in filename for part in _THEIRS):
            return None
        if any(part in filename for part in _OURS):
            for outer in frames[index:]:
                if "/mcp_otel/" in outer:
                    return next((side for side in ("client", "server") if outer.endswith(f"{side}.py")), "other")
            return "other"
    return None


def markdown(result: dict[str, Any]) -> list[str]:
    calls = result["in_flight"]
    lines = [
        "## Scale",
        "",
        f"Memory per call in flight ({calls:,} concurrent tool calls, in memory, held in the server's handler;",
        "`tracemalloc`, so Python objects only). mcp-otel's share is split by the side whose code made the",
        "allocation (its spans included).",
        "",
        "| SDK | baseline, bytes per call | mcp-otel, bytes per call | mcp-otel over baseline "
        "| made by our client side | our server side | our other code |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    memory = result["memory"]
    for major in (1, 2):
        base, ours = memory.get(f"{major}/baseline"), memory.get(f"{major}/mcp-otel")
        if base is None or ours is None:
            continue
        lines.append(
            f"| mcp {major}.x | {base['bytes'] / calls:,.0f} | {ours['bytes'] / calls:,.0f} "
            f"| {(ours['bytes'] - base['bytes']) / calls:+,.0f} | {ours['client_bytes'] / calls:,.0f} "
            f"| {ours['server_bytes'] / calls:,.0f} | {ours['other_bytes'] / calls:,.0f} |"
        )
    names = result["names"]
    lines += [
        "",
        "Instructions per call (cachegrind) with the calls cycling through 100 and through 10,000 tool names:",
        "",
        "| SDK | baseline, 100 names | baseline, 10,000 | mcp-otel overhead, 100 names | mcp-otel overhead, 10,000 "
        "| growth |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for major in (1, 2):
        if f"{major}/baseline/100" not in names:
            continue
        base = {n: names[f"{major}/baseline/{n}"] for n in NAMES}
        over = {n: names[f"{major}/mcp-otel/{n}"] - base[n] for n in NAMES}
        growth = over[NAMES[1]] / over[NAMES[0]] - 1
        lines.append(
            f"| mcp {major}.x | {base[100]:,} | {base[10_000]:,} | {over[100]:+,} | {over[10_000]:+,} | {growth:+.1%} |"
        )
    lines.append("")
    return lines


if __name__ == "__main__":
    import anyio

    if sys.argv[1] == "in-flight":
        print(json.dumps(anyio.run(hold, sys.argv[2], int(sys.argv[3]))))
