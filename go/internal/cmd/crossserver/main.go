// Command crossserver is a Go MCP server over stdio for the cross-language tests (tests/go): the
// Go SDK's own Server, instrumented with mcpotel. Its tools:
//
//	ok          returns text "ok"
//	tool_error  its handler returns a Go error: the SDK answers a result with isError true
//	slow        waits until its caller cancels it (its context done: returns text "gave up"), at
//	            most 5 s (returns text "slept")
//
// Its name (serverInfo) is MCP_SERVER_NAME, else "go-server", version 1.2.3. The client closing
// stdin ends it. Each finished span is appended to the file MCP_OTEL_GO_SPAN_FILE as one JSON
// line (the fields tests/node/telemetry.cjs writes), as it ends.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
)

// spanFileEnv names the file the spans go to (the agent, crossagent, reads the same variable).
const spanFileEnv = "MCP_OTEL_GO_SPAN_FILE"

// noArguments: the tools take none (an object schema with no properties).
type noArguments struct{}

func text(value string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: value}}}
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "crossserver:", err)
		os.Exit(1)
	}
}

func run() error {
	provider, err := tracerProvider("mcp-otel-go-server")
	if err != nil {
		return err
	}
	defer func() { _ = provider.Shutdown(context.Background()) }()
	propagator := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

	server := mcp.NewServer(&mcp.Implementation{Name: envOr("MCP_SERVER_NAME", "go-server"), Version: "1.2.3"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "ok", Description: "ok"},
		func(context.Context, *mcp.CallToolRequest, noArguments) (*mcp.CallToolResult, any, error) {
			return text("ok"), nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "tool_error", Description: "tool_error"},
		func(context.Context, *mcp.CallToolRequest, noArguments) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("tool failed")
		})
	mcp.AddTool(server, &mcp.Tool{Name: "slow", Description: "slow"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noArguments) (*mcp.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
				return text("gave up"), nil, nil
			case <-time.After(5 * time.Second):
				return text("slept"), nil, nil
			}
		})
	mcpotel.InstrumentServer(server, mcpotel.WithTracerProvider(provider), mcpotel.WithPropagators(propagator))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The client closing stdin (EOF) or a signal is the normal end of the session.
	if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

func envOr(key, fallback string) string {
	if value, ok := os.LookupEnv(key); ok {
		return value
	}
	return fallback
}

// tracerProvider writes each span as it ends to the span file (if one is named).
func tracerProvider(service string) (*sdktrace.TracerProvider, error) {
	res := resource.NewSchemaless(attribute.String("service.name", envOr("OTEL_SERVICE_NAME", service)))
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if path := os.Getenv(spanFileEnv); path != "" {
		file, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		opts = append(opts, sdktrace.WithSyncer(&jsonLinesExporter{file: file}))
	}
	provider := sdktrace.NewTracerProvider(opts...)
	otel.SetTracerProvider(provider)
	return provider, nil
}

// jsonLinesExporter appends finished spans to a file, one JSON line each, in the shape
// tests/node/telemetry.cjs writes them (ids in lowercase hex, kind and status by name).
type jsonLinesExporter struct {
	file *os.File
}

var kinds = map[trace.SpanKind]string{
	trace.SpanKindInternal: "INTERNAL",
	trace.SpanKindServer:   "SERVER",
	trace.SpanKindClient:   "CLIENT",
	trace.SpanKindProducer: "PRODUCER",
	trace.SpanKindConsumer: "CONSUMER",
}

var statuses = map[codes.Code]string{codes.Unset: "UNSET", codes.Ok: "OK", codes.Error: "ERROR"}

func (e *jsonLinesExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	var lines []byte
	for _, span := range spans {
		attributes := map[string]any{}
		for _, kv := range span.Attributes() {
			attributes[string(kv.Key)] = kv.Value.AsInterface()
		}
		var parent any
		if span.Parent().IsValid() {
			parent = span.Parent().SpanID().String()
		}
		var service any
		if value, ok := span.Resource().Set().Value("service.name"); ok {
			service = value.AsString()
		}
		line, err := json.Marshal(map[string]any{
			"name":       span.Name(),
			"kind":       kinds[span.SpanKind()],
			"trace_id":   span.SpanContext().TraceID().String(),
			"span_id":    span.SpanContext().SpanID().String(),
			"parent_id":  parent,
			"attributes": attributes,
			"status":     statuses[span.Status().Code],
			"scope":      span.InstrumentationScope().Name,
			"service":    service,
		})
		if err != nil {
			return err
		}
		lines = append(append(lines, line...), '\n')
	}
	_, err := e.file.Write(lines)
	return err
}

func (e *jsonLinesExporter) Shutdown(context.Context) error { return e.file.Close() }
