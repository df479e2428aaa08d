package mcpotel

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

// Version is the module's version: the instrumentation scope's.
const Version = "0.1.0"

// InstrumentClient adds mcp-otel's middleware to c: a CLIENT span for each request it sends (with
// the trace context in params._meta), a SERVER span for each request of its server's it handles
// (elicitation, sampling, roots, ping), a duration point for each. Call it before c connects, and
// after adding middleware of your own (the last added runs first).
func InstrumentClient(c *mcp.Client, opts ...Option) {
	t := newTelemetry(opts)
	c.AddSendingMiddleware(t.sending)
	c.AddReceivingMiddleware(t.receiving)
}

// InstrumentServer adds mcp-otel's middleware to s: a SERVER span for each request it handles
// (its parent the caller's context in params._meta), a CLIENT span for each request it sends its
// client, a duration point for each. Call it before s serves a session.
func InstrumentServer(s *mcp.Server, opts ...Option) {
	t := newTelemetry(opts)
	if t.config.serverName == "" {
		t.config.serverName, t.config.serverVersion = serverIdentity(s)
	}
	s.AddSendingMiddleware(t.sending)
	s.AddReceivingMiddleware(t.receiving)
}

func newTelemetry(opts []Option) *telemetry {
	c := newConfig(opts)
	tracer := c.tracerProvider.Tracer(semconv.InstrumentationScope, traceVersion)
	meter := c.meterProvider.Meter(semconv.InstrumentationScope, meterVersion)
	return &telemetry{config: c, lifecycle: &lifecycle{tracer: tracer, metrics: newCallMetrics(meter, c)}}
}
