# The README's two commands: `make demo` and `make test`. Each creates what it needs.
# One file per language and one for the stack, each saying what it builds and tests:
#   mk/python.mk  the Python package: virtualenvs, lint, typecheck, unit, lowest, first-hour, docs
#   mk/node.mk    the TypeScript package (node/) and the npm packages the Python suites start
#   mk/go.mk      the Go module (go/)
#   mk/rust.mk    the Rust crate (rust/)
#   mk/stack.mk   the collector, Jaeger and the other Go programs in .cache/bin; stack-up/down
#   mk/system.mk  the system packages (apt-get), one list installed in one place
include mk/system.mk mk/python.mk mk/node.mk mk/go.mk mk/rust.mk mk/stack.mk

.PHONY: demo one-trace test prepare checks bench clean

# Every check and every suite. Those that share nothing run side by side, TEST_JOBS at a time,
# each one's output printed whole when it ends: the Python suites (each in its own virtualenv and
# temporary folder, servers on ports the system hands out), the Go, TypeScript and Rust suites (their
# own programs, their own ports). first-hour runs after the suites that read node/dist (its `npm
# pack` rebuilds it). Two at a time by default, one per core; `make test TEST_JOBS=1` runs them one
# after another, `TEST_JOBS=3` three at once.
# In two steps, so that the checks start in CHECKS' order, the longest first: what they share and
# builds in a minute or two (PREPARE), then the checks, told that those are done (--assume-old; the
# phony `system` would run again). Under -j, GNU make starts a target whose prerequisites were
# still building when it first came to it only after every other job it can start: unit-mcp2 (the
# longest) waited 20 minutes behind the stack's and Rust's builds. What only one check needs is
# that check's first step, so it starts in the check's turn: unit-once builds the stack, go-test
# staticcheck, rust-test runs rust-frameworks.
# Every recipe line is timed (mk/timed-shell into .cache/test-times.tsv), and the run ends with a
# table of where its minutes and CPU went (mk/times.awk), whether it passed or not.
TEST_JOBS ?= 2
CHECKS := unit-mcp2 unit-once unit-mcp1 go-test node-test rust-test lowest typecheck lint docs-check first-hour
PREPARE := $(addprefix $(VENV)/,$(addsuffix /.installed,$(SDKS) $(LOWEST) docs)) node third-party conformance \
	system goproxy $(NODE_LOWEST) $(NODE_FRAMEWORKS)
TEST_TIMES := $(CURDIR)/.cache/test-times.tsv
test:
	@mkdir -p $(dir $(TEST_TIMES)) && rm -f $(TEST_TIMES)
	@status=0; export MCP_OTEL_TIMES=$(TEST_TIMES); \
		$(MAKE) --no-print-directory --jobs=$(TEST_JOBS) --output-sync=target prepare && \
		$(MAKE) --no-print-directory --jobs=$(TEST_JOBS) --output-sync=target checks $(addprefix --assume-old=,$(PREPARE)) \
			FIRST_HOUR_AFTER="unit-mcp1 unit-mcp2 unit-once node-test" || status=$$?; \
		awk -f mk/times.awk $(TEST_TIMES); exit $$status
prepare: $(PREPARE) | $(PYTEST_TMP)
# The make a recipe runs itself: it times its lines into the same file (mk/timed-shell hides
# MCP_OTEL_TIMES from the lines it runs, so that a `make` a test runs is not timed).
SUBMAKE = $(MAKE) --no-print-directory $(if $(MCP_OTEL_TIMES),MCP_OTEL_TIMES=$(MCP_OTEL_TIMES))
checks: $(CHECKS)
ifdef MCP_OTEL_TIMES
SHELL := $(CURDIR)/mk/timed-shell
.SHELLFLAGS = $@ -c
endif

# A scripted agent and four MCP servers, run under `mcp-otel run`: the per-server table.
demo: $(VENV)/mcp2/.installed
	$(VENV)/mcp2/bin/mcp-otel run --output .cache/demo-telemetry.jsonl -- python examples/demo/agent.py

# One call per outcome, both sides instrumented: each call as the agent and the server saw it.
one-trace: $(VENV)/mcp2/.installed
	$(VENV)/mcp2/bin/python examples/one_trace.py

# Per-call overhead against the floor and the peers in instructions (cachegrind) and wall clock
# (Python; the TypeScript package and the Go module beside their own floors, CPU per call),
# mcp-otel report's cost per call, the scale figures (docs/benchmarks.md, plots in docs/img/), a gateway's cost per
# span and memory per trace held (docs/gateway-sizing.md), then the full soak. About an hour.
bench: system goproxy third-party $(VENV)/docs/.installed $(VENV)/bench-mcp1/.installed $(VENV)/mcp1/.installed $(VENV)/mcp2/.installed stack collector jaeger node
	$(VENV)/mcp2/bin/python benchmarks/run.py --python1 $(VENV)/bench-mcp1/bin/python --python2 $(VENV)/mcp2/bin/python
	$(VENV)/docs/bin/python benchmarks/plots.py
	$(VENV)/mcp2/bin/python benchmarks/gateway_sizing.py --output docs/gateway-sizing.json
	node benchmarks/node/bench.mjs --output docs/benchmarks-node.json
	cd go && go test -run '^$$' -bench . -benchmem -count 5 ./mcpotel/ | tee $(CURDIR)/docs/benchmarks-go.txt
	$(MAKE) --no-print-directory rust-bench
	MCP_OTEL_SOAK_CALLS=100000 $(VENV)/mcp1/bin/pytest tests/soak -q
	MCP_OTEL_SOAK_CALLS=100000 MCP_OTEL_HTTP_SOAK_REQUESTS=20000 $(VENV)/mcp2/bin/pytest tests/soak -q

clean:
	rm -rf $(VENV)
