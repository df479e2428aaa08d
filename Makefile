# The README's two commands: `make demo` and `make test`. Each creates what it needs.
PYTHON ?= python3
VENV := .venv
SDKS := mcp1 mcp2
# mcp 1.x runs on the oldest Python we support (requires-python >= 3.10) when this machine has
# one (pyenv's, or python3.10 on PATH), so both ends of the range are tested; else on $(PYTHON).
PYTHON_mcp1 ?= $(or $(wildcard $(shell pyenv prefix 3.10 2>/dev/null)/bin/python3.10),$(shell command -v python3.10 2>/dev/null),$(PYTHON))

.PHONY: demo one-trace test lint typecheck unit lowest docs docs-check bench valgrind haproxy clean collector goproxy jaeger prometheus stack stack-up stack-demo stack-down conformance third-party node node-test go-test first-hour

# One virtualenv per SDK major: mcp 1.x and 2.x cannot share an environment.
$(VENV)/%/.installed: requirements/%.txt requirements/mcp1.txt requirements/mcp2.txt requirements/dev.txt requirements/test.txt pyproject.toml
	@echo ">> creating $(VENV)/$* ($$(head -n 2 requirements/$*.txt | tail -n 1), $$($(or $(PYTHON_$*),$(PYTHON)) --version))"
	@rm -rf $(VENV)/$*
	$(or $(PYTHON_$*),$(PYTHON)) -m venv $(VENV)/$*
	$(VENV)/$*/bin/pip install --quiet --disable-pip-version-check --upgrade pip
	$(VENV)/$*/bin/pip install --quiet --disable-pip-version-check -r requirements/$*.txt -r requirements/dev.txt -e '.[sdk,proxy,desktop]'
	@touch $@

# The lowest versions the package's metadata allows (requirements/lowest-*.txt), on the oldest
# Python: the client and server matrices (the subset below), on each SDK major's lowest release.
# Each file pins the bounds and names the package's extras; the rest resolves as a user's pip would.
LOWEST := lowest-mcp1 lowest-mcp2
LOWEST_TESTS := tests/model tests/instrumentation tests/run tests/proxy/test_jsonc.py tests/client tests/server tests/metrics tests/test_requests.py tests/test_instrumentor.py tests/test_privacy.py
LOWEST_TESTS_lowest-mcp1 := tests/test_tasks.py
LOWEST_TESTS_lowest-mcp2 := tests/test_person_in_the_loop.py tests/cli tests/proxy/test_http_proxy.py tests/proxy/test_upstream.py tests/proxy/test_wrap.py tests/proxy/test_wrap_formats.py

$(VENV)/lowest-%/.installed: requirements/lowest-%.txt requirements/test.txt pyproject.toml
	@rm -rf $(VENV)/lowest-$*
	$(PYTHON_mcp1) -m venv $(VENV)/lowest-$*
	$(VENV)/lowest-$*/bin/pip install --quiet --disable-pip-version-check --upgrade pip
	$(VENV)/lowest-$*/bin/pip install --quiet --disable-pip-version-check -r requirements/lowest-$*.txt -r requirements/test.txt
	@touch $@

lowest_run = echo ">> pytest on the lowest versions, $(1): $$($(VENV)/$(1)/bin/python --version), $$($(VENV)/$(1)/bin/pip freeze --disable-pip-version-check | grep -E '^(mcp|opentelemetry-(api|sdk|instrumentation)|wrapt)==' | tr '\n' ' ')" && $(VENV)/$(1)/bin/pytest $(PYTEST_ARGS) $(LOWEST_TESTS) $(LOWEST_TESTS_$(1))

lowest: $(addprefix $(VENV)/,$(addsuffix /.installed,$(LOWEST)))
	@$(call lowest_run,lowest-mcp1)
	@$(call lowest_run,lowest-mcp2)

# A scripted agent and four MCP servers, run under `mcp-otel run`: the per-server table.
demo: $(VENV)/mcp2/.installed
	$(VENV)/mcp2/bin/mcp-otel run --output .cache/demo-telemetry.jsonl -- python examples/demo/agent.py

# One call per outcome, both sides instrumented: each call as the agent and the server saw it.
one-trace: $(VENV)/mcp2/.installed
	$(VENV)/mcp2/bin/python examples/one_trace.py

lint: $(VENV)/mcp2/.installed
	$(VENV)/mcp2/bin/ruff check src tests examples benchmarks grafana
	$(VENV)/mcp2/bin/ruff format --check src tests examples benchmarks grafana

typecheck: $(addprefix $(VENV)/,$(addsuffix /.installed,$(SDKS)))
	@for sdk in $(SDKS); do echo ">> mypy against $$sdk"; $(VENV)/$$sdk/bin/mypy || exit 1; done

# Each run also gets the other major's Python, for the cross-major tests. The TypeScript build
# (NODE_DIST, defined below: a prerequisite is expanded where its rule is read) is for the
# cross-language tests. tests/first_hour runs once, in first-hour.
unit: $(addprefix $(VENV)/,$(addsuffix /.installed,$(SDKS))) node/dist/esm/index.js
	@echo ">> pytest with mcp 1.x"
	MCP_OTEL_PEER_PYTHON=$(CURDIR)/$(VENV)/mcp2/bin/python $(VENV)/mcp1/bin/pytest --ignore=tests/first_hour $(PYTEST_ARGS)
	@echo ">> pytest with mcp 2.x"
	MCP_OTEL_PEER_PYTHON=$(CURDIR)/$(VENV)/mcp1/bin/python $(VENV)/mcp2/bin/pytest --ignore=tests/first_hour $(PYTEST_ARGS)

# A new user's first hour, per language, as the docs show it: each install page's commands run as
# written in a fresh folder (tests/first_hour/docs_commands.py), from the clone to every outcome.
first-hour: $(VENV)/mcp2/.installed
	@echo ">> a new user's first hour: the docs' commands in fresh folders"
	$(VENV)/mcp2/bin/pytest $(PYTEST_ARGS) tests/first_hour

# The documentation site (mkdocs.yml, docs/), in its own virtualenv. `docs` serves it on
# http://127.0.0.1:8000; `docs-check` builds it strictly (a broken link or anchor fails it).
DOCS_ENV := NO_MKDOCS_2_WARNING=1

$(VENV)/docs/.installed: requirements/docs.txt
	@rm -rf $(VENV)/docs
	$(PYTHON) -m venv $(VENV)/docs
	$(VENV)/docs/bin/pip install --quiet --disable-pip-version-check -r requirements/docs.txt
	@touch $@

docs: $(VENV)/docs/.installed
	$(DOCS_ENV) $(VENV)/docs/bin/mkdocs serve --dev-addr 127.0.0.1:8000

docs-check: $(VENV)/docs/.installed
	$(DOCS_ENV) $(VENV)/docs/bin/mkdocs build --strict --quiet

test: lint typecheck docs-check stack goproxy conformance third-party haproxy node-test go-test first-hour unit lowest

# The TypeScript package (node/, npm package mcp-otel): its dependencies from npm, its ESM and
# CommonJS builds (node/dist), then its lint (tsc, eslint) and tests (the Node test runner) on the
# newest SDKs, again on the lowest ones (node/test/lowest), and with the agent frameworks
# (node/test/frameworks). The Python suites' cross-language tests use the build.
NODE_MODULES := node/node_modules/.package-lock.json
$(NODE_MODULES): node/package.json node/package-lock.json
	cd node && npm ci --no-audit --no-fund --loglevel=error
NODE_DIST := node/dist/esm/index.js
$(NODE_DIST): $(NODE_MODULES) $(wildcard node/src/*.ts node/src/*/*.ts) node/tsconfig.json node/tsconfig.cjs.json node/scripts/build.mjs
	cd node && npm run build
NODE_LOWEST := node/test/lowest/node_modules/.package-lock.json
$(NODE_LOWEST): node/test/lowest/package.json node/test/lowest/package-lock.json
	cd node/test/lowest && npm ci --no-audit --no-fund --loglevel=error
NODE_FRAMEWORKS := node/test/frameworks/node_modules/.package-lock.json
$(NODE_FRAMEWORKS): node/test/frameworks/package.json node/test/frameworks/package-lock.json
	cd node/test/frameworks && npm ci --no-audit --no-fund --loglevel=error
node: $(NODE_DIST)

# The frameworks' tests put `mcp-otel proxy` (the mcp 2.x environment's) in front of @ai-sdk/mcp.
node-test: $(NODE_DIST) $(NODE_LOWEST) $(NODE_FRAMEWORKS) $(VENV)/mcp2/.installed
	cd node && npm run lint
	@echo ">> node --test, newest SDKs"
	cd node && npm test
	@echo ">> node --test, lowest SDKs (node/test/lowest)"
	cd node && npm run test:lowest
	@echo ">> node --test, agent frameworks (node/test/frameworks)"
	cd node/test/frameworks && node --test --test-concurrency=1

# Per-call overhead against the floor and the peers in instructions (cachegrind) and wall clock
# (Python; the TypeScript package and the Go module beside their own floors, CPU per call),
# mcp-otel report's cost per call, the scale figures (docs/benchmarks.md, plots in docs/img/), a gateway's cost per
# span and memory per trace held (docs/gateway-sizing.md), then the full soak. About an hour.
bench: valgrind goproxy third-party $(VENV)/docs/.installed $(VENV)/bench-mcp1/.installed $(VENV)/mcp1/.installed $(VENV)/mcp2/.installed stack
	$(VENV)/mcp2/bin/python benchmarks/run.py --python1 $(VENV)/bench-mcp1/bin/python --python2 $(VENV)/mcp2/bin/python
	$(VENV)/docs/bin/python benchmarks/plots.py
	$(VENV)/mcp2/bin/python benchmarks/gateway_sizing.py --output docs/gateway-sizing.json
	$(MAKE) node
	node benchmarks/node/bench.mjs --output docs/benchmarks-node.json
	cd go && go test -run '^$$' -bench . -benchmem -count 5 ./mcpotel/ | tee $(CURDIR)/docs/benchmarks-go.txt
	MCP_OTEL_SOAK_CALLS=100000 $(VENV)/mcp1/bin/pytest tests/soak -q
	MCP_OTEL_SOAK_CALLS=100000 MCP_OTEL_HTTP_SOAK_REQUESTS=20000 $(VENV)/mcp2/bin/pytest tests/soak -q

# The stack's programs, built from the Go module proxy into an ignored cache and reused while
# their go.mod/go.sum/sources are unchanged. Cold builds take minutes; warm ones are a no-op.
STACK_BIN := .cache/bin
GO_BUILD := env GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags='-s -w'

$(STACK_BIN)/mcp-otelcol: collector-config/build/otelcol/go.mod collector-config/build/otelcol/go.sum collector-config/build/otelcol/*.go
	@echo ">> building the collector (v0.161.0) into $@"
	@mkdir -p $(STACK_BIN)
	@start=$$(date +%s); cd collector-config/build/otelcol && $(GO_BUILD) -o $(CURDIR)/$@ . && echo ">> built $@ in $$(( $$(date +%s) - start )) s"

$(STACK_BIN)/jaeger: collector-config/build/jaeger/go.mod collector-config/build/jaeger/go.sum
	@echo ">> building Jaeger v2 (github.com/jaegertracing/jaeger v1.76.0 cmd/jaeger) into $@"
	@mkdir -p $(STACK_BIN)
	@start=$$(date +%s); cd collector-config/build/jaeger && $(GO_BUILD) -o $(CURDIR)/$@ github.com/jaegertracing/jaeger/cmd/jaeger && echo ">> built $@ in $$(( $$(date +%s) - start )) s"

# The HTTP proxy benchmark's control: Go's standard library reverse proxy (benchmarks/goproxy).
$(STACK_BIN)/goproxy: benchmarks/goproxy/go.mod benchmarks/goproxy/main.go
	@mkdir -p $(STACK_BIN)
	cd benchmarks/goproxy && $(GO_BUILD) -o $(CURDIR)/$@ .

# The Go modules: the library (go/, package mcpotel, on the OpenTelemetry API only) and its tests
# (go/test: the SDK, the test programs). gofmt, go vet and staticcheck, then go test -race, each
# module on the lowest SDK it supports (go.mod) and on the newest (newest.mod).
GO_MODULES := go go/test
$(STACK_BIN)/staticcheck:
	@mkdir -p $(STACK_BIN)
	GOBIN=$(CURDIR)/$(STACK_BIN) go install honnef.co/go/tools/cmd/staticcheck@v0.8.2

go-test: $(STACK_BIN)/staticcheck
	@echo ">> go: gofmt, vet, staticcheck"
	cd go && test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	for m in $(GO_MODULES); do (cd $$m && go vet ./... && go vet -modfile=newest.mod ./...) || exit 1; done
	for m in $(GO_MODULES); do (cd $$m && $(CURDIR)/$(STACK_BIN)/staticcheck ./...) || exit 1; done
	@echo ">> go test -race, the lowest SDK (go.mod) and the newest (newest.mod)"
	for m in $(GO_MODULES); do (cd $$m && go test -race -count=1 ./... && go test -race -count=1 -modfile=newest.mod ./...) || exit 1; done

collector: $(STACK_BIN)/mcp-otelcol
goproxy: $(STACK_BIN)/goproxy
jaeger: $(STACK_BIN)/jaeger

# Prometheus and promtool 2.42 from Debian (apt), when missing.
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
prometheus:
	@command -v prometheus >/dev/null && command -v promtool >/dev/null || { \
		echo ">> installing prometheus from Debian"; \
		$(SUDO) apt-get update -q && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus; }

# valgrind (cachegrind counts the benchmark's instructions) from Debian, when missing.
valgrind:
	@command -v valgrind >/dev/null || { \
		echo ">> installing valgrind from Debian"; \
		$(SUDO) apt-get update -q && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends valgrind; }

# HAProxy 2.6 from Debian, when missing: the load balancer in front of proxy replicas
# (tests/proxy/test_replicas.py, deploy/haproxy/).
haproxy:
	@command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || { \
		echo ">> installing haproxy from Debian"; \
		$(SUDO) apt-get update -q && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends haproxy; }

# Grafana's TraceQL grammar, to parse the dashboards' TraceQL (tests/stack/test_dashboard.py).
TRACEQL := tests/stack/traceql/node_modules/.package-lock.json
$(TRACEQL): tests/stack/traceql/package.json tests/stack/traceql/package-lock.json
	cd tests/stack/traceql && npm ci --no-audit --no-fund --loglevel=error

# The MCP conformance suite and the Node.js 22 it needs, both from npm (tests/conformance).
CONFORMANCE := tests/conformance/node_modules/.package-lock.json
$(CONFORMANCE): tests/conformance/package.json tests/conformance/package-lock.json
	cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error
conformance: $(CONFORMANCE)

# Real third-party MCP servers from npm (tests/third_party; mcp-server-time comes from PyPI).
THIRD_PARTY := tests/third_party/node_modules/.package-lock.json
$(THIRD_PARTY): tests/third_party/package.json tests/third_party/package-lock.json
	cd tests/third_party && npm ci --no-audit --no-fund --loglevel=error
third-party: $(THIRD_PARTY)

# Everything the stack tests run.
stack: collector jaeger prometheus $(TRACEQL)

# The full stack without Docker, on 127.0.0.1 (what docker-compose.yml runs, but Grafana):
# Prometheus :9090 (UI, rules, alerts), Jaeger's query API and Monitor data :16686 (no UI: the
# module proxy's Jaeger has no UI assets; the Docker stack has the UI), collector OTLP
# :4317/:4318. Then `make stack-demo`; `make stack-down` stops it.
stack-up: stack
	collector-config/stack.sh up

stack-demo: $(VENV)/mcp2/.installed
	OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 OTEL_SERVICE_NAME=mcp-demo-agent \
		$(VENV)/mcp2/bin/mcp-otel run --output .cache/demo-telemetry.jsonl -- python examples/demo/agent.py

stack-down:
	collector-config/stack.sh down

clean:
	rm -rf $(VENV)
