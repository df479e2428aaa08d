package mcpotel

import (
	"context"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-otel/mcp-otel/go/internal/model"
	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

// A request's life on one side, as in the other languages: opened once (its span started, its
// clock running), finished exactly once (classified, its outcome written on its span, the same
// outcome recorded as its one point). A request answered with no result yet has no point.

const (
	sideClient = iota
	sideServer
)

// maxConversationID bounds the conversation id from baggage (the application's, or a peer's).
const maxConversationID = 256

type call struct {
	side     int
	method   string
	span     trace.Span
	ctx      context.Context // the span's context
	point    []attribute.KeyValue
	started  time.Time
	finished atomic.Bool
	// The person declined an input request of this call (an elicitation it sent, or answered).
	inputDeclined atomic.Bool
	// What a wrapped connection saw of this call on the wire (nil: no wrapper, or not yet).
	wire atomic.Pointer[sentOn]
}

// A call is the context its request is sent in (the span's context): a wrapped connection's Write
// finds the call there with no allocation of its own (callKey).
type callKey struct{}

func (c *call) Deadline() (time.Time, bool) { return c.ctx.Deadline() }
func (c *call) Done() <-chan struct{}       { return c.ctx.Done() }
func (c *call) Err() error                  { return c.ctx.Err() }
func (c *call) Value(key any) any {
	if key == (callKey{}) {
		return c
	}
	return c.ctx.Value(key)
}

type lifecycle struct {
	tracer  trace.Tracer
	metrics *callMetrics
}

// open starts the span of a method request on side, a child of parent, all its attributes at once
// (point: its point's).
func (l *lifecycle) open(parent context.Context, side int, method, name string, attrs, point []attribute.KeyValue, links []trace.Link) *call {
	ctx, span := l.tracer.Start(parent, name, startOptions(parent, side, attrs, links)...)
	return &call{side: side, method: method, span: span, ctx: ctx, point: point, started: time.Now()}
}

// notification starts the span of a notification sent or received: no outcome, no point.
func (l *lifecycle) notification(parent context.Context, side int, name string, attrs []attribute.KeyValue, links []trace.Link) (context.Context, trace.Span) {
	return l.tracer.Start(parent, name, startOptions(parent, side, attrs, links)...)
}

// spanKinds are each side's span kind, as options made once (each is a closure).
var spanKinds = [2]trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithSpanKind(trace.SpanKindServer)}

// startOptions start a span of side with attrs (and the conversation in parent's baggage), linked
// to links: no option for no links.
func startOptions(parent context.Context, side int, attrs []attribute.KeyValue, links []trace.Link) []trace.SpanStartOption {
	options := make([]trace.SpanStartOption, 0, 3)
	options = append(options, spanKinds[side], trace.WithAttributes(inConversation(parent, attrs)...))
	if len(links) > 0 {
		options = append(options, trace.WithLinks(links...))
	}
	return options
}

// finish writes the verdict and late attributes on the call's span and ends it, then records the
// same outcome as its point (end: when its span ends, if not now). A second finish changes nothing.
func (l *lifecycle) finish(c *call, verdict model.Verdict, late []attribute.KeyValue, end ...trace.SpanEndOption) {
	if c.finished.Swap(true) {
		return
	}
	wire := c.wire.Load()
	if wire != nil {
		late = append(append([]attribute.KeyValue{}, late...), wire.attributes...)
	}
	finishSpan(c.span, verdict, c.method, late, end...)
	if outcome, ok := verdict.(*model.Outcome); ok {
		point := c.point
		if len(late) > 0 {
			point = l.metrics.attributes(append(append([]attribute.KeyValue{}, late...), c.point...))
		}
		l.metrics.record(c.ctx, c.side, c.started, point, outcome, c.method == semconv.MethodToolsCall)
		if wire != nil {
			wire.connection.learn(point)
		}
	}
}

// inConversation adds the conversation in the context's baggage (gen_ai.conversation.id) to a
// span's attributes: on spans only, never on points.
func inConversation(ctx context.Context, attrs []attribute.KeyValue) []attribute.KeyValue {
	member := baggage.FromContext(ctx).Member(semconv.GenAIConversationID)
	if member.Value() == "" {
		return attrs
	}
	return append(append(make([]attribute.KeyValue, 0, len(attrs)+1), attrs...),
		attribute.String(semconv.GenAIConversationID, model.Bounded(member.Value(), maxConversationID)))
}
