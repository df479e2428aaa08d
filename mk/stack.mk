# The stack: the programs the stack tests (tests/stack, tests/node/test_stack.py) and `make
# stack-up` run, without Docker, on 127.0.0.1.
#   make stack      what the tests run: the collector, Jaeger (unoptimized builds, below), Prometheus
#                   (mk/system.mk) and Grafana's TraceQL grammar
#   make collector, make jaeger, make goproxy   one program each
#   make stack-up   Prometheus :9090 (UI, rules, alerts), Jaeger's query API and Monitor data
#                   :16686 (no UI: the module proxy's Jaeger has no UI assets; the Docker stack
#                   has it), the collector's OTLP :4317/:4318; then `make stack-demo`;
#                   `make stack-down` stops it
# The Go programs are built from the Go module proxy into .cache/bin (ignored) and reused while
# their go.mod/go.sum/sources are unchanged: cold builds take minutes, warm ones are a no-op.
# The tests run the collector and Jaeger built without optimizations (-gcflags=all=-N -l), in
# .cache/bin/test: a cold build takes a third less CPU (the collector 517 CPU-s against 722, Jaeger
# 624 against 954, in cold `make test` runs, 2026-12-07), and no test measures their speed.
# `make collector`, `make jaeger`, stack-up and `make bench` (a gateway's cost per span) run the
# optimized ones in .cache/bin.
# Needs: go on PATH.

.PHONY: stack collector jaeger goproxy stack-up stack-demo stack-down

STACK_BIN := .cache/bin
TEST_STACK_BIN := $(STACK_BIN)/test
GO_BUILD = env GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' $(if $(filter $(TEST_STACK_BIN)/%,$@),-gcflags='all=-N -l')

$(STACK_BIN)/mcp-otelcol $(TEST_STACK_BIN)/mcp-otelcol: collector-config/build/otelcol/go.mod collector-config/build/otelcol/go.sum collector-config/build/otelcol/*.go
	@echo ">> building the collector (v0.161.0) into $@"
	@mkdir -p $(@D)
	@start=$$(date +%s); cd collector-config/build/otelcol && $(GO_BUILD) -o $(CURDIR)/$@ . && echo ">> built $@ in $$(( $$(date +%s) - start )) s"

$(STACK_BIN)/jaeger $(TEST_STACK_BIN)/jaeger: collector-config/build/jaeger/go.mod collector-config/build/jaeger/go.sum
	@echo ">> building Jaeger v2 (github.com/jaegertracing/jaeger v1.75.0 cmd/jaeger) into $@"
	@mkdir -p $(@D)
	@start=$$(date +%s); cd collector-config/build/jaeger && $(GO_BUILD) -o $(CURDIR)/$@ github.com/jaegertracing/jaeger/cmd/jaeger && echo ">> built $@ in $$(( $$(date +%s) - start )) s"

# The HTTP proxy benchmark's control: Go's standard library reverse proxy (benchmarks/goproxy).
$(STACK_BIN)/goproxy: benchmarks/goproxy/go.mod benchmarks/goproxy/main.go
	@mkdir -p $(STACK_BIN)
	cd benchmarks/goproxy && $(GO_BUILD) -o $(CURDIR)/$@ .

collector: $(STACK_BIN)/mcp-otelcol
jaeger: $(STACK_BIN)/jaeger
goproxy: $(STACK_BIN)/goproxy

# Grafana's TraceQL grammar, to parse the dashboards' TraceQL (tests/stack/test_dashboard.py).
TRACEQL := tests/stack/traceql/node_modules/.package-lock.json
$(TRACEQL): tests/stack/traceql/package.json tests/stack/traceql/package-lock.json
	cd tests/stack/traceql && npm ci --no-audit --no-fund --loglevel=error

# Everything the stack tests run.
stack: $(TEST_STACK_BIN)/mcp-otelcol $(TEST_STACK_BIN)/jaeger system $(TRACEQL)

stack-up: collector jaeger system
	collector-config/stack.sh up

stack-demo: $(VENV)/mcp2/.installed
	OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 OTEL_SERVICE_NAME=mcp-demo-agent \
		$(VENV)/mcp2/bin/mcp-otel run --output .cache/demo-telemetry.jsonl -- python examples/demo/agent.py

stack-down:
	collector-config/stack.sh down
