package mcpotel

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/mcp-otel/mcp-otel/go/internal/model"
	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

// A refused probe whose session never shakes hands is held no longer than maxNegotiationHold: its
// span then ends as it is, at the time it was answered. (The SDK always sends the handshake in
// the same Connect, so only a unit of the package can show the bound; with the OpenTelemetry API
// alone: this test stays with the library.)

// heldSpan records what the lifecycle writes on one span and when it ends it.
type heldSpan struct {
	noop.Span
	attrs []attribute.KeyValue
	ended chan time.Time
}

func (s *heldSpan) SetAttributes(kv ...attribute.KeyValue) { s.attrs = append(s.attrs, kv...) }
func (s *heldSpan) End(opts ...trace.SpanEndOption) {
	config := trace.NewSpanEndConfig(opts...)
	s.ended <- config.Timestamp()
}

// oneSpan is a tracer provider whose every span is one heldSpan.
type oneSpan struct {
	noop.TracerProvider
	span *heldSpan
}

func (p oneSpan) Tracer(string, ...trace.TracerOption) trace.Tracer {
	return oneSpanTracer{span: p.span}
}

type oneSpanTracer struct {
	noop.Tracer
	span *heldSpan
}

func (t oneSpanTracer) Start(ctx context.Context, _ string, _ ...trace.SpanStartOption) (context.Context, trace.Span) {
	return trace.ContextWithSpan(ctx, t.span), t.span
}

func TestRefusedProbeHeldNoLongerThanTheBound(t *testing.T) {
	defer func(hold time.Duration) { maxNegotiationHold = hold }(maxNegotiationHold)
	maxNegotiationHold = 50 * time.Millisecond
	span := &heldSpan{ended: make(chan time.Time, 2)}
	tel := newTelemetry([]Option{WithTracerProvider(oneSpan{span: span})})
	probe := tel.lifecycle.open(context.Background(), sideClient, semconv.MethodServerDiscover, semconv.MethodServerDiscover,
		[]attribute.KeyValue{attribute.String(semconv.MCPMethodName, semconv.MethodServerDiscover)}, nil, nil)
	session := &mcp.ClientSession{}
	refused := model.ClassifyClientFailure(model.ClientFailure{Method: semconv.MethodServerDiscover, RPC: &model.RPCError{Code: -32601, Message: "method not found"}})
	before := time.Now()
	if !tel.holdNegotiation(session, probe, refused) {
		t.Fatal("a refused probe naming no server is not held")
	}
	after := time.Now()
	select {
	case at := <-span.ended:
		if at.Before(before) || at.After(after) {
			t.Errorf("ended at %v, want when it was answered (%v to %v)", at, before, after)
		}
		if waited := time.Since(before); waited < maxNegotiationHold {
			t.Errorf("ended after %v, before the bound (%v)", waited, maxNegotiationHold)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the held probe never ended")
	}
	want := []attribute.KeyValue{
		attribute.String(semconv.MCPRequestResultType, semconv.ResultNegotiation),
		attribute.String(semconv.RPCResponseStatusCode, "-32601"),
	}
	if got, wantSet := attribute.NewSet(span.attrs...), attribute.NewSet(want...); !got.Equals(&wantSet) {
		t.Errorf("attributes %v, want %v", span.attrs, want)
	}
	// A handshake after the bound changes nothing: the span ended once.
	tel.handshakeAnswered(session, &mcp.Implementation{Name: "late", Version: "1"})
	select {
	case at := <-span.ended:
		t.Errorf("ended again at %v", at)
	case <-time.After(100 * time.Millisecond):
	}
	runtime.KeepAlive(session)
}
