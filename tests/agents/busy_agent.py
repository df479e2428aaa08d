"""An uninstrumented agent making many calls in memory to the test server; prints, as JSON, what
each call returned and the median time per call. Run under ``opentelemetry-instrument``."""

import json
import statistics
import time

import anyio

from tests.harness import open_session

CALLS = 300


async def main() -> None:
    answers, durations = [], []
    async with open_session("memory") as session:
        for index in range(CALLS):
            started = time.perf_counter()
            result = await session.call_tool("tool_error" if index % 10 == 0 else "ok", {})
            durations.append(time.perf_counter() - started)
            answers.append([block.text for block in result.content])
    print(json.dumps({"answers": answers, "median_call_seconds": statistics.median(durations)}), flush=True)


anyio.run(main)
