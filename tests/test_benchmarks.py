"""The benchmark's own programs still run (``make bench`` is not part of ``make test``): a counted
worker per variant, and the in-flight memory measurement, on the installed SDK major."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from benchmarks.variants import VARIANTS

ROOT = Path(__file__).resolve().parent.parent
MAJOR = int(version("mcp").split(".")[0])
OURS = [
    variant
    for variant in VARIANTS[MAJOR]
    if variant in ("baseline", "floor", "floor-context", "mcp-otel", "mcp-otel-local")
]


@pytest.mark.parametrize("variant", OURS)
@pytest.mark.parametrize("transport", ["memory", "stdio"])
def test_a_counted_worker_makes_its_calls_and_exits(variant: str, transport: str) -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "worker.py"), variant, transport, "tools/call", "5"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == ""


def test_calls_in_flight_are_held_and_their_memory_attributed() -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scale.py"), "in-flight", "mcp-otel", "200"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    measured = json.loads(completed.stdout)
    # Every held call has a CLIENT and a SERVER span of ours: both sides allocated for each.
    assert measured["client_bytes"] > 200 * 500
    assert measured["server_bytes"] > 200 * 500
    assert measured["bytes"] > measured["client_bytes"] + measured["server_bytes"]
