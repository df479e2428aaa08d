package mcpotel_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-otel/mcp-otel/go/test/internal/testserver"
)

// Every way a tools/call ends, over each transport, as each side records it (docs/outcomes.md),
// and, run again without mcpotel, what the program sees: the same result and the same error.

// scenario is one tools/call: what the caller does and how each side records it.
type scenario struct {
	name     string
	tool     string
	args     map[string]any
	cancel   bool          // the caller cancels its context once the tool started
	deadline time.Duration // the caller's deadline
	// The outcome attributes and status of the client's and the server's span.
	client, server             attrs
	clientStatus, serverStatus string
}

// scenarios end a call each way both sides can see, whatever the transport.
var scenarios = []scenario{
	{name: "ok", tool: "echo", args: map[string]any{"text": "hi"},
		client: okTool, clientStatus: "Unset", server: okTool, serverStatus: "Unset"},
	// The handler's Go error: the SDK answers a result with isError.
	{name: "tool error", tool: "fail",
		client: toolError, clientStatus: "Error", server: toolError, serverStatus: "Error"},
	// A *jsonrpc.Error from the handler is answered as itself: a caller-fault code leaves the
	// server's span UNSET without error.type; a server-side code is the server's failure too.
	{name: "caller-fault code", tool: "rpcerr", args: map[string]any{"code": -32602, "message": "bad argument"},
		client: rpcTool("-32602", false), clientStatus: "Error", server: rpcTool("-32602", true), serverStatus: "Unset"},
	{name: "internal error code", tool: "rpcerr", args: map[string]any{"code": -32603, "message": "internal"},
		client: rpcTool("-32603", false), clientStatus: "Error", server: rpcTool("-32603", false), serverStatus: "Error"},
	{name: "implementation code", tool: "rpcerr", args: map[string]any{"code": -32099, "message": "custom"},
		client: rpcTool("-32099", false), clientStatus: "Error", server: rpcTool("-32099", false), serverStatus: "Error"},
	// The SDK's -32602 for a tool it does not have: the caller's fault on the server.
	{name: "unknown tool", tool: "nosuch",
		client: rpcTool("-32602", false), clientStatus: "Error", server: rpcTool("-32602", true), serverStatus: "Unset"},
	// The caller's cancel: its own choice on the client, the client's on the server (which is
	// told by notifications/cancelled, or over stateless HTTP by the end of the request). The
	// SDK then still answers the handler's ctx.Err() as an IsError result: still cancelled.
	{name: "caller cancel", tool: "slow", cancel: true,
		client: cancelledTool("caller"), clientStatus: "Unset", server: cancelledTool("client"), serverStatus: "Unset"},
	// The caller's deadline: a timeout for the caller, the client's cancel for the server.
	{name: "caller deadline", tool: "slow", deadline: 300 * time.Millisecond,
		client: timeoutTool, clientStatus: "Error", server: cancelledTool("client"), serverStatus: "Unset"},
}

// call makes the scenario's call on p's session.
func (sc scenario) call(t testing.TB, p *pair) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if sc.deadline > 0 {
		ctx, cancel = context.WithTimeout(ctx, sc.deadline)
		defer cancel()
	}
	if sc.cancel {
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			if err := p.awaitStarted(sc.tool); err != nil {
				t.Error(err)
			}
			cancel()
		}()
	}
	return p.session.CallTool(ctx, &mcp.CallToolParams{Name: sc.tool, Arguments: sc.args})
}

// check asserts both sides' span and point of the scenario's call at protocol version (session:
// the session id both sides know, or "").
func (sc scenario) check(t testing.TB, p *pair, version, session string) {
	t.Helper()
	name := "tools/call " + sc.tool
	clientAttrs := toolCall(sc.tool, version, session).with(sc.client)
	client := p.agent.span(t, "client", name)
	wantSpan(t, client, "client", name, sc.clientStatus, clientAttrs)
	if client.Parent != "" {
		t.Errorf("the client span has a parent (%s): the caller had no span", client.Parent)
	}
	p.agent.point(t, clientMetric, pointOf(clientAttrs), 1)
	if sc.server == nil {
		return
	}
	serverAttrs := toolCall(sc.tool, version, session).with(sc.server)
	server := p.serverSpan(t, "server", name)
	wantSpan(t, server, "server", name, sc.serverStatus, serverAttrs)
	wantChild(t, server, client)
	if p.server != nil {
		p.server.point(t, serverMetric, pointOf(serverAttrs), 1)
	}
}

// same asserts that the instrumented program saw what the bare one saw: the same result, deep
// equal, and an error that is the same text (ports aside) and matches the same sentinels
// (context.Canceled, DeadlineExceeded, io.EOF, mcp.ErrConnectionClosed, *jsonrpc.Error and its
// code) exactly when the bare one does.
func same(t testing.TB, bareRes *mcp.CallToolResult, bareErr error, res *mcp.CallToolResult, err error) {
	t.Helper()
	if !reflect.DeepEqual(bareRes, res) {
		t.Errorf("result:\n  bare:         %s\n  instrumented: %s", describeResult(bareRes), describeResult(res))
	}
	if bare, got := comparable(bareErr), comparable(err); bare != got {
		t.Errorf("error:\n  bare:         %s\n  instrumented: %s", bare, got)
	}
}

var port = regexp.MustCompile(`127\.0\.0\.1:\d+|session ID: \w+`)

func comparable(err error) string {
	return fmt.Sprintf("%T %s", err, port.ReplaceAllString(testserver.Describe(err), "…"))
}

func describeResult(res *mcp.CallToolResult) string {
	if res == nil {
		return "<nil>"
	}
	var texts []string
	for _, c := range res.Content {
		if text, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, text.Text)
		}
	}
	return fmt.Sprintf("text=%q isError=%v meta=%v", texts, res.IsError, res.Meta)
}

// run makes each scenario's call instrumented and bare on fresh pairs from connect.
func runScenarios(t *testing.T, list []scenario, version string, connect func(t *testing.T, s setup) *pair, s setup) {
	for _, sc := range list {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			bare := s
			bare.bare = true
			bp := connect(t, bare)
			bareRes, bareErr := sc.call(t, bp)
			p := connect(t, s)
			res, err := sc.call(t, p)
			same(t, bareRes, bareErr, res, err)
			t.Logf("the caller got %s (%s)", comparable(err), describeResult(res))
			session := ""
			if !s.stateless && p.session.ID() != "" {
				session = p.session.ID()
			}
			sc.check(t, p, version, session)
		})
	}
}

func TestInMemory(t *testing.T) {
	runScenarios(t, scenarios, testserver.ModernProtocol, func(t *testing.T, s setup) *pair { return s.inMemory(t) }, setup{})
}

// After the caller's cancel the SDK still answers the handler's ctx.Err() as an IsError result
// (the client, having given up, drops it): the server's span stays cancelled/client, not
// failed/tool_error. The cancel the client sends is a notification: a span with no outcome (the
// SDK sends it past the middleware, so a root), and no point.
func TestCancelAnswered(t *testing.T) {
	answered := make(chan *mcp.CallToolResult, 1)
	inner := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.CallToolResult); ok && method == "tools/call" {
				answered <- r
			}
			return res, err
		}
	}
	p := setup{inner: []mcp.Middleware{inner}}.inMemory(t)
	sc := scenarioNamed(t, "caller cancel")
	if _, err := sc.call(t, p); !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller's cancel: %v", err)
	}
	res := <-answered
	if !res.IsError || res.Content[0].(*mcp.TextContent).Text != "context canceled" {
		t.Errorf("the handler answered %s, want isError \"context canceled\"", describeResult(res))
	}
	sc.check(t, p, testserver.ModernProtocol, "")
	got := p.server.span(t, "server", "notifications/cancelled")
	wantSpan(t, got, "server", "notifications/cancelled", "Unset", attrs{
		"mcp.method.name":      "notifications/cancelled",
		"mcp.protocol.version": testserver.ModernProtocol,
		"mcp.server.name":      testserver.Name,
		"mcp.server.version":   testserver.Version,
	})
	if got.Parent != "" {
		t.Errorf("notifications/cancelled has a parent: the SDK sends it itself, past the middleware")
	}
	if methods := p.server.pointValues(t, serverMetric, "mcp.method.name"); methods["notifications/cancelled"] != 0 {
		t.Errorf("a notification has a point: %v", methods)
	}
}

func scenarioNamed(t testing.TB, name string) scenario {
	for _, sc := range scenarios {
		if sc.name == name {
			return sc
		}
	}
	t.Fatalf("no scenario %q", name)
	return scenario{}
}
