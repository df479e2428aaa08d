# TypeScript: the npm package mcp-otel (node/) and the npm packages other suites run.
#   make node       node/'s dependencies (npm ci) and its ESM and CommonJS builds (node/dist)
#   make node-test  its lint (tsc, eslint), then its tests (the Node test runner) on the newest SDKs,
#                   on the lowest ones (node/test/lowest) and with the agent frameworks
#                   (node/test/frameworks, behind `mcp-otel proxy` from the mcp 2.x virtualenv)
#   make conformance, make third-party  the npm packages the Python suites start (below)
# The Python suites' cross-language tests (tests/node, tests/go) use node/dist.
# Needs: node and npm on PATH (Node.js 20 or later).

.PHONY: node node-test conformance third-party

NODE_MODULES := node/node_modules/.package-lock.json
$(NODE_MODULES): node/package.json node/package-lock.json
	cd node && npm ci --no-audit --no-fund --loglevel=error

# The build runs npm ci (when due) itself rather than naming it as a prerequisite: under -j, GNU
# make starts a target whose prerequisite has just finished only after every other job it can
# start, so behind the stack's long builds the Python suites waited minutes for this one.
NODE_DIST := node/dist/esm/index.js
$(NODE_DIST): node/package.json node/package-lock.json $(wildcard node/src/*.ts node/src/*/*.ts) node/tsconfig.json node/tsconfig.cjs.json node/scripts/build.mjs
	@+$(SUBMAKE) $(NODE_MODULES)
	cd node && npm run build
node: $(NODE_DIST)

NODE_LOWEST := node/test/lowest/node_modules/.package-lock.json
$(NODE_LOWEST): node/test/lowest/package.json node/test/lowest/package-lock.json
	cd node/test/lowest && npm ci --no-audit --no-fund --loglevel=error

NODE_FRAMEWORKS := node/test/frameworks/node_modules/.package-lock.json
$(NODE_FRAMEWORKS): node/test/frameworks/package.json node/test/frameworks/package-lock.json
	cd node/test/frameworks && npm ci --no-audit --no-fund --loglevel=error

node-test: $(NODE_DIST) $(NODE_LOWEST) $(NODE_FRAMEWORKS) $(VENV)/mcp2/.installed
	cd node && npm run lint
	@echo ">> node --test, newest SDKs"
	cd node && npm test
	@echo ">> node --test, lowest SDKs (node/test/lowest)"
	cd node && npm run test:lowest
	@echo ">> node --test, agent frameworks (node/test/frameworks)"
	cd node/test/frameworks && node --test --test-concurrency=1

# The MCP conformance suite and the Node.js 22 it needs, both from npm (tests/conformance).
CONFORMANCE := tests/conformance/node_modules/.package-lock.json
$(CONFORMANCE): tests/conformance/package.json tests/conformance/package-lock.json
	cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error
conformance: $(CONFORMANCE)

# Real third-party MCP servers from npm (tests/third_party, tests/proxy; mcp-server-time comes from
# PyPI, in the mcp 2.x virtualenv).
THIRD_PARTY := tests/third_party/node_modules/.package-lock.json
$(THIRD_PARTY): tests/third_party/package.json tests/third_party/package-lock.json
	cd tests/third_party && npm ci --no-audit --no-fund --loglevel=error
third-party: $(THIRD_PARTY)
