"""What the tests of the Go module (go/, package mcpotel) with the Python and TypeScript ones
share: the Go programs they start, built once per session from the test module's source
(go/test/internal/cmd/crossagent: the Go SDK's Client; go/test/internal/cmd/crossserver: its
Server; both instrumented with mcpotel), and how their spans are read.

The Go programs write each span as it ends, one JSON line, in the file named by
MCP_OTEL_GO_SPAN_FILE, with the fields tests/node/telemetry.cjs writes: tests/node/conftest.py's
``Span`` is every language's record of one. Without ``go`` these tests are skipped when run by hand,
and fail under make.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcp_otel.semconv import JSONRPC_REQUEST_ID, NETWORK_TRANSPORT
from tests.harness import REPO_ROOT
from tests.node.conftest import Span, ts_spans
from tests.processes import unavailable

# The module of the Go programs (the library module, go/, requires no OpenTelemetry SDK).
GO_TESTS = REPO_ROOT / "go" / "test"
# Where the Go programs write their spans, one JSON line each.
GO_SPAN_FILE_ENV = "MCP_OTEL_GO_SPAN_FILE"
# What the Go SDK's middleware does not show mcpotel (the JSON-RPC request id, the transport):
# never on a Go span, though the peer's span of the same call may have them.
GO_CANNOT_KNOW = (JSONRPC_REQUEST_ID, NETWORK_TRANSPORT)
# The Go server's identity (crossserver: serverInfo).
GO_SERVER_NAME, GO_SERVER_VERSION = "go-server", "1.2.3"


@dataclass(frozen=True)
class Programs:
    """A language's two cross-language test programs (the Go ones; tests/rust's Rust ones)."""

    agent: Path  # crossagent COMMAND [ARGS...]
    server: Path  # crossserver


@pytest.fixture(scope="session")
def go_programs(tmp_path_factory: pytest.TempPathFactory) -> Programs:
    """The Go agent and server, built from go/test (GOFLAGS and the Go caches from the environment)."""
    go = shutil.which("go")
    if go is None:
        unavailable("go is not installed: the Go programs cannot be built")
    directory = tmp_path_factory.mktemp("go-programs")
    programs = Programs(directory / "crossagent", directory / "crossserver")
    for program in (programs.agent, programs.server):
        built = subprocess.run(
            [go, "build", "-o", str(program), f"./internal/cmd/{program.name}"],
            cwd=GO_TESTS,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if built.returncode != 0:
            pytest.fail(f"go build ./internal/cmd/{program.name} failed:\n{built.stderr}")
    return programs


def go_spans(path: Path) -> list[Span]:
    """The spans a Go program wrote to ``path``, in the order they ended (the TypeScript
    programs' format: one reader)."""
    return ts_spans(path)
