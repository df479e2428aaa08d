package mcpotel_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
	"github.com/mcp-otel/mcp-otel/go/test/internal/testserver"
)

// The test suite's shared machinery: one side's telemetry (spans and points) and the expected
// attributes (pair_test.go: the sessions the tests make).

const (
	clientMetric = "mcp.client.operation.duration"
	serverMetric = "mcp.server.operation.duration"
	// waitFor bounds every wait for something another goroutine or process does.
	waitFor = 10 * time.Second
)

var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// side is one process's telemetry: its spans and its points.
type side struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newSide(t testing.TB) *side {
	s := &side{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	s.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(s.spans))
	s.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
	t.Cleanup(func() {
		_ = s.tp.Shutdown(context.Background())
		_ = s.mp.Shutdown(context.Background())
	})
	return s
}

func (s *side) options(extra ...mcpotel.Option) []mcpotel.Option {
	return append([]mcpotel.Option{mcpotel.WithTracerProvider(s.tp), mcpotel.WithMeterProvider(s.mp), mcpotel.WithPropagators(propagator)}, extra...)
}

// ended is every span this side ended, in the file's form.
func (s *side) ended() []testserver.Span {
	var out []testserver.Span
	for _, span := range s.spans.Ended() {
		out = append(out, testserver.SpanOf(span))
	}
	return out
}

// span waits for this side's one ended span of kind named name.
func (s *side) span(t testing.TB, kind, name string) testserver.Span {
	t.Helper()
	return waitSpan(t, s.ended, kind, name)
}

// waitSpan waits until spans() holds a span of kind named name, and fails if it holds two.
func waitSpan(t testing.TB, spans func() []testserver.Span, kind, name string) testserver.Span {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		found := named(spans(), kind, name)
		if len(found) == 1 {
			return found[0]
		}
		if len(found) > 1 {
			t.Fatalf("%d %s spans %q, want 1:\n%s", len(found), kind, name, dump(found))
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s span %q; ended:\n%s", kind, name, dump(spans()))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func named(spans []testserver.Span, kind, name string) []testserver.Span {
	var out []testserver.Span
	for _, s := range spans {
		if s.Kind == kind && s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func dump(spans []testserver.Span) string {
	var b strings.Builder
	for _, s := range spans {
		keys := slices.Sorted(maps.Keys(s.Attributes))
		fmt.Fprintf(&b, "  %s %q %s trace=%s span=%s parent=%s links=%v\n", s.Kind, s.Name, s.Status, s.TraceID, s.SpanID, s.Parent, s.Links)
		for _, k := range keys {
			fmt.Fprintf(&b, "      %s=%q\n", k, s.Attributes[k])
		}
	}
	return b.String()
}

// attrs are expected attributes, every value as its string.
type attrs map[string]string

// with is a copy of a with b's entries added ("" removes a key).
func (a attrs) with(b attrs) attrs {
	out := maps.Clone(a)
	if out == nil {
		out = attrs{}
	}
	for k, v := range b {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// The outcomes, as their attributes on a tools/call span and point.
var (
	okTool      = attrs{"mcp.request.outcome": "ok", "tool.outcome": "ok"}
	toolError   = attrs{"mcp.request.outcome": "failed", "tool.outcome": "failed", "error.type": "tool_error"}
	timeoutTool = attrs{"mcp.request.outcome": "failed", "tool.outcome": "failed", "error.type": "timeout"}
	closedTool  = attrs{"mcp.request.outcome": "failed", "tool.outcome": "failed", "error.type": "connection_closed"}
)

func cancelledTool(reason string) attrs {
	return attrs{"mcp.request.outcome": "cancelled", "tool.outcome": "cancelled", "mcp.request.cancel.reason": reason, "tool.cancel.reason": reason}
}

// rpcTool is a tools/call answered with a JSON-RPC error: on the client (and on the server for
// a server-side code) failed with the code as error.type; callerFault: the server's side of a
// caller-fault code (no error.type).
func rpcTool(code string, callerFault bool) attrs {
	a := attrs{"mcp.request.outcome": "failed", "tool.outcome": "failed", "rpc.response.status_code": code}
	if !callerFault {
		a["error.type"] = code
	}
	return a
}

// toolCall is the attributes of a tools/call span of tool at protocol version (session: the
// session id, "" for none), the server's identity the test server's.
func toolCall(tool, version, session string) attrs {
	a := attrs{
		"mcp.method.name":       "tools/call",
		"gen_ai.operation.name": "execute_tool",
		"gen_ai.tool.name":      tool,
		"mcp.protocol.version":  version,
		"mcp.server.name":       testserver.Name,
		"mcp.server.version":    testserver.Version,
	}
	if session != "" {
		a["mcp.session.id"] = session
	}
	return a
}

// pointKeys are the attributes a duration point may carry (docs/metrics.md): never a session or
// conversation id, never the server's version.
var pointKeys = []string{
	"mcp.method.name", "gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.prompt.name", "mcp.server.name",
	"network.transport", "mcp.protocol.version", "mcp.request.outcome", "tool.outcome", "error.type",
	"rpc.response.status_code", "mcp.request.cancel.reason", "tool.cancel.reason",
}

// pointOf is the point attributes of a request whose span has a.
func pointOf(a attrs) attrs {
	out := attrs{}
	for _, k := range pointKeys {
		if v, ok := a[k]; ok {
			out[k] = v
		}
	}
	return out
}

// wantSpan asserts a span's kind, name, status and exact attributes.
func wantSpan(t testing.TB, got testserver.Span, kind, name, status string, want attrs) {
	t.Helper()
	if got.Kind != kind || got.Name != name || got.Status != status || !maps.Equal(got.Attributes, map[string]string(want)) {
		t.Errorf("span:\n%swant %s %q %s with\n%s", dump([]testserver.Span{got}), kind, name, status, dump([]testserver.Span{{Kind: kind, Name: name, Status: status, Attributes: want}}))
	}
}

// wantChild asserts that child's parent is parent, in one trace.
func wantChild(t testing.TB, child, parent testserver.Span) {
	t.Helper()
	if child.TraceID != parent.TraceID || child.Parent != parent.SpanID {
		t.Errorf("%s %q (trace %s, parent %s) is not a child of %s %q (trace %s, span %s)",
			child.Kind, child.Name, child.TraceID, child.Parent, parent.Kind, parent.Name, parent.TraceID, parent.SpanID)
	}
}

// points are this side's points of the histogram name, each as its attributes.
func (s *side) points(t testing.TB, name string) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := s.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var out []metricdata.HistogramDataPoint[float64]
	for _, scope := range rm.ScopeMetrics {
		for _, m := range scope.Metrics {
			if m.Name != name {
				continue
			}
			if scope.Scope.Name != "mcp_otel" || scope.Scope.Version != mcpotel.Version || m.Unit != "s" {
				t.Errorf("%s: scope %s %s, unit %q", name, scope.Scope.Name, scope.Scope.Version, m.Unit)
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				t.Fatalf("%s is a %T", name, m.Data)
			}
			out = append(out, h.DataPoints...)
		}
	}
	return out
}

func attrsOf(set attribute.Set) attrs {
	out := attrs{}
	for _, kv := range set.ToSlice() {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

// point waits for this side's one point of the histogram name with exactly want's attributes,
// asserts its bucket boundaries and that it counts count requests.
func (s *side) point(t testing.TB, name string, want attrs, count uint64) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		var seen []string
		for _, p := range s.points(t, name) {
			got := attrsOf(p.Attributes)
			if !maps.Equal(got, want) {
				seen = append(seen, fmt.Sprint(got))
				continue
			}
			if !slices.Equal(p.Bounds, testserver.DurationBuckets) {
				t.Errorf("%s bounds %v, want %v", name, p.Bounds, testserver.DurationBuckets)
			}
			// The SDK's histogram may show a point's series a moment before the recording that made
			// it is counted (seen: count 0 under -race, 2026-12-07): read again until the deadline.
			if p.Count == count || time.Now().After(deadline) {
				if p.Count != count {
					t.Errorf("%s %v: count %d, want %d", name, want, p.Count, count)
				}
				return
			}
			seen = append(seen, fmt.Sprintf("%v (count %d)", got, p.Count))
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s point %v; points:\n  %s", name, want, strings.Join(seen, "\n  "))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pointValues counts the requests of the histogram name by the value of their key attribute.
func (s *side) pointValues(t testing.TB, name, key string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, p := range s.points(t, name) {
		if v, ok := p.Attributes.Value(attribute.Key(key)); ok {
			out[v.String()] += p.Count
		}
	}
	return out
}

// sortedKeys is a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
