module github.com/mcp-otel/mcp-otel/go

go 1.25.0
