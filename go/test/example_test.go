package mcpotel_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
)

type forecastArgs struct {
	City string `json:"city"`
}

// weatherServer is a server with one tool, forecast, that fails without a city.
func weatherServer() *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "forecast"}, func(_ context.Context, _ *mcp.CallToolRequest, args forecastArgs) (*mcp.CallToolResult, any, error) {
		if args.City == "" {
			return nil, nil, errors.New("which city?")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + args.City}}}, nil, nil
	})
	return server
}

// summary is a span as the examples print it: its name, its outcome and why.
func summary(span sdktrace.ReadOnlySpan) string {
	found := map[string]string{}
	for _, kv := range span.Attributes() {
		found[string(kv.Key)] = kv.Value.String()
	}
	line := fmt.Sprintf("%s %s: %s", span.SpanKind(), span.Name(), found["mcp.request.outcome"])
	for _, key := range []string{"error.type", "mcp.request.cancel.reason"} {
		if value := found[key]; value != "" {
			line += " (" + value + ")"
		}
	}
	if server := found["mcp.server.name"]; server != "" && span.SpanKind().String() == "client" {
		line += fmt.Sprintf(" [%s %s", server, found["mcp.server.version"])
		if version := found["mcp.protocol.version"]; version != "" {
			line += ", " + version
		}
		line += "]"
	}
	return line
}

// An agent's client: a CLIENT span for each request it sends, the trace context in its _meta.
func ExampleInstrumentClient() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	// The application's propagator, as an OpenTelemetry Go application sets it (mcpotel reads it at
	// each request; while none is set, it uses these two).
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))

	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil)
	mcpotel.InstrumentClient(client, mcpotel.WithTracerProvider(tp))

	ctx := context.Background()
	clientTransport, serverTransport := mcp.NewInMemoryTransports()
	if _, err := weatherServer().Connect(ctx, serverTransport, nil); err != nil {
		panic(err)
	}
	session, err := client.Connect(ctx, clientTransport, nil)
	if err != nil {
		panic(err)
	}
	defer session.Close()

	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": "Paris"}})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text, err)
	_, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "radar"})
	fmt.Println(err)

	for _, span := range spans.Ended() {
		fmt.Println(summary(span))
	}
	// Output:
	// sunny in Paris <nil>
	// calling "tools/call": unknown tool "radar"
	// client server/discover: ok [weather 1.0.0]
	// client tools/call forecast: ok [weather 1.0.0, 2026-07-28]
	// client tools/call radar: failed (-32602) [weather 1.0.0, 2026-07-28]
}

// A server: a SERVER span for each request it handles, a child of the caller's span when the
// request's _meta carries its trace context.
func ExampleInstrumentServer() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))

	server := weatherServer()
	mcpotel.InstrumentServer(server, mcpotel.WithTracerProvider(tp))

	ctx := context.Background()
	clientTransport, serverTransport := mcp.NewInMemoryTransports()
	serverSession, err := server.Connect(ctx, serverTransport, nil)
	if err != nil {
		panic(err)
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil).Connect(ctx, clientTransport, nil)
	if err != nil {
		panic(err)
	}
	for _, city := range []string{"Oslo", ""} {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": city}})
		fmt.Println(res.Content[0].(*mcp.TextContent).Text, res.IsError, err)
	}
	_ = session.Close()
	_ = serverSession.Wait()

	for _, span := range spans.Ended() {
		fmt.Println(summary(span))
	}
	// Output:
	// sunny in Oslo false <nil>
	// which city? true <nil>
	// server server/discover: ok
	// server tools/call forecast: ok
	// server tools/call forecast: failed (tool_error)
}

// The wire wrapper: each request the client sends names its JSON-RPC id (and, over stdio or HTTP,
// its transport), and the session's duration is recorded when it closes.
func ExampleTransport() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil)
	mcpotel.InstrumentClient(client, mcpotel.WithTracerProvider(tp), mcpotel.WithMeterProvider(mp))

	ctx := context.Background()
	clientTransport, serverTransport := mcp.NewInMemoryTransports()
	if _, err := weatherServer().Connect(ctx, serverTransport, nil); err != nil {
		panic(err)
	}
	// With &mcp.CommandTransport{...} or &mcp.StreamableClientTransport{...} as it is used.
	session, err := client.Connect(ctx, mcpotel.Transport(clientTransport, mcpotel.WithMeterProvider(mp)), nil)
	if err != nil {
		panic(err)
	}
	_, _ = session.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": "Paris"}})
	_ = session.Close()

	for _, span := range spans.Ended() {
		for _, kv := range span.Attributes() {
			if kv.Key == "jsonrpc.request.id" {
				fmt.Println(span.Name(), "id", kv.Value.AsString())
			}
		}
	}
	var rm metricdata.ResourceMetrics
	_ = reader.Collect(ctx, &rm)
	for _, scope := range rm.ScopeMetrics {
		for _, m := range scope.Metrics {
			if m.Name == "mcp.client.session.duration" {
				fmt.Println(m.Name, m.Data.(metricdata.Histogram[float64]).DataPoints[0].Count)
			}
		}
	}
	// Output:
	// server/discover id 1
	// tools/call forecast id 2
	// mcp.client.session.duration 1
}
