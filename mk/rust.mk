# Rust: the crate mcp-otel (rust/, library mcp_otel) for the Rust MCP SDK, rmcp.
#   make rust-test  cargo fmt --check and cargo clippy -D warnings (pedantic), then cargo test on the
#                   newest versions it supports (rust/Cargo.lock: rmcp 3.11, opentelemetry 0.33) and
#                   on the lowest (rust/lowest/Cargo.lock: rmcp 3.1.0, opentelemetry 0.31), both
#                   locked, one target folder for both
# Needs: cargo with rustfmt and clippy (Rust 1.88 or later); crates come from crates.io.

.PHONY: rust-test

CARGO_LOCKED := CARGO_TARGET_DIR=$(CURDIR)/rust/target cargo
rust-test:
	@echo ">> rust: fmt, clippy (newest), test (newest, lowest)"
	cd rust && cargo fmt --check
	cd rust && $(CARGO_LOCKED) clippy --locked --all-targets -- -D warnings
	cd rust && $(CARGO_LOCKED) test --locked
	cd rust/lowest && $(CARGO_LOCKED) test --locked
