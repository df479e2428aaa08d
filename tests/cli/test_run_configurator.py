"""The exit budget of the OTLP exporters (run_configurator): nothing changes until the process
exits; then an export that would start after the budget fails at once, and one still running at
it is abandoned."""

from __future__ import annotations

import time
from typing import Any

from mcp_otel.run_configurator import _BoundedExporter, _ExitBudget


class SlowExporter:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.exports = 0
        self.shut = False

    def export(self, batch: Any) -> str:
        self.exports += 1
        time.sleep(self.seconds)
        return "SUCCESS"

    def shutdown(self) -> None:
        self.shut = True


def test_before_exit_exports_go_straight_through() -> None:
    inner = SlowExporter(0.2)
    exporter = _BoundedExporter(inner, _ExitBudget(0.05), "FAILURE")
    assert exporter.export([]) == "SUCCESS"  # longer than the budget, which has not started
    exporter.shutdown()
    assert inner.shut  # everything else is the exporter's own


def test_at_exit_an_export_ends_by_the_budget() -> None:
    budget = _ExitBudget(0.3)
    inner = SlowExporter(5.0)
    exporter = _BoundedExporter(inner, budget, "FAILURE")
    budget.start()
    started = time.monotonic()
    assert exporter.export([]) == "FAILURE"
    assert time.monotonic() - started < 1.0
    assert exporter.export([]) == "FAILURE"  # the budget is spent: no new export starts
    assert inner.exports == 1


def test_at_exit_a_quick_export_still_succeeds() -> None:
    budget = _ExitBudget(2.0)
    exporter = _BoundedExporter(SlowExporter(0.01), budget, "FAILURE")
    budget.start()
    assert exporter.export([]) == "SUCCESS"
