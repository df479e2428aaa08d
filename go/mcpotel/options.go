package mcpotel

import (
	"context"
	"reflect"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// An Option configures the instrumentation.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is the instrumentation's settings: the Python package's, in Go's option style.
type config struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	propagator     propagation.TextMapPropagator
	// Record tool arguments and results on spans (off: they may hold anything).
	captureContent   bool
	maxContentLength int
	// Names from peers are cut to this length; metrics keep this many distinct ones.
	maxNameLength  int
	maxMetricNames int
	// The server's identity on a server's spans (the SDK offers no way to read it back).
	serverName, serverVersion string
	// Parent a server's span to the context in _meta (off: a link only).
	trustRemoteContext bool
	// Spans for notifications/progress and notifications/message too.
	traceProgressAndLogs bool
	// mcp.resource.uri on the duration points too (the conventions make it opt-in).
	metricsResourceURI bool
}

func newConfig(opts []Option) *config {
	c := &config{maxContentLength: 4096, maxNameLength: 256, maxMetricNames: 100, trustRemoteContext: true}
	for _, opt := range opts {
		opt.apply(c)
	}
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	if c.propagator == nil {
		c.propagator = globalPropagator{}
	}
	return c
}

// w3c is what the Python and TypeScript packages propagate by default: W3C trace context and
// baggage.
var w3c = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// globalPropagator is the default propagator: the global one, as otelhttp's, read at each request
// (an application may set it after instrumenting); while the application has set none (the global
// is still OpenTelemetry Go's no-op, with no fields), w3c, so that a client and a server
// instrumented as the docs show are one trace with no other setup.
type globalPropagator struct{}

// resolvedGlobal is the last global propagator seen and the one used for it: a request costs an
// atomic load and a comparison, not a Fields call (a composite's allocates).
var resolvedGlobal atomic.Pointer[[2]propagation.TextMapPropagator]

func (globalPropagator) current() propagation.TextMapPropagator {
	global := otel.GetTextMapPropagator()
	// OpenTelemetry Go's unset global is a pointer; a propagator of another kind (a composite is a
	// slice, TraceContext a struct) is the application's own, used as it is.
	if reflect.TypeOf(global).Kind() != reflect.Pointer {
		return global
	}
	if seen := resolvedGlobal.Load(); seen != nil && seen[0] == global {
		return seen[1]
	}
	use := global
	if len(global.Fields()) == 0 {
		use = w3c
	}
	resolvedGlobal.Store(&[2]propagation.TextMapPropagator{global, use})
	return use
}

func (g globalPropagator) Inject(ctx context.Context, carrier propagation.TextMapCarrier) {
	g.current().Inject(ctx, carrier)
}

func (g globalPropagator) Extract(ctx context.Context, carrier propagation.TextMapCarrier) context.Context {
	return g.current().Extract(ctx, carrier)
}

func (g globalPropagator) Fields() []string { return g.current().Fields() }

// WithTracerProvider sets the tracer provider (default: the global one).
func WithTracerProvider(provider trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tracerProvider = provider })
}

// WithMeterProvider sets the meter provider (default: the global one).
func WithMeterProvider(provider metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.meterProvider = provider })
}

// WithPropagators sets the propagator of the trace context in params._meta. The default is the
// global one (otel.SetTextMapPropagator, read at each request) or, while the application has set
// none, W3C trace context and baggage.
func WithPropagators(propagator propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) { c.propagator = propagator })
}

// WithContentCapture records tool arguments and results on spans (gen_ai.tool.call.arguments and
// .result), values under secret-looking keys redacted, cut to maxLength characters (0: 4096). Off
// by default: a tool's arguments and results may hold anything.
func WithContentCapture(maxLength int) Option {
	return optionFunc(func(c *config) {
		c.captureContent = true
		if maxLength > 0 {
			c.maxContentLength = maxLength
		}
	})
}

// WithServerIdentity names the server on a server's spans (mcp.server.name, mcp.server.version),
// and overrides what a client's spans learn from the handshake.
func WithServerIdentity(name, version string) Option {
	return optionFunc(func(c *config) { c.serverName, c.serverVersion = name, version })
}

// WithoutRemoteParent makes a server's spans roots linked to the caller's context in _meta instead
// of its children: for servers exposed to clients whose trace context is not to be trusted.
func WithoutRemoteParent() Option {
	return optionFunc(func(c *config) { c.trustRemoteContext = false })
}

// WithProgressAndLogs gives notifications/progress and notifications/message spans too (a long
// call can send hundreds).
func WithProgressAndLogs() Option {
	return optionFunc(func(c *config) { c.traceProgressAndLogs = true })
}

// WithMetricsResourceURI puts mcp.resource.uri on the duration points too, the first distinct
// ones as WithNameLimits keeps names, later ones _OTHER. Off by default: the conventions make it
// opt-in, for URIs are unbounded.
func WithMetricsResourceURI() Option {
	return optionFunc(func(c *config) { c.metricsResourceURI = true })
}

// WithNameLimits sets how long a peer's name may be on a span and how many distinct names each
// metric attribute keeps before it reads _OTHER (defaults: 256 and 100).
func WithNameLimits(maxLength, maxMetricNames int) Option {
	return optionFunc(func(c *config) {
		if maxLength > 0 {
			c.maxNameLength = maxLength
		}
		if maxMetricNames > 0 {
			c.maxMetricNames = maxMetricNames
		}
	})
}

var (
	traceVersion = trace.WithInstrumentationVersion(Version)
	meterVersion = metric.WithInstrumentationVersion(Version)
)
