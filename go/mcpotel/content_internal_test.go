package mcpotel

// The cases of content capture (spec/content.json, the file the Python, TypeScript and Rust tests
// read) through the Go module's: every case's value gives exactly its text.

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

type contentCase struct {
	Name      string          `json:"name"`
	Value     json.RawMessage `json:"value"`
	MaxLength int             `json:"maxLength"`
	Captured  string          `json:"captured"`
}

func TestContentCases(t *testing.T) {
	text, err := os.ReadFile("../../spec/content.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Cases []contentCase `json:"cases"`
	}
	if err := json.Unmarshal(text, &spec); err != nil {
		t.Fatal(err)
	}
	if len(spec.Cases) < 9 {
		t.Fatalf("%d cases", len(spec.Cases))
	}
	for _, c := range spec.Cases {
		t.Run(c.Name, func(t *testing.T) {
			got := captured(semconv.GenAIToolCallArguments, c.Value, &config{captureContent: true, maxContentLength: c.MaxLength})
			if len(got) != 1 || got[0].Value.AsString() != c.Captured {
				t.Errorf("captured %v, want %q", got, c.Captured)
			}
		})
	}
}
