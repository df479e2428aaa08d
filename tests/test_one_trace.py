"""`make one-trace` (docs/index.md): each call printed as both sides saw it, joined in one trace."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.harness import REPO_ROOT

pytestmark = pytest.mark.mcp2  # the example server is an mcp 2.x MCPServer

EXPECTED_TABLE = """\
call               CLIENT span (agent)  SERVER span (server)  same trace
initialize         ok                   ok                    yes
tools/list         ok                   ok                    yes
tools/call add     ok                   ok                    yes
tools/call divide  failed tool_error    failed tool_error     yes
tools/call slow    failed timeout       cancelled client      yes
tools/call slow    cancelled caller     cancelled client      yes
"""


def test_one_trace_output() -> None:
    completed = subprocess.run(
        [sys.executable, "examples/one_trace.py"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.endswith("\n" + EXPECTED_TABLE), completed.stdout
