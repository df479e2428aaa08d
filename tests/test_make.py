"""`make test`'s account of its time: mk/timed-shell (make's shell while it runs: each recipe line's
target, start, end and CPU) and mk/times.awk (the table the run ends with)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.harness import REPO_ROOT

TIMED_SHELL = REPO_ROOT / "mk" / "timed-shell"
TIMES_AWK = REPO_ROOT / "mk" / "times.awk"
# A line that keeps a core busy for a fifth of a second or more, whatever the machine.
BUSY = f"{sys.executable} -c 'import time; end = time.process_time() + 0.2\nwhile time.process_time() < end: pass'"


def _timed(times: Path, target: str, line: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MCP_OTEL_TIMES": str(times)}
    return subprocess.run([TIMED_SHELL, target, "-c", line], env=env, capture_output=True, text=True, timeout=60)


def _rows(times: Path) -> list[list[str]]:
    return [line.split("\t") for line in times.read_text().splitlines()]


def test_a_timed_line_runs_as_make_would_run_it_and_its_time_is_written(tmp_path: Path) -> None:
    times = tmp_path / "times.tsv"
    ran = _timed(times, "unit-mcp2", f'{BUSY}; echo "seen: ${{MCP_OTEL_TIMES-none}}"; echo oops >&2; exit 3')
    assert (ran.returncode, ran.stdout, ran.stderr) == (3, "seen: none\n", "oops\n")
    ((target, start, end, ticks),) = _rows(times)
    assert target == "unit-mcp2"
    assert 0.2 <= float(end) - float(start) < 30
    assert 20 <= int(ticks) <= (float(end) - float(start)) * 100 * (os.cpu_count() or 1) + 1


def test_a_line_that_runs_a_timed_make_counts_no_cpu_of_its_own(tmp_path: Path) -> None:
    times = tmp_path / "times.tsv"
    ran = _timed(times, "unit-once", f"{BUSY} MCP_OTEL_TIMES={times}")
    assert ran.returncode == 0
    ((target, _, _, ticks),) = _rows(times)
    assert (target, ticks) == ("unit-once", "0")


def test_the_table_gives_each_targets_span_wall_and_cpu_the_first_to_start_first(tmp_path: Path) -> None:
    times = tmp_path / "times.tsv"
    lines = [
        ("unit-mcp2", 1000.0, 1600.0, 50000),
        ("prepare-venv", 940.0, 1000.0, 3000),
        ("unit-mcp2", 1600.0, 2440.0, 30000),
        ("go-test", 1000.0, 1090.0, 12345),
    ]
    times.write_text("".join(f"{target}\t{start}\t{end}\t{ticks}\n" for target, start, end, ticks in lines))
    table = subprocess.run(["awk", "-f", TIMES_AWK, times], capture_output=True, text=True, check=True).stdout
    rows = [line.split() for line in table.splitlines()[2:]]
    assert rows == [
        ["target", "start", "end", "wall", "CPU"],
        ["prepare-venv", "0.0", "1.0", "60", "30"],
        ["unit-mcp2", "1.0", "25.0", "1440", "800"],
        ["go-test", "1.0", "2.5", "90", "123"],
        ["all", "0.0", "25.0", "1500", "953"],
    ]
