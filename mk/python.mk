# Python: the package mcp-otel (src/mcp_otel) on mcp 1.x and 2.x, one virtualenv per SDK major.
#   make lint        ruff check and ruff format --check; the names modules are what spec/ gives
#   make typecheck   mypy against each major (and spec/generate.py)
#   make generate    every language's names module from spec/names.yaml (spec/README.md)
#   make unit        pytest on the newest mcp 1.x and 2.x (unit-mcp1, unit-mcp2), and once what does
#                    not depend on the SDK (unit-once): side by side
#   make lowest      the client and server matrices on the lowest versions the metadata allows
#                    (lowest-mcp1, lowest-mcp2: side by side)
#   make first-hour  a new user's first hour: every install page's commands in fresh folders
#   make docs        serve the documentation site; make docs-check builds it strictly
# The suites start what the other files build: node/dist (mk/node.mk), the npm servers
# (third-party, conformance), the stack's programs (mk/stack.mk), haproxy (mk/system.mk), go.
# Needs: python3 (3.11 or later), and Python 3.10 (pyenv's or on PATH) for the oldest we support.

.PHONY: lint typecheck generate unit unit-mcp1 unit-mcp2 unit-once lowest lowest-mcp1 lowest-mcp2 first-hour docs docs-check

PYTHON ?= python3
VENV := .venv
SDKS := mcp1 mcp2
# mcp 1.x runs on the oldest Python we support (requires-python >= 3.10) when this machine has
# one (pyenv's, or python3.10 on PATH), so both ends of the range are tested; else on $(PYTHON).
PYTHON_mcp1 ?= $(or $(wildcard $(shell pyenv prefix 3.10 2>/dev/null)/bin/python3.10),$(shell command -v python3.10 2>/dev/null),$(PYTHON))
# Each pytest run has its own temporary folder (one per checkout and target, under /tmp: short
# enough for the Unix sockets the tests make), so runs side by side share no file; a program the
# tests start (node, go, a build) that is missing fails them, never skips (MCP_OTEL_REQUIRE_ALL:
# tests/processes.py).
PYTEST_RUNS := unit-mcp1 unit-mcp2 unit-once lowest-mcp1 lowest-mcp2 first-hour
PYTEST_TMP := $(or $(TMPDIR),/tmp)/mcp-otel-pytest-$(shell printf %s '$(CURDIR)' | cksum | cut -d' ' -f1)
$(PYTEST_RUNS): export MCP_OTEL_REQUIRE_ALL := 1
$(PYTEST_RUNS): | $(PYTEST_TMP)
$(PYTEST_TMP):
	mkdir -p $@
pytest_in = $(VENV)/$(1)/bin/pytest --basetemp=$(PYTEST_TMP)/$@ $(PYTEST_ARGS)

# One virtualenv per SDK major: mcp 1.x and 2.x cannot share an environment.
$(VENV)/%/.installed: requirements/%.txt requirements/mcp1.txt requirements/mcp2.txt requirements/dev.txt requirements/test.txt pyproject.toml
	@echo ">> creating $(VENV)/$* ($$(head -n 2 requirements/$*.txt | tail -n 1), $$($(or $(PYTHON_$*),$(PYTHON)) --version))"
	@rm -rf $(VENV)/$*
	$(or $(PYTHON_$*),$(PYTHON)) -m venv $(VENV)/$*
	$(VENV)/$*/bin/pip install --quiet --disable-pip-version-check --upgrade pip
	$(VENV)/$*/bin/pip install --quiet --disable-pip-version-check -r requirements/$*.txt -r requirements/dev.txt -e '.[sdk,proxy,desktop]'
	@touch $@

lint: $(VENV)/mcp2/.installed
	$(VENV)/mcp2/bin/ruff check src tests examples benchmarks grafana spec
	$(VENV)/mcp2/bin/ruff format --check src tests examples benchmarks grafana spec
	$(VENV)/mcp2/bin/python spec/generate.py --check

generate: $(VENV)/mcp2/.installed
	$(VENV)/mcp2/bin/python spec/generate.py

typecheck: $(addprefix $(VENV)/,$(addsuffix /.installed,$(SDKS)))
	@for sdk in $(SDKS); do echo ">> mypy against $$sdk"; $(VENV)/$$sdk/bin/mypy || exit 1; done
	$(VENV)/mcp2/bin/mypy spec/generate.py

# The whole suite on each major, each run given the other major's Python for the cross-major
# tests, but for ONCE: what does not depend on the SDK the suite runs on, its own tests and the
# other languages' own programs, runs once, with mcp 2.x, in unit-once: the stack (the collector's
# pipeline, Prometheus's rules, the dashboards, the TypeScript package's spans through it), the
# names modules against the spec, the docs' links and the layers (static), `make test`'s timing of
# itself (mk/), the package's build and metadata (already 2.x only), the shipped assets. Only
# unit-once builds the stack's programs. tests/first_hour runs once, in first-hour. A single test with
# no Python SDK in it is marked `no_python_sdk` (tests/processes.py): it runs in unit-mcp2 only.
ONCE := tests/stack tests/node/test_stack.py tests/test_docs.py tests/test_layers.py tests/test_make.py tests/semconv tests/packaging tests/cli/test_assets.py
unit: unit-mcp1 unit-mcp2 unit-once

unit-mcp1 unit-mcp2: unit-%: node $(VENV)/mcp1/.installed $(VENV)/mcp2/.installed third-party conformance system goproxy
	@echo ">> pytest with mcp $(subst mcp,,$*).x (run once, in unit-once: $(ONCE))"
	MCP_OTEL_PEER_PYTHON=$(CURDIR)/$(VENV)/$(if $(filter mcp1,$*),mcp2,mcp1)/bin/python $(call pytest_in,$*) --ignore=tests/first_hour $(addprefix --ignore=,$(ONCE))

# It builds the stack as its first step, not as a prerequisite: so it starts in its turn in `make
# test`, and the stack's long builds with it (the Makefile says why).
unit-once: $(VENV)/mcp2/.installed node
	@+$(SUBMAKE) stack
	@echo ">> pytest with mcp 2.x, what does not depend on the SDK: $(ONCE)"
	$(call pytest_in,mcp2) $(ONCE)

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

lowest: $(LOWEST)
# lowest-mcp2's HTTP proxy tests start the npm servers.
lowest-mcp2: third-party
$(LOWEST): lowest-%: $(VENV)/lowest-%/.installed
	@echo ">> pytest on the lowest versions, $@: $$($(VENV)/$@/bin/python --version), $$($(VENV)/$@/bin/pip freeze --disable-pip-version-check | grep -E '^(mcp|opentelemetry-(api|sdk|instrumentation)|wrapt)==' | tr '\n' ' ')"
	$(call pytest_in,$@) $(LOWEST_TESTS) $(LOWEST_TESTS_$@)

# A new user's first hour, per language, as the docs show it: each install page's commands run as
# written in a fresh folder (tests/first_hour/docs_commands.py), from the clone to every outcome.
# Its `npm pack` in node/ rebuilds node/dist and puts a LICENSE beside it for a moment: `make
# test` runs it after the suites that read those (FIRST_HOUR_AFTER, set by the Makefile).
first-hour: $(VENV)/mcp2/.installed conformance | $(FIRST_HOUR_AFTER)
	@echo ">> a new user's first hour: the docs' commands in fresh folders"
	$(call pytest_in,mcp2) tests/first_hour

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
