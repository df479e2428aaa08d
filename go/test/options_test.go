//lint:file-ignore SA1019 logging is deprecated from 2026-07-28 on; servers still send it in the deprecation window, and WithProgressAndLogs traces it.

package mcpotel_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
)

// The options docs/go.md lists that no other test uses. (Content capture: content_test.go; the
// remote parent: transparency_test.go; name limits: hostile_test.go and, on resource URIs, here.)

// WithServerIdentity names the server on a server's spans (instead of the Implementation it was
// made with) and, on a client, instead of what the handshake named: on its spans and points alike.
func TestWithServerIdentity(t *testing.T) {
	p := setup{
		srvOpts:   []mcpotel.Option{mcpotel.WithServerIdentity("billing", "9.9.9")},
		agentOpts: []mcpotel.Option{mcpotel.WithServerIdentity("billing-alias", "1.0.0")},
	}.inMemory(t)
	if _, err := p.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		side          *side
		kind          string
		name, version string
	}{{p.server, "server", "billing", "9.9.9"}, {p.agent, "client", "billing-alias", "1.0.0"}} {
		got := c.side.span(t, c.kind, "tools/call echo").Attributes
		if got["mcp.server.name"] != c.name || got["mcp.server.version"] != c.version {
			t.Errorf("%s span names the server %q %q, want %q %q", c.kind, got["mcp.server.name"], got["mcp.server.version"], c.name, c.version)
		}
		metric := map[string]string{"server": serverMetric, "client": clientMetric}[c.kind]
		if names := sortedKeys(c.side.pointValues(t, metric, "mcp.server.name")); !reflect.DeepEqual(names, []string{c.name}) {
			t.Errorf("%s points name the servers %q, want only %q", c.kind, names, c.name)
		}
	}
}

// WithMetricsResourceURI puts mcp.resource.uri on both sides' points, the first distinct ones as
// WithNameLimits keeps names (later ones _OTHER); by default only the spans carry it.
func TestMetricsResourceURIOnlyWhenAsked(t *testing.T) {
	for _, asked := range []bool{false, true} {
		opts := []mcpotel.Option{mcpotel.WithNameLimits(0, 1)}
		if asked {
			opts = append(opts, mcpotel.WithMetricsResourceURI())
		}
		p := setup{srvOpts: opts, agentOpts: opts}.inMemory(t)
		for _, uri := range []string{"file:///a.txt", "file:///b.txt"} {
			// The test server has no resources: each read fails, a point all the same.
			if _, err := p.session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil {
				t.Fatalf("%s: read", uri)
			}
		}
		want := map[string]uint64{}
		if asked {
			want = map[string]uint64{"file:///a.txt": 1, "_OTHER": 1}
		}
		for metric, s := range map[string]*side{clientMetric: p.agent, serverMetric: p.server} {
			if got := s.pointValues(t, metric, "mcp.resource.uri"); !reflect.DeepEqual(got, want) {
				t.Errorf("asked %v: %s points' URIs %v, want %v", asked, metric, got, want)
			}
		}
	}
}

// Progress and log notifications come by the hundred in a long call: they get spans only with
// WithProgressAndLogs, on both sides (the server's sending, the agent's receiving), each the child
// of the tool call it reports on.

func TestProgressAndLogsTracedOnlyWhenAsked(t *testing.T) {
	frequent := []string{"notifications/progress", "notifications/message"}
	for _, asked := range []bool{false, true} {
		t.Run(map[bool]string{false: "by default", true: "WithProgressAndLogs"}[asked], func(t *testing.T) {
			var extra []mcpotel.Option
			if asked {
				extra = append(extra, mcpotel.WithProgressAndLogs())
			}
			agent, server := newSide(t), newSide(t)
			srv := mcp.NewServer(&mcp.Implementation{Name: "reporter", Version: "1.0.0"}, nil)
			mcp.AddTool(srv, &mcp.Tool{Name: "report"}, func(ctx context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
				progress := &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 2}
				if err := req.Session.NotifyProgress(ctx, progress); err != nil {
					return nil, nil, err
				}
				return &mcp.CallToolResult{}, nil, req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "half way"})
			})
			received := make(chan string, 2) // what the agent's handlers got
			client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { received <- frequent[0] },
				LoggingMessageHandler:       func(context.Context, *mcp.LoggingMessageRequest) { received <- frequent[1] },
			})
			mcpotel.InstrumentServer(srv, server.options(extra...)...)
			mcpotel.InstrumentClient(client, agent.options(extra...)...)
			ct, st := mcp.NewInMemoryTransports()
			ctx := context.Background()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			session, err := client.Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = session.Close(); _ = ss.Close() })
			// The log level the call asks for (2026-07-28: each request's _meta; no level, no messages).
			params := &mcp.CallToolParams{Name: "report", Arguments: map[string]any{}, Meta: mcp.Meta{mcp.MetaKeyLogLevel: "info"}}
			params.SetProgressToken("report-1")
			if _, err := session.CallTool(ctx, params); err != nil {
				t.Fatal(err)
			}
			for range frequent {
				select {
				case <-received:
				case <-time.After(waitFor):
					t.Fatal("the agent's handlers never got the progress and the log message")
				}
			}

			call := server.span(t, "server", "tools/call report")
			for _, method := range frequent {
				if !asked {
					// Its middleware decided before the handler ran: a span would have started.
					for _, s := range append(server.spans.Started(), agent.spans.Started()...) {
						if s.Name() == method {
							t.Errorf("a %s span without WithProgressAndLogs", method)
						}
					}
					continue
				}
				sent, got := server.span(t, "client", method), agent.span(t, "server", method)
				if sent.Parent != call.SpanID || got.Parent != sent.SpanID || got.TraceID != call.TraceID {
					t.Errorf("%s: sent %+v, received %+v; want the tool call's child, then the sent one's", method, sent, got)
				}
				if _, ok := sent.Attributes["mcp.request.outcome"]; ok {
					t.Errorf("%s: a notification has no outcome: %v", method, sent.Attributes)
				}
			}
		})
	}
}
