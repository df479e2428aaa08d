package mcpotel

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Trace context in a request's params._meta: injected into a copy when sending (the caller's map
// is never changed; the SDK's own keys are kept), extracted when handling. A peer's _meta is
// hostile input: only string values of the propagator's own fields are read, each bounded.

// maxFieldLength: W3C caps baggage at 8192 bytes; a longer value is not a header to parse.
const maxFieldLength = 8192

// metaCarrier reads and writes a _meta map as the propagator's carrier.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	if value, ok := m[key].(string); ok && len(value) <= maxFieldLength {
		return value
	}
	return ""
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	return keys
}

// injected is a copy of meta with the propagator's fields for the span in ctx.
func injected(ctx context.Context, propagator propagation.TextMapPropagator, meta map[string]any) map[string]any {
	out := make(map[string]any, len(meta)+3)
	for key, value := range meta {
		out[key] = value
	}
	propagator.Inject(ctx, metaCarrier(out))
	return out
}

// extracted is the sender's context in meta (with its baggage), when a valid span context came.
func extracted(propagator propagation.TextMapPropagator, meta map[string]any) (context.Context, bool) {
	if len(meta) == 0 {
		return nil, false
	}
	remote := propagator.Extract(context.Background(), metaCarrier(meta))
	return remote, trace.SpanContextFromContext(remote).IsValid()
}
