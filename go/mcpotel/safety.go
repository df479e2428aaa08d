package mcpotel

import (
	"sync"

	"go.opentelemetry.io/otel"
)

var reported sync.Map

// reportOnce logs a problem in mcp-otel's own code (through OpenTelemetry's error handler) the
// first time it happens at where: our bookkeeping fails open, it never reaches the application.
func reportOnce(where string, err error) {
	if _, seen := reported.LoadOrStore(where, true); seen {
		return
	}
	otel.Handle(&ownError{where: where, err: err})
}

type ownError struct {
	where string
	err   error
}

func (e *ownError) Error() string {
	if e.err == nil {
		return "mcp-otel: " + e.where + " (reported once)"
	}
	return "mcp-otel: " + e.where + ": " + e.err.Error() + " (reported once)"
}

func (e *ownError) Unwrap() error { return e.err }
