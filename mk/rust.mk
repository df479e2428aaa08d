# Rust: the crate mcp-otel (rust/, library mcp_otel) for the Rust MCP SDK, rmcp.
#   make rust-test  cargo fmt --check and cargo clippy -D warnings (pedantic; without and with the
#                   feature streamable-http-server), then cargo test (all features) on the
#                   newest versions it supports (rust/Cargo.lock: rmcp 3.11, opentelemetry 0.33) and
#                   on the lowest (rust/lowest/Cargo.lock: rmcp 3.1.0, opentelemetry 0.31), both
#                   locked, one target folder for both; rust-frameworks before them; then fmt
#                   and clippy of rust/http (the programs over streamable HTTP that tests/rust
#                   runs, on rmcp 3.11, and on 3.1 from rust/http/lowest)
#   make rust-frameworks  fmt, clippy and test of rust/frameworks: ADK-Rust's agent loop (a scripted
#                   model) over an rmcp server instrumented by the crate, its own MCP toolset and
#                   an ADK tool over mcp_otel::Client, locked, in the same target folder
#   make rust-bench  what the crate costs a tools/call beside the same spans and points made by hand
#                   (rust/benches/cost.rs): instructions (valgrind) and the calling thread's CPU,
#                   in memory and over stdio, instructions per request served over HTTP without a
#                   session, and resident memory over 100,000 calls, into docs/benchmarks-rust.txt
# Needs: cargo with rustfmt and clippy (Rust 1.88 or later; rust-frameworks 1.95, ADK-Rust's
# minimum); crates come from crates.io.

.PHONY: rust-test rust-frameworks rust-bench

# Cargo's lines start with + so that it takes its jobs from make's jobserver (TEST_JOBS in all),
# not two more of its own beside make's (so `make -n rust-test` runs them too).
CARGO_LOCKED := CARGO_TARGET_DIR=$(CURDIR)/rust/target cargo
# rust-frameworks first, never beside the crate's own runs: cargo locks the target folder they share.
# Its first step rather than a prerequisite, so that `make test` starts both in rust-test's turn.
rust-test:
	@+$(SUBMAKE) rust-frameworks
	@echo ">> rust: fmt, clippy (newest), test (newest, lowest)"
	cd rust && cargo fmt --check
	+cd rust && $(CARGO_LOCKED) clippy --locked --all-targets -- -D warnings
	+cd rust && $(CARGO_LOCKED) clippy --locked --all-targets --all-features -- -D warnings
	+cd rust && $(CARGO_LOCKED) test --locked --all-features
	+cd rust/lowest && $(CARGO_LOCKED) test --locked
	cd rust/http && cargo fmt --check
	+cd rust/http && $(CARGO_LOCKED) clippy --locked --all-targets -- -D warnings

rust-frameworks:
	@echo ">> rust/frameworks: fmt, clippy, test (ADK-Rust)"
	cd rust/frameworks && cargo fmt --check
	+cd rust/frameworks && $(CARGO_LOCKED) clippy --locked --all-targets -- -D warnings
	+cd rust/frameworks && $(CARGO_LOCKED) test --locked

RUST_BENCH := $(CARGO_LOCKED) bench --locked --features streamable-http-server --bench cost
rust-bench:
	cd rust && $(RUST_BENCH) --no-run
	cd rust && { $(RUST_BENCH) -- instructions 3 500 && $(RUST_BENCH) -- http 3 500 && \
	  $(RUST_BENCH) -- cpu 400 100 && $(RUST_BENCH) -- memory 100000; } | tee $(CURDIR)/docs/benchmarks-rust.txt
