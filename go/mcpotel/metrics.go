package mcpotel

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/mcp-otel/mcp-otel/go/internal/model"
	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

// callMetrics holds the operation-duration histograms: one point per finished request, for every
// outcome (cancelled included) and whether or not its span was sampled, with the span's own
// outcome attributes. Names from peers are bounded: the first maxMetricNames distinct ones are
// kept, later ones read _OTHER; the methods the specification defines always pass.
type callMetrics struct {
	durations [2]metric.Float64Histogram // [client, server]
	// The bounded names: methods (the specification's always pass), tools, prompts, servers.
	methods, tools, prompts, servers nameBound
}

// durationHistogram is one of the duration histograms, in seconds with the spec's buckets.
func durationHistogram(meter metric.Meter, name, description string) metric.Float64Histogram {
	h, err := meter.Float64Histogram(name, metric.WithUnit(semconv.DurationUnit), metric.WithDescription(description),
		metric.WithExplicitBucketBoundaries(semconv.DurationBuckets...))
	if err != nil {
		reportOnce("could not create a histogram", err)
	}
	return h
}

func newCallMetrics(meter metric.Meter, c *config) *callMetrics {
	return &callMetrics{
		durations: [2]metric.Float64Histogram{
			durationHistogram(meter, semconv.MCPClientOperationDuration, "Duration of MCP requests as their sender saw them."),
			durationHistogram(meter, semconv.MCPServerOperationDuration, "Duration of MCP requests as their receiver handled them."),
		},
		methods: nameBound{limit: c.maxMetricNames, always: semconv.KnownMethods},
		tools:   nameBound{limit: c.maxMetricNames},
		prompts: nameBound{limit: c.maxMetricNames},
		servers: nameBound{limit: c.maxMetricNames},
	}
}

// attributes are a request's point attributes, from its span's, in their order (names bounded):
// mcp.method.name, gen_ai.operation.name, gen_ai.tool.name, gen_ai.prompt.name, mcp.server.name,
// network.transport and mcp.protocol.version.
func (m *callMetrics) attributes(span []attribute.KeyValue) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, pointKeys)
	for _, kv := range span {
		var bound *nameBound
		switch kv.Key {
		case semconv.MCPMethodName:
			bound = &m.methods
		case semconv.GenAIToolName:
			bound = &m.tools
		case semconv.GenAIPromptName:
			bound = &m.prompts
		case semconv.MCPServerName:
			bound = &m.servers
		case semconv.GenAIOperationName, semconv.NetworkTransport, semconv.MCPProtocolVersion:
		default:
			continue
		}
		if bound != nil {
			kv.Value = attribute.StringValue(bound.admit(kv.Value.AsString()))
		}
		out = append(out, kv)
	}
	return out
}

// pointKeys is how many attributes a point copies from its span (besides the outcome's).
const pointKeys = 7

// record records one request of side (0 client, 1 server) that started at started, in its span's
// context (an exemplar links the point to its own request).
func (m *callMetrics) record(ctx context.Context, side int, started time.Time, point []attribute.KeyValue, outcome *model.Outcome, toolCall bool) {
	if m.durations[side] == nil {
		return
	}
	all := append(append(make([]attribute.KeyValue, 0, len(point)+5), point...), outcomeAttributes(outcome, toolCall)...)
	m.durations[side].Record(ctx, time.Since(started).Seconds(), metric.WithAttributes(all...))
}

// nameBound admits the first limit distinct names; any later one reads _OTHER.
type nameBound struct {
	limit  int
	always semconv.Names
	mu     sync.Mutex
	names  map[string]struct{}
}

func (b *nameBound) admit(name string) string {
	if b.always.Has(name) {
		return name
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.names[name]; ok {
		return name
	}
	if len(b.names) >= b.limit {
		return semconv.OtherValue
	}
	if b.names == nil {
		b.names = map[string]struct{}{}
	}
	b.names[name] = struct{}{}
	return name
}
