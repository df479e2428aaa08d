"""What the tests of the Rust crate (rust/, mcp-otel for rmcp) with the Python, TypeScript and Go
ones share: the Rust programs they start, built once per session from the crate's examples
(rust/examples/crossagent.rs: rmcp's client; crossserver.rs: its server; both instrumented with
mcp_otel as docs/rust.md shows), and what a Rust span cannot state.

The Rust programs take the Go programs' command lines and variables, and write each span as it
ends, one JSON line, in the file named by MCP_OTEL_RUST_SPAN_FILE, with the fields
tests/node/telemetry.cjs writes (tests/node/conftest.py's ``ts_spans`` reads them). Without
``cargo`` these tests are skipped when run by hand, and fail under make.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from mcp_otel.semconv import JSONRPC_REQUEST_ID, NETWORK_TRANSPORT
from tests.go.conftest import Programs
from tests.harness import REPO_ROOT
from tests.processes import unavailable

# The crate; its examples are the programs.
RUST_CRATE = REPO_ROOT / "rust"
# Where the Rust programs write their spans, one JSON line each.
RUST_SPAN_FILE_ENV = "MCP_OTEL_RUST_SPAN_FILE"
# What a Rust CLIENT span cannot state: a typed call's JSON-RPC id stays inside rmcp, and the
# transport is rmcp's own (docs/rust.md, limits). A SERVER span has the id (rmcp's RequestContext).
RUST_CANNOT_KNOW = (JSONRPC_REQUEST_ID, NETWORK_TRANSPORT)
RUST_SERVER_CANNOT_KNOW = (NETWORK_TRANSPORT,)
# The Rust server's identity (crossserver: serverInfo).
RUST_SERVER_NAME, RUST_SERVER_VERSION = "rust-server", "1.2.3"


@pytest.fixture(scope="session")
def rust_programs() -> Programs:
    """The Rust agent and server, built from the crate's examples (locked: rust/Cargo.lock) into
    the checkout's rust/target, the folder `make rust-test` builds in."""
    cargo = shutil.which("cargo")
    if cargo is None:
        unavailable("cargo is not installed: the Rust programs cannot be built")
    target = RUST_CRATE / "target"
    built = subprocess.run(
        [cargo, "build", "--examples", "--locked"],
        cwd=RUST_CRATE,
        env={**os.environ, "CARGO_TARGET_DIR": str(target)},
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if built.returncode != 0:
        pytest.fail(f"cargo build --examples failed:\n{built.stderr}")
    examples = target / "debug" / "examples"
    return Programs(examples / "crossagent", examples / "crossserver")
