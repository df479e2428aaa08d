module github.com/mcp-otel/mcp-otel/benchmarks/goproxy

go 1.22
