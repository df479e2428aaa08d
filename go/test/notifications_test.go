//lint:file-ignore SA1019 logging is deprecated from 2026-07-28 on; servers still send it in the deprecation window, and WithProgressAndLogs traces it.

package mcpotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
)

// Progress and log notifications come by the hundred in a long call: they get spans only with
// WithProgressAndLogs (docs/go.md's options), on both sides (the server's sending, the agent's
// receiving), each the child of the tool call it reports on.

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
