// Command names prints every name mcp-otel's Go module writes, by the Python constant that holds
// the same string, as JSON: tests/test_languages.py compares them with the Python package's.
package main

import (
	"encoding/json"
	"os"

	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

func main() {
	if err := json.NewEncoder(os.Stdout).Encode(semconv.Shared); err != nil {
		os.Exit(1)
	}
}
