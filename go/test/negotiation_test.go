package mcpotel_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// A server/discover probe the server refuses names its server: its CLIENT span waits for the
// handshake that follows (initialize), ends at the time the refusal came, and says the server's
// name and version the handshake learnt; still a negotiation step (no outcome, no point). A
// handshake that fails ends it unnamed. (TestHandshake's refused cases in memory and over stdio
// assert the same span.)

// refusedProbe is the client's span of a refused probe, named by the handshake after it.
var refusedProbe = identity("server/discover", "", "").with(attrs{"mcp.request.result_type": "negotiation", "rpc.response.status_code": "-32601"})

// wantProbeEndedWhenAnswered asserts that the agent's probe span ended before its initialize
// span started: it ends when the refusal came, not when the handshake named the server.
func wantProbeEndedWhenAnswered(t *testing.T, p *pair) {
	t.Helper()
	var probe, initialize sdktrace.ReadOnlySpan
	for _, s := range p.agent.spans.Ended() {
		switch s.Name() {
		case "server/discover":
			probe = s
		case "initialize":
			initialize = s
		}
	}
	if probe == nil || initialize == nil {
		t.Fatalf("probe %v, initialize %v", probe, initialize)
	}
	if probe.EndTime().After(initialize.StartTime()) {
		t.Errorf("the probe ended at %v, after the initialize started (%v)", probe.EndTime(), initialize.StartTime())
	}
}

func TestRefusedDiscoverNamesItsServer(t *testing.T) {
	// Over HTTP the SDK's stateful server refuses it with an HTTP status, not JSON-RPC (a Python
	// server of the older protocol's refusal: tests/go).
	t.Run("in memory", func(t *testing.T) {
		p := setup{legacy: true}.inMemory(t)
		wantSpan(t, p.agent.span(t, "client", "server/discover"), "client", "server/discover", "Unset", refusedProbe)
		wantProbeEndedWhenAnswered(t, p)
		if methods := p.agent.pointValues(t, clientMetric, "mcp.method.name"); methods["server/discover"] != 0 || methods["initialize"] != 1 {
			t.Errorf("points by method: %v, want initialize's only", methods)
		}
	})
	// With the transport wrapper: the request's id too, as on every span it sent.
	t.Run("wrapped transport over stdio", func(t *testing.T) {
		p := setup{legacy: true, wire: true}.overStdio(t)
		wantSpan(t, p.agent.span(t, "client", "server/discover"), "client", "server/discover", "Unset", refusedProbe.with(wire("1", "pipe")))
	})
	// The handshake refused too: the probe ends unnamed, when the handshake's answer came.
	t.Run("handshake refused", func(t *testing.T) {
		p := setup{legacy: true}.make(t)
		p.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "initialize" {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "not today"}
				}
				return next(ctx, method, req)
			}
		})
		ct, st := mcp.NewInMemoryTransports()
		ss, err := p.srv.Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Close() })
		if _, err := p.client.Connect(context.Background(), ct, nil); err == nil {
			t.Fatal("the client connected, want the handshake refused")
		}
		wantSpan(t, p.agent.span(t, "client", "server/discover"), "client", "server/discover", "Unset",
			attrs{"mcp.method.name": "server/discover", "mcp.request.result_type": "negotiation", "rpc.response.status_code": "-32601"})
		wantProbeEndedWhenAnswered(t, p)
	})
}
