package mcpotel_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
	"github.com/mcp-otel/mcp-otel/go/test/internal/testserver"
)

// mcpotel.Transport: the wire's facts on the middleware's spans and points (the request id and the
// transport of each request sent; no span of its own), and each session's duration point when its
// connection closes. Without it, the same spans and points lack them (the other tests: their
// exact attributes name neither), and no session point.

const (
	clientSessionMetric = "mcp.client.session.duration"
	serverSessionMetric = "mcp.server.session.duration"
)

func echo(t *testing.T, p *pair) {
	t.Helper()
	if _, err := p.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}
}

// wire is what the wrapper adds to a span: the request's id, the transport.
func wire(id, transport string) attrs {
	return attrs{"jsonrpc.request.id": id, "network.transport": transport}
}

// sessionPoint is a session's point attributes.
func sessionPoint(version string) attrs {
	return attrs{"mcp.server.name": testserver.Name, "mcp.protocol.version": version}
}

// Over stdio (CommandTransport), 2026-07-28: server/discover is request 1, the tool call 2.
func TestTransportStdio(t *testing.T) {
	p := setup{wire: true}.overStdio(t)
	echo(t, p)
	discover := p.agent.span(t, "client", "server/discover")
	wantDiscover := attrs{"mcp.method.name": "server/discover", "mcp.request.outcome": "ok",
		"mcp.server.name": testserver.Name, "mcp.server.version": testserver.Version}.with(wire("1", "pipe"))
	wantSpan(t, discover, "client", "server/discover", "Unset", wantDiscover)
	want := toolCall("echo", testserver.ModernProtocol, "").with(okTool).with(wire("2", "pipe"))
	wantSpan(t, p.agent.span(t, "client", "tools/call echo"), "client", "tools/call echo", "Unset", want)
	p.agent.point(t, clientMetric, pointOf(want), 1)
	p.agent.point(t, clientMetric, pointOf(wantDiscover), 1)
	if spans := p.agent.ended(); len(spans) != 2 {
		t.Errorf("%d spans, want 2 (no span of the wrapper's own):\n%s", len(spans), dump(spans))
	}
	if got := p.agent.points(t, clientSessionMetric); len(got) != 0 {
		t.Errorf("a session point before the session closed: %v", attrsOf(got[0].Attributes))
	}
	if err := p.session.Close(); err != nil {
		t.Fatal(err)
	}
	p.agent.point(t, clientSessionMetric, sessionPoint(testserver.ModernProtocol), 1)
	// The server's (its StdioTransport wrapped): the request it read, found by its traceparent.
	wantSpan(t, p.child.span(t, "server", "tools/call echo"), "server", "tools/call echo", "Unset",
		toolCall("echo", testserver.ModernProtocol, "").with(okTool).with(wire("2", "pipe")))
}

// Over streamable HTTP: stateless (2026-07-28: server/discover 1, the call 2) and stateful
// (server/discover 1, refused by the server, the client falls back to initialize 2; the call 3).
func TestTransportHTTP(t *testing.T) {
	for _, stateless := range []bool{true, false} {
		name := map[bool]string{true: "stateless", false: "stateful"}[stateless]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			version := map[bool]string{true: testserver.ModernProtocol, false: testserver.LegacyProtocol}[stateless]
			p, _ := setup{wire: true, stateless: stateless}.overHTTP(t)
			echo(t, p)
			session := ""
			if !stateless {
				session = p.session.ID()
			}
			ids := map[bool][2]string{true: {"1", "2"}, false: {"2", "3"}}[stateless]
			want := toolCall("echo", version, session).with(okTool).with(wire(ids[1], "tcp"))
			wantSpan(t, p.agent.span(t, "client", "tools/call echo"), "client", "tools/call echo", "Unset", want)
			p.agent.point(t, clientMetric, pointOf(want), 1)
			first := map[bool]string{true: "server/discover", false: "initialize"}[stateless]
			if got := p.agent.span(t, "client", first).Attributes; got["jsonrpc.request.id"] != ids[0] || got["network.transport"] != "tcp" {
				t.Errorf("%s: %v", first, got)
			}
			if err := p.session.Close(); err != nil {
				t.Fatal(err)
			}
			p.agent.point(t, clientSessionMetric, sessionPoint(version), 1)
		})
	}
}

// The server process dies mid-call: the client's session ended with connection_closed.
func TestTransportServerDies(t *testing.T) {
	p := setup{wire: true}.overStdio(t)
	if _, err := p.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "die"}); err == nil {
		t.Fatal("the call to a dying server succeeded")
	}
	want := toolCall("die", testserver.ModernProtocol, "").with(closedTool).with(wire("2", "pipe"))
	wantSpan(t, p.agent.span(t, "client", "tools/call die"), "client", "tools/call die", "Error", want)
	_ = p.session.Close()
	p.agent.point(t, clientSessionMetric, sessionPoint(testserver.ModernProtocol).with(attrs{"error.type": "connection_closed"}), 1)
}

// Both sides wrapped, in memory (a transport with no network.transport), the handshake at
// 2025-11-25 (server/discover 1, refused; initialize 2; the call 3): each side's session point,
// the id on both spans.
func TestTransportInMemory(t *testing.T) {
	p := setup{wire: true, legacy: true}.inMemory(t)
	echo(t, p)
	want := toolCall("echo", testserver.LegacyProtocol, "").with(okTool)
	wantSpan(t, p.agent.span(t, "client", "tools/call echo"), "client", "tools/call echo", "Unset", want.with(attrs{"jsonrpc.request.id": "3"}))
	wantSpan(t, p.server.span(t, "server", "tools/call echo"), "server", "tools/call echo", "Unset", want.with(attrs{"jsonrpc.request.id": "3"}))
	if err := p.session.Close(); err != nil {
		t.Fatal(err)
	}
	p.agent.point(t, clientSessionMetric, sessionPoint(testserver.LegacyProtocol), 1)
	p.server.point(t, serverSessionMetric, sessionPoint(testserver.LegacyProtocol), 1)
}

// Unwrapped: no session points (and, the other tests show, no request ids).
func TestNoTransportNoSessionPoints(t *testing.T) {
	p := setup{legacy: true}.inMemory(t)
	echo(t, p)
	_ = p.session.Close()
	p.agent.span(t, "client", "tools/call echo")
	for _, s := range []*side{p.agent, p.server} {
		for _, name := range []string{clientSessionMetric, serverSessionMetric} {
			if got := s.points(t, name); len(got) != 0 {
				t.Errorf("%s without the wrapper: %v", name, attrsOf(got[0].Attributes))
			}
		}
	}
}

// A streamable HTTP server that connects its own transport (mcp.StreamableHTTPHandler makes its
// transports itself, with no hook to wrap them): the id and tcp on its SERVER span too.
func TestTransportHTTPServer(t *testing.T) {
	s := setup{wire: true}
	p := s.make(t)
	st := &mcp.StreamableServerTransport{SessionID: "wired"}
	ss, err := p.srv.Connect(context.Background(), mcpotel.Transport(st, p.server.options()...), nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(st)
	t.Cleanup(hs.Close)
	p.session, err = p.client.Connect(context.Background(), s.transport(&mcp.StreamableClientTransport{Endpoint: hs.URL}, p.agent), nil)
	if err != nil {
		t.Fatal(err)
	}
	echo(t, p)
	client := p.agent.span(t, "client", "tools/call echo")
	server := p.server.span(t, "server", "tools/call echo")
	// A stateful session: server/discover 1 refused, initialize 2 at 2025-11-25, the call 3.
	want := toolCall("echo", testserver.LegacyProtocol, "wired").with(okTool).with(wire("3", "tcp"))
	wantSpan(t, client, "client", "tools/call echo", "Unset", want)
	wantSpan(t, server, "server", "tools/call echo", "Unset", want)
	wantChild(t, server, client)
	p.server.point(t, serverMetric, pointOf(want), 1)
	_ = p.session.Close()
	_ = ss.Close()
}

// A caller that propagates no trace context: the wrapped server cannot tell which request it read
// its middleware handles, and records no id (never a guessed one).
func TestTransportUntracedCaller(t *testing.T) {
	p := setup{wire: true, legacy: true}.make(t)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := p.srv.Connect(ctx, mcpotel.Transport(st, p.server.options()...), nil)
	if err != nil {
		t.Fatal(err)
	}
	p.session, err = mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	echo(t, p)
	_ = p.session.Close()
	_ = ss.Wait()
	wantSpan(t, p.server.span(t, "server", "tools/call echo"), "server", "tools/call echo", "Unset",
		toolCall("echo", testserver.LegacyProtocol, "").with(okTool))
	p.server.point(t, serverSessionMetric, sessionPoint(testserver.LegacyProtocol), 1)
}

// The caller cancels a call: the SDK's notifications/cancelled carries no trace context, and the
// server's span of it is a child of the cancelled call's SERVER span, found by the request id the
// wrapped connection read (unwrapped: a root, TestCancelAnswered).
func TestTransportCancelParent(t *testing.T) {
	for _, how := range []string{"in memory", "stdio"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			var p *pair
			var serverSpan func(kind, name string) testserver.Span
			if how == "stdio" {
				p = setup{wire: true}.overStdio(t)
				serverSpan = func(kind, name string) testserver.Span { return p.child.span(t, kind, name) }
			} else {
				p = setup{wire: true}.inMemory(t)
				serverSpan = func(kind, name string) testserver.Span { return p.server.span(t, kind, name) }
			}
			if _, err := scenarioNamed(t, "caller cancel").call(t, p); !errors.Is(err, context.Canceled) {
				t.Fatalf("the caller's cancel: %v", err)
			}
			call := serverSpan("server", "tools/call slow")
			wantSpan(t, call, "server", "tools/call slow", "Unset", toolCall("slow", testserver.ModernProtocol, "").
				with(cancelledTool("client")).with(wire("2", map[string]string{"stdio": "pipe", "in memory": ""}[how])))
			cancel := serverSpan("server", "notifications/cancelled")
			wantSpan(t, cancel, "server", "notifications/cancelled", "Unset", attrs{
				"mcp.method.name":      "notifications/cancelled",
				"mcp.protocol.version": testserver.ModernProtocol,
				"mcp.server.name":      testserver.Name,
				"mcp.server.version":   testserver.Version,
			})
			wantChild(t, cancel, call)
		})
	}
}
