"""``mcp-otel report``'s latency sketch: every quantile within 1% of the exact nearest-rank value."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from mcp_otel.run.report import LatencySketch

durations = st.lists(
    st.one_of(st.just(0.0), st.floats(min_value=1e-6, max_value=86_400, allow_nan=False)), min_size=1, max_size=300
)
quantiles = st.sampled_from([0.0, 0.01, 0.5, 0.9, 0.95, 0.99, 1.0])


@given(durations, quantiles)
def test_quantiles_are_within_the_stated_relative_error(values: list[float], quantile: float) -> None:
    sketch = LatencySketch()
    for value in values:
        sketch.add(value)
    exact = sorted(values)[max(math.ceil(quantile * len(values)) - 1, 0)]
    estimate = sketch.quantile(quantile)
    assert estimate is not None
    assert abs(estimate - exact) <= LatencySketch.RELATIVE_ERROR * exact + 1e-12, (estimate, exact)


def test_memory_is_bounded_by_the_range_not_the_count() -> None:
    sketch = LatencySketch()
    for index in range(100_000):
        sketch.add(0.001 + (index % 1000) * 1e-4)  # 1 ms to 101 ms
    assert sketch.count == 100_000
    # log(101 / 1) / log(1.01 / 0.99): about 231 buckets, whatever the number of calls.
    assert len(sketch.buckets) <= math.ceil(math.log(101) / math.log(1.01 / 0.99)) + 1


def test_empty_has_no_quantile() -> None:
    assert LatencySketch().quantile(0.5) is None
