"""What ``mcp-otel report`` costs per call read: time and peak memory over 10k, 100k and 1M calls.

The files are OTLP JSON lines as ``mcp-otel run`` writes them (``tests/cli/otlp_files.py``: 10,000
calls through the real file exporter, repeated). For each size, in fresh processes: merely parsing
every line (the standard library's ``json``, orjson and msgspec, each into plain objects), and the
report with each parser it has (msgspec hidden from it for the first). Medians of three runs; the
targets: the report within 2x of the fastest bare parse, and peak memory under 100 MB at a million
calls, flat in the number of calls.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SIZES = (10_000, 100_000, 1_000_000)
BASE = 10_000
RUNS = 3
TIME_TARGET = 2.0
MEMORY_TARGET_MB = 100

# Each prints its peak RSS (KiB) on stderr. ``sys.modules["msgspec"] = None`` hides msgspec.
_PEAK = "import resource, sys; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)"
PROGRAMS = {
    "parse, json": f"import json, sys\nfor line in open(sys.argv[1], 'rb'): json.loads(line)\n{_PEAK}",
    "parse, orjson": f"import orjson, sys\nfor line in open(sys.argv[1], 'rb'): orjson.loads(line)\n{_PEAK}",
    "parse, msgspec": (
        "import msgspec, sys\ndecode = msgspec.json.Decoder().decode\n"
        f"for line in open(sys.argv[1], 'rb'): decode(line)\n{_PEAK}"
    ),
    "report, json": (
        "import sys; sys.modules['msgspec'] = None\nfrom mcp_otel.cli.main import main\n"
        f"main(['report', sys.argv[1]])\n{_PEAK}"
    ),
    "report, msgspec": f"import sys\nfrom mcp_otel.cli.main import main\nmain(['report', sys.argv[1]])\n{_PEAK}",
}
PARSES = [name for name in PROGRAMS if name.startswith("parse")]
REPORTS = [name for name in PROGRAMS if name.startswith("report")]


def run(python: str) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from tests.cli.otlp_files import repeat, write_tool_calls

    rows = []
    with tempfile.TemporaryDirectory(prefix="mcp-otel-report-") as directory:
        base = Path(directory) / "base.jsonl"
        write_tool_calls(base, BASE)
        for size in SIZES:
            path = Path(directory) / f"{size}.jsonl"
            repeat(base, path, size // BASE)
            row: dict[str, Any] = {"calls": size, "megabytes": round(path.stat().st_size / 1e6)}
            for name, program in PROGRAMS.items():
                print(f"bench: report: {size:,} calls, {name}", file=sys.stderr)
                runs = [_measure(python, program, path) for _ in range(RUNS)]
                row[name] = {
                    "seconds": round(statistics.median(seconds for seconds, _ in runs), 3),
                    "peak_mb": round(max(peak for _, peak in runs) / 1024, 1),
                }
            path.unlink()
            rows.append(row)
    return {"rows": rows, "versions": _versions(python)}


def _measure(python: str, program: str, path: Path) -> tuple[float, int]:
    started = time.perf_counter()
    completed = subprocess.run([python, "-c", program, str(path)], capture_output=True, text=True, check=True, cwd=ROOT)
    return time.perf_counter() - started, int(completed.stderr.split()[-1])


def _versions(python: str) -> dict[str, str]:
    script = (
        "import json, msgspec, orjson\n"
        "print(json.dumps({'orjson': orjson.__version__, 'msgspec': msgspec.__version__}))"
    )
    return dict(json.loads(subprocess.run([python, "-c", script], capture_output=True, check=True).stdout))


def markdown(result: dict[str, Any]) -> list[str]:
    rows, versions = result["rows"], result["versions"]
    lines = [
        "## `mcp-otel report` (streaming)",
        "",
        "Seconds (median of three fresh processes, start-up included) and peak resident memory, over",
        'OTLP JSON lines as `mcp-otel run` writes them; µs per call in brackets. "parse" merely parses',
        f"every line into plain objects (orjson {versions['orjson']}, msgspec {versions['msgspec']});",
        '"report" is `mcp-otel report` with the standard library, or with msgspec (used when installed:',
        "`pip install 'mcp-otel[fast]'`), which decodes only the span fields a call is made of.",
        *(["", f"**{result['note']}**"] if result.get("note") else []),
        "",
        f"| calls | MB | {' | '.join(PROGRAMS)} | report ÷ fastest parse | peak MB, report |",
        "|---:|---:|" + "---:|" * len(PROGRAMS) + "---:|---:|",
    ]
    for row in rows:
        timed = {name: row[name]["seconds"] for name in PROGRAMS}
        fastest_parse = min(timed[name] for name in PARSES)
        report = min(timed[name] for name in REPORTS)
        cells = [f"{timed[name]:.2f} s ({timed[name] / row['calls'] * 1e6:.1f})" for name in PROGRAMS]
        peak = max(row[name]["peak_mb"] for name in REPORTS)
        lines.append(
            f"| {row['calls']:,} | {row['megabytes']} | {' | '.join(cells)} | {report / fastest_parse:.2f} | {peak} |"
        )
    largest = rows[-1]
    timed = {name: largest[name]["seconds"] for name in PROGRAMS}
    ratio = min(timed[name] for name in REPORTS) / min(timed[name] for name in PARSES)
    peak = max(largest[name]["peak_mb"] for name in REPORTS)
    per_call = [min(row[name]["seconds"] for name in REPORTS) / row["calls"] for row in rows]
    sizes = ", ".join(f"{row['calls']:,}" for row in rows)
    lines += [
        "",
        f"- Target, time within {TIME_TARGET}x of the fastest bare parse at {largest['calls']:,} calls: "
        f"{'met' if ratio <= TIME_TARGET else 'MISSED'} ({ratio:.2f}x).",
        f"- Target, peak memory under {MEMORY_TARGET_MB} MB at {largest['calls']:,} calls: "
        f"{'met' if peak < MEMORY_TARGET_MB else 'MISSED'} ({peak} MB; flat from {rows[0]['calls']:,} calls on).",
        f"- Cost per call must not grow: {', '.join(f'{cost * 1e6:.1f}' for cost in per_call)} µs at "
        f"{sizes} calls (start-up spread over fewer calls at the small end).",
        "",
    ]
    return lines
