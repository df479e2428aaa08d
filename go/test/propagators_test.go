package mcpotel_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
	"github.com/mcp-otel/mcp-otel/go/test/internal/testserver"
)

// The default propagator: the global one, read at each request, and, while the application has
// set none (OpenTelemetry Go's global is a no-op until then), W3C trace context and baggage; an
// explicit WithPropagators always wins. The global propagator cannot be unset once set, so the
// test runs in a process of its own (this binary, run again for this test alone).

const ownProcess = "MCPOTEL_TEST_GLOBAL_PROPAGATOR"

// countingPropagator is an application's own propagator of pointer kind: W3C trace context, counted.
type countingPropagator struct {
	propagation.TraceContext
	injected atomic.Int32
}

func (c *countingPropagator) Inject(ctx context.Context, carrier propagation.TextMapCarrier) {
	c.injected.Add(1)
	c.TraceContext.Inject(ctx, carrier)
}

func TestDefaultPropagator(t *testing.T) {
	if os.Getenv(ownProcess) == "" {
		run := exec.Command(os.Args[0], "-test.run=^TestDefaultPropagator$", "-test.count=1", "-test.v")
		run.Env = append(os.Environ(), ownProcess+"=1")
		out, err := run.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestDefaultPropagator") {
			t.Fatalf("in its own process: %v\n%s", err, out)
		}
		return
	}
	// A client and a server instrumented as docs/go.md shows: the providers, no propagator.
	call := func(opts ...mcpotel.Option) func(t *testing.T) (client, server testserver.Span) {
		agent, srv := newSide(t), newSide(t)
		server := weatherServer()
		mcpotel.InstrumentServer(server, append([]mcpotel.Option{mcpotel.WithTracerProvider(srv.tp), mcpotel.WithMeterProvider(srv.mp)}, opts...)...)
		client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil)
		mcpotel.InstrumentClient(client, append([]mcpotel.Option{mcpotel.WithTracerProvider(agent.tp), mcpotel.WithMeterProvider(agent.mp)}, opts...)...)
		return func(t *testing.T) (testserver.Span, testserver.Span) {
			t.Helper()
			ctx := context.Background()
			clientTransport, serverTransport := mcp.NewInMemoryTransports()
			serverSession, err := server.Connect(ctx, serverTransport, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer serverSession.Close()
			session, err := client.Connect(ctx, clientTransport, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer session.Close()
			if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": "Oslo"}}); err != nil {
				t.Fatal(err)
			}
			return agent.span(t, "client", "tools/call forecast"), srv.span(t, "server", "tools/call forecast")
		}
	}
	// All instrumented before the application sets a global propagator.
	unset, setLater, setLaterAgain := call(), call(), call()
	explicit := call(mcpotel.WithPropagators(propagator))

	// None set: W3C, one trace.
	client, server := unset(t)
	wantChild(t, server, client)

	// The application sets one after instrumenting: it is used (Baggage alone carries no trace
	// context: the server's span is a root of its own trace), and WithPropagators still wins.
	otel.SetTextMapPropagator(propagation.Baggage{})
	client, server = setLater(t)
	if server.Parent != "" || server.TraceID == client.TraceID {
		t.Errorf("the global Baggage propagator: want the server's span a root of its own trace, got parent %q, trace %s (client's %s)",
			server.Parent, server.TraceID, client.TraceID)
	}
	client, server = explicit(t)
	wantChild(t, server, client)

	// And it is read at each request: another, of pointer kind, is used as soon as it is set.
	own := &countingPropagator{}
	otel.SetTextMapPropagator(own)
	client, server = setLaterAgain(t)
	wantChild(t, server, client)
	if own.injected.Load() == 0 {
		t.Error("the application's propagator injected nothing")
	}
}
