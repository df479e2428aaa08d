package mcpotel_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
	"github.com/mcp-otel/mcp-otel/go/test/internal/testserver"
)

// Tool arguments and results are recorded only with WithContentCapture, as JSON, the values of
// secret-looking keys redacted at any depth, cut to the configured length; so is a JSON-RPC
// error's message (the status description).

var secretArgs = map[string]any{
	"text":     "hi",
	"password": "hunter2",
	"nested":   map[string]any{"api_key": "k-1", "list": []any{map[string]any{"token": "t-1", "ok": 1}}},
}

const (
	redactedArgs = `{"nested":{"api_key":"[REDACTED]","list":[{"ok":1,"token":"[REDACTED]"}]},"password":"[REDACTED]","text":"hi"}`
	// The result as the server's handler returned it, and as the client got it on 2026-07-28
	// (the SDK adds the server's identity to its _meta after the server's middleware); keys in
	// order, as the JSON is decoded to redact it.
	serverResult = `{"content":[{"text":"hi","type":"text"}],"resultType":"complete"}`
	clientResult = `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test-server","version":"1.2.3"}},"content":[{"text":"hi","type":"text"}],"resultType":"complete"}`
)

func contentCalls(t *testing.T, p *pair) {
	t.Helper()
	ctx := context.Background()
	if _, err := p.session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: secretArgs}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.session.CallTool(ctx, &mcp.CallToolParams{Name: "rpcerr", Arguments: map[string]any{"code": -32603, "message": "internal detail"}}); err == nil {
		t.Fatal("rpcerr answered no error")
	}
}

func TestContentCaptureOffByDefault(t *testing.T) {
	p := setup{}.inMemory(t)
	contentCalls(t, p)
	p.server.span(t, "server", "tools/call rpcerr")
	for _, s := range append(p.agent.ended(), p.server.ended()...) {
		for key, value := range s.Attributes {
			if strings.HasPrefix(key, "gen_ai.tool.call.") || strings.Contains(value, "hunter2") {
				t.Errorf("%s %q has %s=%q with capture off", s.Kind, s.Name, key, value)
			}
		}
		if s.Description != "" {
			t.Errorf("%s %q has the status description %q with capture off", s.Kind, s.Name, s.Description)
		}
	}
}

func TestContentCapture(t *testing.T) {
	capture := []mcpotel.Option{mcpotel.WithContentCapture(0)}
	p := setup{agentOpts: capture, srvOpts: capture}.inMemory(t)
	contentCalls(t, p)
	want := toolCall("echo", testserver.ModernProtocol, "").with(okTool)
	wantSpan(t, p.agent.span(t, "client", "tools/call echo"), "client", "tools/call echo", "Unset",
		want.with(attrs{"gen_ai.tool.call.arguments": redactedArgs, "gen_ai.tool.call.result": clientResult}))
	wantSpan(t, p.server.span(t, "server", "tools/call echo"), "server", "tools/call echo", "Unset",
		want.with(attrs{"gen_ai.tool.call.arguments": redactedArgs, "gen_ai.tool.call.result": serverResult}))
	// Points never carry content.
	p.agent.point(t, clientMetric, pointOf(want), 1)
	p.server.point(t, serverMetric, pointOf(want), 1)
	// A JSON-RPC error's message is the status description, on both sides.
	for _, s := range []testserver.Span{p.agent.span(t, "client", "tools/call rpcerr"), p.server.span(t, "server", "tools/call rpcerr")} {
		if s.Status != "Error" || s.Description != "internal detail" {
			t.Errorf("%s span: status %s %q, want Error \"internal detail\"", s.Kind, s.Status, s.Description)
		}
		if _, ok := s.Attributes["gen_ai.tool.call.result"]; ok {
			t.Errorf("%s span of a call answered an error has a result", s.Kind)
		}
	}
}

func TestContentCaptureCut(t *testing.T) {
	capture := []mcpotel.Option{mcpotel.WithContentCapture(20)}
	p := setup{agentOpts: capture, srvOpts: capture}.inMemory(t)
	contentCalls(t, p)
	cut := func(text string) string { return string([]rune(text)[:19]) + "…" }
	for _, s := range []testserver.Span{p.agent.span(t, "client", "tools/call echo"), p.server.span(t, "server", "tools/call echo")} {
		if got, want := s.Attributes["gen_ai.tool.call.arguments"], cut(redactedArgs); got != want {
			t.Errorf("%s arguments %q, want %q", s.Kind, got, want)
		}
		want := cut(serverResult)
		if s.Kind == "client" {
			want = cut(clientResult)
		}
		if got := s.Attributes["gen_ai.tool.call.result"]; got != want {
			t.Errorf("%s result %q, want %q", s.Kind, got, want)
		}
	}
}
