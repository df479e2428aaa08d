package testserver

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Floor is the benchmarks' floor: the span and the point mcpotel makes for a tools/call, made by
// hand, as plainly as the SDK allows: a CLIENT span with the same attributes, the trace context
// injected into a copy of the params' _meta, one histogram point with the same attributes; on the
// server a SERVER span parented to the context in _meta, one point. No bookkeeping beyond that.
// Only tools/call is instrumented (the benchmarks measure tools/call alone).
type Floor struct {
	tracer         trace.Tracer
	propagator     propagation.TextMapPropagator
	client, server metric.Float64Histogram
	name, version  string // the server's identity, on the server's spans
}

// DurationBuckets are mcpotel's histogram boundaries.
var DurationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// NewFloor makes the floor's instruments from the same providers mcpotel is given.
func NewFloor(tp trace.TracerProvider, mp metric.MeterProvider, propagator propagation.TextMapPropagator) *Floor {
	meter := mp.Meter("floor")
	histogram := func(name string) metric.Float64Histogram {
		h, err := meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(DurationBuckets...))
		if err != nil {
			panic(err)
		}
		return h
	}
	return &Floor{
		tracer:     tp.Tracer("floor"),
		propagator: propagator,
		client:     histogram("floor.client.operation.duration"),
		server:     histogram("floor.server.operation.duration"),
		name:       Name,
		version:    Version,
	}
}

// Sending is the floor's client middleware.
func (f *Floor) Sending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		r, ok := req.(*mcp.ClientRequest[mcp.Params])
		if !ok || method != "tools/call" {
			return next(ctx, method, req)
		}
		p, ok := r.Params.(*mcp.CallToolParams)
		if !ok || p == nil {
			return next(ctx, method, req)
		}
		var version, server, serverVersion string
		if init := r.Session.InitializeResult(); init != nil {
			version = init.ProtocolVersion
			if init.ServerInfo != nil {
				server, serverVersion = init.ServerInfo.Name, init.ServerInfo.Version
			}
		}
		point := []attribute.KeyValue{
			attribute.String("mcp.method.name", method),
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", p.Name),
			attribute.String("mcp.server.name", server),
			attribute.String("mcp.protocol.version", version),
		}
		spanCtx, span := f.tracer.Start(ctx, method+" "+p.Name, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(point...), trace.WithAttributes(attribute.String("mcp.server.version", serverVersion)))
		started := time.Now()
		copied := *p
		meta := make(map[string]any, len(p.Meta)+2)
		for k, v := range p.Meta {
			meta[k] = v
		}
		f.propagator.Inject(spanCtx, metaCarrier(meta))
		copied.Meta = meta
		res, err := next(spanCtx, method, &mcp.ClientRequest[mcp.Params]{Session: r.Session, Params: &copied})
		f.finish(spanCtx, span, f.client, started, point, res, err)
		return res, err
	}
}

// Receiving is the floor's server middleware.
func (f *Floor) Receiving(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		r, ok := req.(*mcp.CallToolRequest)
		if !ok || method != "tools/call" || r.Params == nil {
			return next(ctx, method, req)
		}
		version := r.ProtocolVersion()
		point := []attribute.KeyValue{
			attribute.String("mcp.method.name", method),
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", r.Params.Name),
			attribute.String("mcp.server.name", f.name),
			attribute.String("mcp.protocol.version", version),
		}
		parent := ctx
		if remote := trace.SpanContextFromContext(f.propagator.Extract(context.Background(), metaCarrier(r.Params.Meta))); remote.IsValid() {
			parent = trace.ContextWithRemoteSpanContext(ctx, remote)
		}
		spanCtx, span := f.tracer.Start(parent, method+" "+r.Params.Name, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(point...), trace.WithAttributes(attribute.String("mcp.server.version", f.version)))
		started := time.Now()
		res, err := next(spanCtx, method, req)
		f.finish(spanCtx, span, f.server, started, point, res, err)
		return res, err
	}
}

func (f *Floor) finish(ctx context.Context, span trace.Span, h metric.Float64Histogram, started time.Time, point []attribute.KeyValue, res mcp.Result, err error) {
	outcome := []attribute.KeyValue{attribute.String("mcp.request.outcome", "ok"), attribute.String("tool.outcome", "ok")}
	if err != nil {
		errorType := "_OTHER"
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) {
			errorType = strconv.Itoa(int(rpc.Code))
		}
		outcome = []attribute.KeyValue{attribute.String("mcp.request.outcome", "failed"), attribute.String("tool.outcome", "failed"), attribute.String("error.type", errorType)}
	} else if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
		outcome = []attribute.KeyValue{attribute.String("mcp.request.outcome", "failed"), attribute.String("tool.outcome", "failed"), attribute.String("error.type", "tool_error")}
	}
	span.SetAttributes(outcome...)
	if outcome[0].Value.AsString() == "failed" {
		span.SetStatus(codes.Error, "")
	}
	span.End()
	h.Record(ctx, time.Since(started).Seconds(), metric.WithAttributes(append(append(make([]attribute.KeyValue, 0, len(point)+3), point...), outcome...)...))
}

// metaCarrier reads and writes a _meta map as a propagator's carrier.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string { value, _ := m[key].(string); return value }

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	return keys
}
