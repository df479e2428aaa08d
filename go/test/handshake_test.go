package mcpotel_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-otel/mcp-otel/go/test/internal/testserver"
)

// How a session starts (2026-07-28: server/discover and no initialize; a server that refuses
// server/discover, or stateful HTTP: initialize at 2025-11-25) and what its spans say of it; and
// a person who declines an elicitation, the only request a server sends in the middle of a call.

// identity is the attributes every span of a method other than tools/call carries.
func identity(method, version, session string) attrs {
	a := attrs{"mcp.method.name": method, "mcp.server.name": testserver.Name, "mcp.server.version": testserver.Version}
	if version != "" {
		a["mcp.protocol.version"] = version
	}
	if session != "" {
		a["mcp.session.id"] = session
	}
	return a
}

var okRequest = attrs{"mcp.request.outcome": "ok"}

// discovered is what a client's server/discover span learns from the answer: the server, named in
// its _meta.
var discovered = attrs{"mcp.method.name": "server/discover", "mcp.server.name": testserver.Name, "mcp.server.version": testserver.Version}

func TestHandshake(t *testing.T) {
	echo := func(t *testing.T, p *pair) {
		if _, err := p.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	// 2026-07-28 (in memory, stdio, stateless HTTP): the client's server/discover, answered; no
	// initialize; every later span names the version.
	modern := func(t *testing.T, p *pair) {
		echo(t, p)
		// The client's discover span and point name the server from the answer's _meta
		// (io.modelcontextprotocol/serverInfo), not the version (the requests after it know it).
		clientAttrs := discovered.with(okRequest)
		client := p.agent.span(t, "client", "server/discover")
		wantSpan(t, client, "client", "server/discover", "Unset", clientAttrs)
		p.agent.point(t, clientMetric, pointOf(clientAttrs), 1)
		serverAttrs := identity("server/discover", testserver.ModernProtocol, "").with(okRequest)
		server := p.serverSpan(t, "server", "server/discover")
		wantSpan(t, server, "server", "server/discover", "Unset", serverAttrs)
		wantChild(t, server, client)
		if p.server != nil {
			p.server.point(t, serverMetric, pointOf(serverAttrs), 1)
		}
		wantSpan(t, p.agent.span(t, "client", "tools/call echo"), "client", "tools/call echo", "Unset",
			toolCall("echo", testserver.ModernProtocol, "").with(okTool))
		for _, spans := range [][]testserver.Span{p.agent.ended(), p.serverSpans()} {
			for _, s := range spans {
				if s.Name == "initialize" || s.Name == "notifications/initialized" {
					t.Errorf("a 2026-07-28 session has a handshake span:\n%s", dump([]testserver.Span{s}))
				}
			}
		}
	}
	t.Run("2026-07-28 in memory", func(t *testing.T) { modern(t, setup{}.inMemory(t)) })
	t.Run("2026-07-28 stdio", func(t *testing.T) { modern(t, setup{}.overStdio(t)) })
	t.Run("2026-07-28 stateless HTTP", func(t *testing.T) {
		p, _ := setup{stateless: true}.overHTTP(t)
		modern(t, p)
	})

	// initialize at 2025-11-25, after the discover: both sides' initialize spans and points name
	// the version the server answered; later spans the session's.
	handshake := func(t *testing.T, p *pair, session string) {
		clientAttrs := identity("initialize", testserver.LegacyProtocol, "").with(okRequest)
		client := p.agent.span(t, "client", "initialize")
		wantSpan(t, client, "client", "initialize", "Unset", clientAttrs)
		p.agent.point(t, clientMetric, pointOf(clientAttrs), 1)
		// The server knows the session id when it handles initialize (it made it); the client
		// learns it from the answer's header, after its span started.
		serverAttrs := identity("initialize", testserver.LegacyProtocol, session).with(okRequest)
		server := p.serverSpan(t, "server", "initialize")
		wantSpan(t, server, "server", "initialize", "Unset", serverAttrs)
		wantChild(t, server, client)
		if p.server != nil {
			p.server.point(t, serverMetric, pointOf(serverAttrs), 1)
		}
		// notifications/initialized: a span on each side, no outcome, no point.
		notified := identity("notifications/initialized", testserver.LegacyProtocol, session)
		sent := p.agent.span(t, "client", "notifications/initialized")
		wantSpan(t, sent, "client", "notifications/initialized", "Unset", notified)
		received := p.serverSpan(t, "server", "notifications/initialized")
		wantSpan(t, received, "server", "notifications/initialized", "Unset", notified)
		wantChild(t, received, sent)
		if methods := p.agent.pointValues(t, clientMetric, "mcp.method.name"); methods["notifications/initialized"] != 0 {
			t.Errorf("a notification has a point: %v", methods)
		}
		wantSpan(t, p.agent.span(t, "client", "tools/call echo"), "client", "tools/call echo", "Unset",
			toolCall("echo", testserver.LegacyProtocol, session).with(okTool))
		wantSpan(t, p.serverSpan(t, "server", "tools/call echo"), "server", "tools/call echo", "Unset",
			toolCall("echo", testserver.LegacyProtocol, session).with(okTool))
	}
	// A server that refuses server/discover (-32601, as servers before 2026-07-28 do): the probe
	// is a negotiation step on both sides (mcp.request.result_type, the code kept, no outcome,
	// no point), then initialize, which names the server on the client's probe span too.
	refused := func(t *testing.T, p *pair) {
		echo(t, p)
		negotiation := attrs{"mcp.request.result_type": "negotiation", "rpc.response.status_code": "-32601"}
		client := p.agent.span(t, "client", "server/discover")
		wantSpan(t, client, "client", "server/discover", "Unset", identity("server/discover", "", "").with(negotiation))
		server := p.serverSpan(t, "server", "server/discover")
		wantSpan(t, server, "server", "server/discover", "Unset", identity("server/discover", testserver.ModernProtocol, "").with(negotiation))
		wantChild(t, server, client)
		if methods := p.agent.pointValues(t, clientMetric, "mcp.method.name"); methods["server/discover"] != 0 {
			t.Errorf("a negotiation step has a point: %v", methods)
		}
		if p.server != nil {
			if methods := p.server.pointValues(t, serverMetric, "mcp.method.name"); methods["server/discover"] != 0 {
				t.Errorf("a negotiation step has a point: %v", methods)
			}
		}
		handshake(t, p, "")
	}
	t.Run("refused discover in memory", func(t *testing.T) { refused(t, setup{legacy: true}.inMemory(t)) })
	t.Run("refused discover stdio", func(t *testing.T) { refused(t, setup{legacy: true}.overStdio(t)) })

	// Stateful streamable HTTP: the server answers the discover (on a session of its own, which
	// it then forgets), but its transport does not serve 2026-07-28; the SDK's client refuses the
	// answer after the middleware saw it (an ok discover span) and falls back to initialize.
	t.Run("stateful HTTP fallback", func(t *testing.T) {
		p, _ := setup{}.overHTTP(t)
		echo(t, p)
		wantSpan(t, p.agent.span(t, "client", "server/discover"), "client", "server/discover", "Unset", discovered.with(okRequest))
		server := p.server.span(t, "server", "server/discover")
		probeSession := server.Attributes["mcp.session.id"]
		if probeSession == "" || probeSession == p.session.ID() {
			t.Errorf("the discover's session %q, the session's %q: want another one", probeSession, p.session.ID())
		}
		wantSpan(t, server, "server", "server/discover", "Unset", identity("server/discover", testserver.ModernProtocol, probeSession).with(okRequest))
		handshake(t, p, p.session.ID())
	})
}

// The person declines the server's elicitation during a tool call: the elicitation/create spans
// (the server's CLIENT span, the agent's SERVER span) are cancelled/input_declined with
// mcp.elicitation.action=decline, and so are the tools/call spans on both sides, as the tool then
// answers isError. A server can send elicitation/create only on a 2025-era session (on
// 2026-07-28 the SDK refuses it before any middleware: input requests go in the result instead).
func TestElicitationDeclined(t *testing.T) {
	decline := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
	run := func(t *testing.T, bare, p *pair) {
		t.Helper()
		call := func(p *pair) (*mcp.CallToolResult, error) {
			return p.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "confirm"})
		}
		bareRes, bareErr := call(bare)
		res, err := call(p)
		same(t, bareRes, bareErr, res, err)
		if res == nil || !res.IsError {
			t.Fatalf("the tool answered %s, want isError", describeResult(res))
		}
		session := p.session.ID()
		declined := cancelledTool("input_declined")
		elicitation := identity("elicitation/create", testserver.LegacyProtocol, session).with(attrs{
			"mcp.elicitation.action":    "decline",
			"mcp.request.outcome":       "cancelled",
			"mcp.request.cancel.reason": "input_declined",
		})
		agentCall := p.agent.span(t, "client", "tools/call confirm")
		wantSpan(t, agentCall, "client", "tools/call confirm", "Unset", toolCall("confirm", testserver.LegacyProtocol, session).with(declined))
		serverCall := p.serverSpan(t, "server", "tools/call confirm")
		wantSpan(t, serverCall, "server", "tools/call confirm", "Unset", toolCall("confirm", testserver.LegacyProtocol, session).with(declined))
		wantChild(t, serverCall, agentCall)
		asked := p.serverSpan(t, "client", "elicitation/create")
		wantSpan(t, asked, "client", "elicitation/create", "Unset", elicitation)
		wantChild(t, asked, serverCall)
		answered := p.agent.span(t, "server", "elicitation/create")
		wantSpan(t, answered, "server", "elicitation/create", "Unset", elicitation)
		wantChild(t, answered, asked)
		p.agent.point(t, clientMetric, pointOf(toolCall("confirm", testserver.LegacyProtocol, "").with(declined)), 1)
		p.agent.point(t, serverMetric, pointOf(elicitation), 1)
		if p.server != nil {
			p.server.point(t, serverMetric, pointOf(toolCall("confirm", testserver.LegacyProtocol, "").with(declined)), 1)
			p.server.point(t, clientMetric, pointOf(elicitation), 1)
		}
	}
	t.Run("in memory", func(t *testing.T) {
		run(t, setup{bare: true, legacy: true, clientOpt: decline}.inMemory(t), setup{legacy: true, clientOpt: decline}.inMemory(t))
	})
	t.Run("stdio", func(t *testing.T) {
		run(t, setup{bare: true, legacy: true, clientOpt: decline}.overStdio(t), setup{legacy: true, clientOpt: decline}.overStdio(t))
	})
	t.Run("stateful HTTP", func(t *testing.T) {
		bare, _ := setup{bare: true, clientOpt: decline}.overHTTP(t)
		p, _ := setup{clientOpt: decline}.overHTTP(t)
		run(t, bare, p)
	})
}
