package mcpotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
	"github.com/mcp-otel/mcp-otel/go/test/internal/testserver"
)

// A peer's _meta and names are hostile input: a raw JSON-RPC peer sends what no SDK would, and
// the server neither panics nor fails the call, parents its span only to a valid trace context,
// and bounds what it records.

// rawPeer is a JSON-RPC connection to an instrumented server in memory, speaking 2026-07-28
// (each request names its version and capabilities in _meta: no handshake).
type rawPeer struct {
	conn mcp.Connection
	id   int64
}

func newRawPeer(t *testing.T, s setup) (*rawPeer, *pair) {
	t.Helper()
	p := s.make(t)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := p.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(); _ = ss.Close() })
	return &rawPeer{conn: conn}, p
}

// envelope is a 2026-07-28 request's _meta, with extra keys.
func envelope(extra map[string]any) map[string]any {
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    testserver.ModernProtocol,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	for k, v := range extra {
		meta[k] = v
	}
	return meta
}

// call sends a tools/call with params and returns its answer.
func (r *rawPeer) call(t *testing.T, params any) *jsonrpc.Response {
	t.Helper()
	r.id++
	raw, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := jsonrpc.MakeID(float64(r.id))
	ctx := context.Background()
	if err := r.conn.Write(ctx, &jsonrpc.Request{ID: id, Method: "tools/call", Params: raw}); err != nil {
		t.Fatal(err)
	}
	msg, err := r.conn.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, ok := msg.(*jsonrpc.Response)
	if !ok || res.ID != id {
		t.Fatalf("answer %#v, want the response to %v", msg, id)
	}
	return res
}

const (
	validTrace  = "0af7651916cd43dd8448eb211c80319c"
	validParent = "b7ad6b7169203331"
)

func TestHostileMeta(t *testing.T) {
	valid := "00-" + validTrace + "-" + validParent + "-01"
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name         string
		meta         map[string]any
		parented     bool   // to the valid traceparent
		conversation string // gen_ai.conversation.id on the span
	}{
		{name: "non-string traceparent", meta: map[string]any{"traceparent": 42}},
		{name: "object traceparent, number baggage", meta: map[string]any{"traceparent": map[string]any{"a": []any{1}}, "baggage": 5}},
		{name: "bad traceparent", meta: map[string]any{"traceparent": "garbage"}},
		{name: "zero trace id", meta: map[string]any{"traceparent": "00-00000000000000000000000000000000-" + validParent + "-01"}},
		{name: "huge traceparent", meta: map[string]any{"traceparent": valid + strings.Repeat("0", 100_000)}},
		{name: "bad traceparent, huge baggage", meta: map[string]any{"traceparent": "garbage", "baggage": strings.Repeat("k=v,", 30_000)}},
		{name: "valid traceparent, huge baggage", meta: map[string]any{"traceparent": valid, "baggage": "gen_ai.conversation.id=c1," + strings.Repeat("k=v,", 30_000)}, parented: true},
		{name: "valid traceparent, bad baggage", meta: map[string]any{"traceparent": valid, "baggage": "=;;,=="}, parented: true},
		{name: "valid, with a conversation", meta: map[string]any{"traceparent": valid, "baggage": "gen_ai.conversation.id=conv-7"}, parented: true, conversation: "conv-7"},
		{name: "valid, a long conversation id", meta: map[string]any{"traceparent": valid, "baggage": "gen_ai.conversation.id=" + long}, parented: true, conversation: long[:255] + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peer, p := newRawPeer(t, setup{})
			res := peer.call(t, map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}, "_meta": envelope(tc.meta)})
			if res.Error != nil || !strings.Contains(string(res.Result), `"text":"hi"`) {
				t.Fatalf("answer %s, error %v: want the tool's result", res.Result, res.Error)
			}
			got := p.server.span(t, "server", "tools/call echo")
			want := toolCall("echo", testserver.ModernProtocol, "").with(okTool)
			if tc.conversation != "" {
				want["gen_ai.conversation.id"] = tc.conversation
			}
			wantSpan(t, got, "server", "tools/call echo", "Unset", want)
			if tc.parented != (got.Parent == validParent && got.TraceID == validTrace) || (!tc.parented && got.Parent != "") {
				t.Errorf("parent %s in trace %s; want parented to the valid context: %v", got.Parent, got.TraceID, tc.parented)
			}
			p.server.point(t, serverMetric, pointOf(toolCall("echo", testserver.ModernProtocol, "").with(okTool)), 1)
		})
	}

	// _meta that is no object: the SDK refuses the params before any middleware (-32602); no
	// span, no panic, and the session serves on.
	t.Run("_meta not an object", func(t *testing.T) {
		peer, p := newRawPeer(t, setup{})
		res := peer.call(t, map[string]any{"name": "echo", "_meta": "notanobject"})
		if res.Error == nil {
			t.Fatalf("answer %s, want an error", res.Result)
		}
		if res := peer.call(t, map[string]any{"name": "echo", "arguments": map[string]any{"text": "again"}, "_meta": envelope(nil)}); res.Error != nil {
			t.Fatalf("the next call: %v", res.Error)
		}
		p.server.span(t, "server", "tools/call echo") // exactly one: the second call's
	})
}

// A peer's tool name is cut to 256 characters on spans (the name and gen_ai.tool.name), and
// metrics keep the first 100 distinct names: later ones read _OTHER (spans keep the real names).
func TestNamesBounded(t *testing.T) {
	t.Run("huge name", func(t *testing.T) {
		peer, p := newRawPeer(t, setup{})
		res := peer.call(t, map[string]any{"name": strings.Repeat("x", 10_000), "_meta": envelope(nil)})
		if res.Error == nil || res.Error.(*jsonrpc.Error).Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("answer %v, want -32602 (unknown tool)", res.Error)
		}
		bounded := strings.Repeat("x", 255) + "…"
		want := toolCall(bounded, testserver.ModernProtocol, "").with(rpcTool("-32602", true))
		wantSpan(t, p.server.span(t, "server", "tools/call "+bounded), "server", "tools/call "+bounded, "Unset", want)
		p.server.point(t, serverMetric, pointOf(want), 1)
	})
	for _, limit := range []int{100, 10} {
		t.Run(fmt.Sprintf("%d names", limit), func(t *testing.T) {
			s := setup{}
			if limit != 100 {
				s.srvOpts = []mcpotel.Option{mcpotel.WithNameLimits(0, limit)}
			}
			peer, p := newRawPeer(t, s)
			const calls = 150
			for i := range calls {
				peer.call(t, map[string]any{"name": fmt.Sprintf("tool-%03d", i), "_meta": envelope(nil)})
			}
			names := p.server.pointValues(t, serverMetric, "gen_ai.tool.name")
			if len(names) != limit+1 || names["_OTHER"] != uint64(calls-limit) {
				t.Errorf("%d point names (%d _OTHER), want %d and _OTHER for the %d others: %v", len(names), names["_OTHER"], limit+1, calls-limit, sortedKeys(names))
			}
			for i := range limit {
				if names[fmt.Sprintf("tool-%03d", i)] != 1 {
					t.Errorf("tool-%03d, one of the first %d, has no point of its own", i, limit)
				}
			}
			spanNames := map[string]bool{}
			for _, s := range p.server.ended() {
				spanNames[s.Attributes["gen_ai.tool.name"]] = true
			}
			if len(spanNames) != calls {
				t.Errorf("%d distinct tool names on spans, want %d", len(spanNames), calls)
			}
		})
	}
}

// A server's answer to server/discover names it in _meta as it likes: the client's span takes a
// name that is a string, bounded, and nothing else.
func TestHostileServerInfo(t *testing.T) {
	long := strings.Repeat("n", 300)
	cases := []struct {
		name string
		info any
		want attrs
	}{
		{"a number", map[string]any{"name": 42, "version": "1"}, attrs{}},
		{"a list", []any{"weather"}, attrs{}},
		{"no name", map[string]any{"version": "1"}, attrs{}},
		{"long, a number for a version", map[string]any{"name": long, "version": 7}, attrs{"mcp.server.name": long[:255] + "…"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			claim := func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					res, err := next(ctx, method, req)
					if discovered, ok := res.(*mcp.DiscoverResult); ok {
						discovered.SetMeta(map[string]any{mcp.MetaKeyServerInfo: c.info})
					}
					return res, err
				}
			}
			p := setup{inner: []mcp.Middleware{claim}}.inMemory(t)
			want := attrs{"mcp.method.name": "server/discover"}.with(okRequest).with(c.want)
			wantSpan(t, p.agent.span(t, "client", "server/discover"), "client", "server/discover", "Unset", want)
		})
	}
}
