# Go: the module go/ (package mcpotel).
#   make go-test  gofmt, go vet and staticcheck (on the lowest SDK the module supports, go.mod,
#                 and the newest, newest.mod), then go test -race on each
# The Python suites' cross-language tests (tests/go) build go/internal/cmd's programs themselves.
# Needs: go on PATH; staticcheck is installed from the Go module proxy into .cache/bin.

.PHONY: go-test

STATICCHECK := .cache/bin/staticcheck
$(STATICCHECK):
	@mkdir -p $(@D)
	GOBIN=$(CURDIR)/$(@D) go install honnef.co/go/tools/cmd/staticcheck@v0.8.2

go-test: $(STATICCHECK)
	@echo ">> go: gofmt, vet, staticcheck"
	cd go && test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	cd go && go vet ./... && go vet -modfile=newest.mod ./...
	cd go && $(CURDIR)/$(STATICCHECK) ./...
	@echo ">> go test -race, the lowest SDK (go.mod) and the newest (newest.mod)"
	cd go && go test -race -count=1 ./...
	cd go && go test -race -count=1 -modfile=newest.mod ./...
