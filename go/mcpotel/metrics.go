package mcpotel

import (
	"context"
	"sync"
	"sync/atomic"
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
	methods, tools, prompts, servers, resources nameBound
	// WithMetricsResourceURI: mcp.resource.uri on points too.
	resourceURI bool
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
		methods:     nameBound{limit: c.maxMetricNames, always: semconv.KnownMethods},
		tools:       nameBound{limit: c.maxMetricNames},
		prompts:     nameBound{limit: c.maxMetricNames},
		servers:     nameBound{limit: c.maxMetricNames},
		resources:   nameBound{limit: c.maxMetricNames},
		resourceURI: c.metricsResourceURI,
	}
}

// attributes are a request's point attributes, from its span's, in their order (names bounded):
// mcp.method.name, gen_ai.operation.name, gen_ai.tool.name, gen_ai.prompt.name, mcp.server.name,
// network.transport and mcp.protocol.version (and mcp.resource.uri, when asked). (requestAttributes makes a request's first ones
// with its span's; these are for what it learns later.)
func (m *callMetrics) attributes(span []attribute.KeyValue) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, pointKeys)
	for _, kv := range span {
		kind := unbounded
		switch kv.Key {
		case semconv.MCPMethodName:
			kind = boundMethod
		case semconv.GenAIToolName:
			kind = boundTool
		case semconv.GenAIPromptName:
			kind = boundPrompt
		case semconv.MCPServerName:
			kind = boundServer
		case semconv.MCPResourceURI:
			kind = boundResource
		case semconv.GenAIOperationName, semconv.NetworkTransport, semconv.MCPProtocolVersion:
		default:
			continue
		}
		out = m.onPoint(out, kv, kind)
	}
	return out
}

// Which of the bounds admits a point attribute's value.
const (
	unbounded = iota
	boundMethod
	boundTool
	boundPrompt
	boundServer
	boundResource
)

// onPoint appends kv, a span's attribute, to point, its name admitted by the bound of kind
// (m nil: a request with no point, as a notification: point stays as it is; a resource URI only
// WithMetricsResourceURI).
func (m *callMetrics) onPoint(point []attribute.KeyValue, kv attribute.KeyValue, kind int) []attribute.KeyValue {
	if m == nil {
		return point
	}
	var bound *nameBound
	switch kind {
	case boundMethod:
		bound = &m.methods
	case boundTool:
		bound = &m.tools
	case boundPrompt:
		bound = &m.prompts
	case boundServer:
		bound = &m.servers
	case boundResource:
		if !m.resourceURI {
			return point
		}
		bound = &m.resources
	}
	if bound != nil {
		if name := kv.Value.AsString(); bound.admit(name) != name {
			kv.Value = attribute.StringValue(semconv.OtherValue)
		}
	}
	return append(point, kv)
}

// pointKeys is how many attributes a point copies from its span (besides the outcome's).
const pointKeys = 8

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
	// The name admitted last: a run of requests naming the same tool or server (most runs) is
	// told apart with no lock and no hash.
	last atomic.Pointer[string]
}

func (b *nameBound) admit(name string) string {
	if last := b.last.Load(); last != nil && *last == name {
		return name
	}
	if b.always.Has(name) {
		return name
	}
	admitted := b.lookup(name)
	if admitted == name {
		kept := name // a copy: taking name's address would move it to the heap on every call
		b.last.Store(&kept)
	}
	return admitted
}

func (b *nameBound) lookup(name string) string {
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
