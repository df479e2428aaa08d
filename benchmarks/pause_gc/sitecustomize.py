"""On PYTHONPATH of a counted relay (benchmarks/proxy.py): the cyclic collector off from start-up,
so that where its thresholds fall does not move the counted difference (see instructions.py)."""

import gc

gc.disable()
