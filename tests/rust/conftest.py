"""What the tests of the Rust crate (rust/, mcp-otel for rmcp) with the Python, TypeScript and Go
ones share: the Rust programs they start, built once per session from the crate's examples
(rust/examples/crossagent.rs: rmcp's client; crossserver.rs: its server; both instrumented with
mcp_otel as docs/rust.md shows), and what a Rust span cannot state.

Over streamable HTTP, the programs of the package rust/http (its own Cargo.toml and Cargo.lock,
so that the crate's own `cargo test` never builds reqwest, hyper or axum): httpagent, rmcp's
streamable HTTP client, and httpserver, its streamable HTTP server, built here into the same
target folder.

The Rust programs take the Go programs' command lines and variables, and write each span as it
ends, one JSON line, in the file named by MCP_OTEL_RUST_SPAN_FILE, with the fields
tests/node/telemetry.cjs writes (tests/node/conftest.py's ``ts_spans`` reads them). Without
``cargo`` these tests are skipped when run by hand, and fail under make.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcp_otel.semconv import MCP_REQUEST_OUTCOME
from tests.go.conftest import Programs
from tests.harness import REPO_ROOT
from tests.node.conftest import Span
from tests.processes import no_python_sdk, unavailable

# The crate; its examples are the programs.
RUST_CRATE = REPO_ROOT / "rust"
# The package of the programs over streamable HTTP.
RUST_HTTP_PACKAGE = RUST_CRATE / "http"
# Where the Rust programs write their spans, one JSON line each.
RUST_SPAN_FILE_ENV = "MCP_OTEL_RUST_SPAN_FILE"
# The version of every session here: each server answers rmcp 3.11's initialize (which asks for
# 2026-07-28) with it, and the Rust server each agent's initialize.
HANDSHAKE = "2025-11-25"
# The version a 2026-07-28 client (the Go SDK's) speaks once its server/discover probe is answered:
# no handshake, no session.
DISCOVERED = "2026-07-28"
# The Rust server's identity (crossserver: serverInfo).
RUST_SERVER_NAME, RUST_SERVER_VERSION = "rust-server", "1.2.3"
# The Go server, as the parameter of a Rust agent's test: no Python SDK in it, so it runs once.
GO_SERVER = pytest.param("go", marks=no_python_sdk)


# Where every Rust program is built: the checkout's rust/target, the folder `make rust-test` builds in.
RUST_TARGET = RUST_CRATE / "target"


def cargo_build(package: Path, *what: str) -> Path:
    """``cargo build --locked WHAT`` in ``package`` into RUST_TARGET: the folder of the programs."""
    cargo = shutil.which("cargo")
    if cargo is None:
        unavailable("cargo is not installed: the Rust programs cannot be built")
    built = subprocess.run(
        [cargo, "build", *what, "--locked"],
        cwd=package,
        env={**os.environ, "CARGO_TARGET_DIR": str(RUST_TARGET)},
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if built.returncode != 0:
        pytest.fail(f"cargo build {' '.join(what)} in {package.name} failed:\n{built.stderr}")
    return RUST_TARGET / "debug"


@pytest.fixture(scope="session")
def rust_programs() -> Programs:
    """The Rust agent and server, built from the crate's examples (locked: rust/Cargo.lock), with all
    features as `make rust-test`'s `cargo test --all-features` builds them: one build serves both
    (without, rmcp and what depends on it built again)."""
    examples = cargo_build(RUST_CRATE, "--examples", "--all-features") / "examples"
    return Programs(examples / "crossagent", examples / "crossserver")


# The rmcp versions the crate supports, newest and lowest: rust/http's lock pins the first,
# rust/http/lowest's (the same sources, its programs named -lowest) the second.
NEWEST_RMCP, LOWEST_RMCP = "3.11", "3.1"


@dataclass(frozen=True)
class RmcpPrograms(Programs):
    """Rust programs built on ``rmcp``, the version their lock pins."""

    rmcp: str = NEWEST_RMCP

    @property
    def cancels_dropped_calls(self) -> bool:
        """rmcp sends notifications/cancelled for a call whose future is dropped from 3.6 on."""
        return self.rmcp != LOWEST_RMCP


RUST_HTTP_BUILDS = {NEWEST_RMCP: (RUST_HTTP_PACKAGE, ""), LOWEST_RMCP: (RUST_HTTP_PACKAGE / "lowest", "-lowest")}


@pytest.fixture(scope="session", params=list(RUST_HTTP_BUILDS))
def rust_http_programs(request: pytest.FixtureRequest) -> RmcpPrograms:
    """The Rust agent and server over streamable HTTP, built from rust/http on each rmcp version
    (locked: rust/http/Cargo.lock, rust/http/lowest/Cargo.lock)."""
    package, suffix = RUST_HTTP_BUILDS[request.param]
    programs = cargo_build(package, "--bins")
    return RmcpPrograms(programs / f"httpagent{suffix}", programs / f"httpserver{suffix}", request.param)


def assert_rmcps_own(
    agent: Sequence[Span], server: Sequence[Span], clients: Sequence[Span], calls: Sequence[Any]
) -> None:
    """rmcp sends the handshake and the cancel of each dropped call itself, past the client: the
    agent's wrapped transport traces them. The handshake is one trace with the server's; each cancel
    is under the call it cancels."""
    assert [span.name for span in clients] == [f"tools/call {tool}" for tool, *_ in calls]
    given_up = sum(abort is not None for _, abort, *_ in calls)
    assert sorted(span.name for span in agent if span not in clients) == [
        "initialize",
        *["notifications/cancelled"] * given_up,
        "notifications/initialized",
    ]
    (handshake,) = (span for span in agent if span.name == "initialize")
    (received,) = (span for span in server if span.name == "initialize" and span.kind == "SERVER")
    assert (handshake.kind, handshake.parent_id) == ("CLIENT", None)
    assert (received.trace_id, received.parent_id) == (handshake.trace_id, handshake.span_id)
    cancels = [span.parent_id for span in agent if span.name == "notifications/cancelled"]
    assert cancels == [span.span_id for span in clients if span.attributes.get(MCP_REQUEST_OUTCOME) == "cancelled"]
