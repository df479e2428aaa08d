"""grafana/generate.py, imported by path (it is a script beside the assets it writes)."""

from __future__ import annotations

import importlib.util
import sys

from tests.stack.stack import GRAFANA

_spec = importlib.util.spec_from_file_location("grafana_generate", GRAFANA / "generate.py")
assert _spec is not None
assert _spec.loader is not None
generate = importlib.util.module_from_spec(_spec)
sys.modules["grafana_generate"] = generate
_spec.loader.exec_module(generate)
