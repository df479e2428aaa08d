# Go: the library module go/ (package mcpotel, on the OpenTelemetry API only) and its tests' module
# go/test (the SDK, the test server, the programs the cross-language tests run).
#   make go-test  gofmt, go vet and staticcheck (on the lowest SDK each module supports, go.mod,
#                 and the newest, newest.mod), then go test -race on each
# The Python suites' cross-language tests (tests/go) build go/test's programs themselves.
# Needs: go on PATH; staticcheck is installed from the Go module proxy into .cache/bin.

.PHONY: go-test

GO_MODULES := go go/test
STATICCHECK := .cache/bin/staticcheck
$(STATICCHECK):
	@mkdir -p $(@D)
	GOBIN=$(CURDIR)/$(@D) go install honnef.co/go/tools/cmd/staticcheck@v0.8.2

# staticcheck is its first step, not a prerequisite: so it starts in its turn in `make test`.
go-test:
	@+$(SUBMAKE) $(STATICCHECK)
	@echo ">> go: gofmt, vet, staticcheck"
	cd go && test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	for m in $(GO_MODULES); do (cd $$m && go vet ./... && go vet -modfile=newest.mod ./...) || exit 1; done
	for m in $(GO_MODULES); do (cd $$m && $(CURDIR)/$(STATICCHECK) ./...) || exit 1; done
	@echo ">> go test -race, the lowest SDK (go.mod) and the newest (newest.mod)"
	for m in $(GO_MODULES); do (cd $$m && go test -race -count=1 ./... && go test -race -count=1 -modfile=newest.mod ./...) || exit 1; done
