# The README's two commands: `make demo` and `make test`. Each creates what it needs.
PYTHON ?= python3
VENV := .venv
SDKS := mcp1 mcp2

.PHONY: demo one-trace test lint typecheck unit bench clean

# One virtualenv per SDK major: mcp 1.x and 2.x cannot share an environment.
$(VENV)/%/.installed: requirements/%.txt requirements/mcp1.txt requirements/mcp2.txt requirements/dev.txt pyproject.toml
	@echo ">> creating $(VENV)/$* ($$(head -n 2 requirements/$*.txt | tail -n 1))"
	@rm -rf $(VENV)/$*
	$(PYTHON) -m venv $(VENV)/$*
	$(VENV)/$*/bin/pip install --quiet --disable-pip-version-check --upgrade pip
	$(VENV)/$*/bin/pip install --quiet --disable-pip-version-check -r requirements/$*.txt -r requirements/dev.txt -e '.[sdk]'
	@touch $@

# A scripted agent and three MCP servers, run under `mcp-otel run`: the per-server table.
demo: $(VENV)/mcp2/.installed
	$(VENV)/mcp2/bin/mcp-otel run --output .cache/demo-telemetry.jsonl -- python examples/demo/agent.py

# One call per outcome, both sides instrumented: each call as the agent and the server saw it.
one-trace: $(VENV)/mcp2/.installed
	$(VENV)/mcp2/bin/python examples/one_trace.py

lint: $(VENV)/mcp2/.installed
	$(VENV)/mcp2/bin/ruff check src tests examples
	$(VENV)/mcp2/bin/ruff format --check src tests examples

typecheck: $(addprefix $(VENV)/,$(addsuffix /.installed,$(SDKS)))
	@for sdk in $(SDKS); do echo ">> mypy against $$sdk"; $(VENV)/$$sdk/bin/mypy || exit 1; done

# Each run also gets the other major's Python, for the cross-major tests.
unit: $(addprefix $(VENV)/,$(addsuffix /.installed,$(SDKS)))
	@echo ">> pytest with mcp 1.x"
	MCP_OTEL_PEER_PYTHON=$(CURDIR)/$(VENV)/mcp2/bin/python $(VENV)/mcp1/bin/pytest $(PYTEST_ARGS)
	@echo ">> pytest with mcp 2.x"
	MCP_OTEL_PEER_PYTHON=$(CURDIR)/$(VENV)/mcp1/bin/python $(VENV)/mcp2/bin/pytest $(PYTEST_ARGS)

test: lint typecheck unit

# Per-call overhead against the floor and the peers (docs/benchmarks.md), then the full soak.
bench: $(VENV)/bench-mcp1/.installed $(VENV)/mcp1/.installed $(VENV)/mcp2/.installed
	$(VENV)/mcp2/bin/python benchmarks/run.py --python1 $(VENV)/bench-mcp1/bin/python --python2 $(VENV)/mcp2/bin/python
	MCP_OTEL_SOAK_CALLS=100000 $(VENV)/mcp1/bin/pytest tests/soak -q
	MCP_OTEL_SOAK_CALLS=100000 $(VENV)/mcp2/bin/pytest tests/soak -q

clean:
	rm -rf $(VENV)
