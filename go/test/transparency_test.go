package mcpotel_test

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"regexp"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/baggage"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
	"github.com/mcp-otel/mcp-otel/go/test/internal/testserver"
)

// What mcpotel adds to a request is the trace context in a copy of its _meta: the handler gets
// every _meta key the SDK and the caller put there, and the caller's params and their Meta map
// are left as they would be without mcpotel. (Results and errors: outcomes_test.go runs every
// scenario bare and instrumented and compares them.)

var traceparent = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-01$`)

// metaCall calls the meta tool with params; it returns the _meta the handler received.
func metaCall(t *testing.T, p *pair, params *mcp.CallToolParams) map[string]any {
	t.Helper()
	res, err := p.session.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	received := map[string]any{} // the handler's "null" (no _meta) as no keys
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &received); err != nil {
		t.Fatal(err)
	}
	if received == nil {
		received = map[string]any{}
	}
	return received
}

// snapshot is a deep copy of params, to compare with after the call.
func snapshot(params *mcp.CallToolParams) *mcp.CallToolParams {
	copied := *params
	copied.Meta = maps.Clone(params.Meta)
	if args, ok := params.Arguments.(map[string]any); ok {
		copied.Arguments = maps.Clone(args)
	}
	return &copied
}

func TestMetaReachesHandler(t *testing.T) {
	for _, transport := range []struct {
		name    string
		version string
		connect func(t *testing.T, s setup) *pair
	}{
		{"in memory", testserver.ModernProtocol, func(t *testing.T, s setup) *pair { return s.inMemory(t) }},
		{"stdio", testserver.ModernProtocol, func(t *testing.T, s setup) *pair { return s.overStdio(t) }},
		{"stateful HTTP", testserver.LegacyProtocol, func(t *testing.T, s setup) *pair { p, _ := s.overHTTP(t); return p }},
	} {
		for _, withMeta := range []bool{true, false} {
			name := transport.name + map[bool]string{true: " with _meta", false: " without _meta"}[withMeta]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				params := func() *mcp.CallToolParams {
					p := &mcp.CallToolParams{Name: "meta", Arguments: map[string]any{"k": "v"}}
					if withMeta {
						p.Meta = mcp.Meta{"progressToken": "pt-1", "example.com/custom": "x"}
					}
					return p
				}
				bareParams, instrumentedParams := params(), params()
				before := snapshot(instrumentedParams)
				bareReceived := metaCall(t, transport.connect(t, setup{bare: true}), bareParams)
				p := transport.connect(t, setup{})
				received := metaCall(t, p, instrumentedParams)

				// The handler got what it gets without mcpotel, and the trace context: a traceparent
				// naming the client's span.
				client := p.agent.span(t, "client", "tools/call meta")
				got, _ := received["traceparent"].(string)
				if m := traceparent.FindStringSubmatch(got); m == nil || m[1] != client.TraceID || m[2] != client.SpanID {
					t.Errorf("traceparent %q, want the client span's (trace %s, span %s)", got, client.TraceID, client.SpanID)
				}
				delete(received, "traceparent")
				if !reflect.DeepEqual(received, bareReceived) {
					t.Errorf("the handler's _meta:\n  bare:         %v\n  instrumented: %v (traceparent aside)", bareReceived, received)
				}
				var want []string
				if withMeta {
					want = append(want, "progressToken", "example.com/custom")
				}
				if transport.version == testserver.ModernProtocol {
					want = append(want, "io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/clientCapabilities")
				}
				for _, key := range want {
					if _, ok := received[key]; !ok {
						t.Errorf("the handler did not get _meta[%q]: %v", key, received)
					}
				}

				// The caller's params: as the bare call left them (the SDK itself adds its
				// 2026-07-28 keys to the caller's Meta, with or without mcpotel), no trace context.
				if !reflect.DeepEqual(instrumentedParams, bareParams) {
					t.Errorf("the caller's params after the call:\n  bare:         %+v\n  instrumented: %+v", bareParams, instrumentedParams)
				}
				if _, ok := instrumentedParams.Meta["traceparent"]; ok {
					t.Errorf("the caller's Meta got the trace context: %v", instrumentedParams.Meta)
				}
				if transport.version == testserver.LegacyProtocol && !reflect.DeepEqual(instrumentedParams, before) {
					t.Errorf("the caller's params changed: %+v, was %+v", instrumentedParams, before)
				}
				if !reflect.DeepEqual(instrumentedParams.Arguments, before.Arguments) {
					t.Errorf("the caller's arguments changed: %v, was %v", instrumentedParams.Arguments, before.Arguments)
				}
			})
		}
	}
}

// The caller's span is the client span's parent; the client span the server span's; the
// conversation in the caller's baggage is on both spans and on no point. WithoutRemoteParent: the
// server's span is a root linked to the client's, and takes no baggage from the peer.
func TestPropagation(t *testing.T) {
	for _, trusted := range []bool{true, false} {
		name := map[bool]string{true: "parent", false: "WithoutRemoteParent"}[trusted]
		t.Run(name, func(t *testing.T) {
			s := setup{}
			if !trusted {
				s.srvOpts = []mcpotel.Option{mcpotel.WithoutRemoteParent()}
			}
			p := s.inMemory(t)
			member, err := baggage.NewMemberRaw("gen_ai.conversation.id", "conv-42")
			if err != nil {
				t.Fatal(err)
			}
			bag, _ := baggage.New(member)
			ctx, turn := p.agent.tp.Tracer("agent").Start(baggage.ContextWithBaggage(context.Background(), bag), "agent turn")
			if _, err := p.session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
				t.Fatal(err)
			}
			turn.End()
			conversation := attrs{"gen_ai.conversation.id": "conv-42"}
			client := p.agent.span(t, "client", "tools/call echo")
			wantSpan(t, client, "client", "tools/call echo", "Unset", toolCall("echo", testserver.ModernProtocol, "").with(okTool).with(conversation))
			if client.TraceID != turn.SpanContext().TraceID().String() || client.Parent != turn.SpanContext().SpanID().String() {
				t.Errorf("the client span is not the caller's span's child")
			}
			server := p.server.span(t, "server", "tools/call echo")
			if trusted {
				wantSpan(t, server, "server", "tools/call echo", "Unset", toolCall("echo", testserver.ModernProtocol, "").with(okTool).with(conversation))
				wantChild(t, server, client)
			} else {
				wantSpan(t, server, "server", "tools/call echo", "Unset", toolCall("echo", testserver.ModernProtocol, "").with(okTool))
				if server.Parent != "" || server.TraceID == client.TraceID || len(server.Links) != 1 || server.Links[0] != client.SpanID {
					t.Errorf("want a root span linked to the client's (%s):\n%s", client.SpanID, dump([]testserver.Span{server}))
				}
			}
			p.agent.point(t, clientMetric, pointOf(toolCall("echo", testserver.ModernProtocol, "").with(okTool)), 1)
			p.server.point(t, serverMetric, pointOf(toolCall("echo", testserver.ModernProtocol, "").with(okTool)), 1)
		})
	}
}
