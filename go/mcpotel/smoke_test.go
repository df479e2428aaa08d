package mcpotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
)

func TestSmoke(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	opts := []mcpotel.Option{mcpotel.WithTracerProvider(tp), mcpotel.WithMeterProvider(mp), mcpotel.WithPropagators(propagation.TraceContext{})}
	server := mcp.NewServer(&mcp.Implementation{Name: "go-server", Version: "1.0.0"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, args in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Text}}}, nil, nil
	})
	mcp.AddTool(server, &mcp.Tool{Name: "slow"}, func(ctx context.Context, req *mcp.CallToolRequest, args in) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	mcpotel.InstrumentServer(server, opts...)
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil)
	mcpotel.InstrumentClient(client, opts...)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := server.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	session, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	cctx2, cancel2 := context.WithCancel(ctx)
	go func() { time.Sleep(50 * time.Millisecond); cancel2() }()
	_, err = session.CallTool(cctx2, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"text": "x"}})
	t.Logf("cancel err: %v", err)
	_, err = session.CallTool(cctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"text": "x"}})
	t.Logf("deadline err: %v", err)
	time.Sleep(100 * time.Millisecond)
	for _, s := range spans.Ended() {
		t.Logf("%v %s %v %v parent=%s self=%s", s.SpanKind(), s.Name(), s.Status(), s.Attributes(), s.Parent().SpanID(), s.SpanContext().SpanID())
	}
}
