# The README's two commands: `make demo` and `make test`. Each creates what it needs.
# One file per language and one for the stack, each saying what it builds and tests:
#   mk/python.mk  the Python package: virtualenvs, lint, typecheck, unit, lowest, first-hour, docs
#   mk/node.mk    the TypeScript package (node/) and the npm packages the Python suites start
#   mk/go.mk      the Go module (go/)
#   mk/rust.mk    the Rust crate (rust/)
#   mk/stack.mk   the collector, Jaeger and the other Go programs in .cache/bin; stack-up/down
#   mk/system.mk  the system packages (apt-get), one list installed in one place
include mk/system.mk mk/python.mk mk/node.mk mk/go.mk mk/rust.mk mk/stack.mk

.PHONY: demo one-trace test checks bench clean

# Every check and every suite. Those that share nothing run side by side, TEST_JOBS at a time,
# each one's output printed whole when it ends: the Python suites (each in its own virtualenv and
# temporary folder, servers on ports the system hands out), the Go, TypeScript and Rust suites (their
# own programs, their own ports), and the builds the suites do not wait for. first-hour runs after the
# suites that read node/dist (its `npm pack` rebuilds it). The longest first, and unit-once early:
# it waits for the stack's programs. Two at a time by default, one per core; `make test TEST_JOBS=1`
# runs them one after another, `TEST_JOBS=3` three at once.
# Every recipe line is timed (mk/timed-shell into .cache/test-times.tsv), and the run ends with a
# table of where its minutes and CPU went (mk/times.awk), whether it passed or not.
TEST_JOBS ?= 2
CHECKS := unit-mcp2 unit-once unit-mcp1 go-test node-test rust-test lowest typecheck lint docs-check first-hour
TEST_TIMES := $(CURDIR)/.cache/test-times.tsv
test:
	@mkdir -p $(dir $(TEST_TIMES)) && rm -f $(TEST_TIMES)
	@status=0; MCP_OTEL_TIMES=$(TEST_TIMES) $(MAKE) --no-print-directory --jobs=$(TEST_JOBS) --output-sync=target checks \
		FIRST_HOUR_AFTER="unit-mcp1 unit-mcp2 unit-once node-test" || status=$$?; \
		awk -f mk/times.awk $(TEST_TIMES); exit $$status
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
bench: system goproxy third-party $(VENV)/docs/.installed $(VENV)/bench-mcp1/.installed $(VENV)/mcp1/.installed $(VENV)/mcp2/.installed stack node
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
