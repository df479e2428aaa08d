// Command crossagent is a Go MCP agent for the cross-language tests (tests/go): the Go SDK's own
// Client, instrumented with mcpotel, calls tools of the stdio server whose command follows.
//
//	crossagent COMMAND [ARGS...]
//
// MCP_PLAN (JSON) lists the calls: [{"tool": "...", "arguments": {...}, "abortAfterMs": 300}], a
// call with abortAfterMs being given up by its caller (its context cancelled after that many ms).
// MCP_SERVER_ENV (JSON object): the server's environment besides this one's. Prints one JSON line
// per call: {"tool", "isError"} for a result, {"tool", "error": "aborted"} for a call its caller
// gave up, {"tool", "error": {"code": N|null}} for any other error.
//
// Each finished span is appended to the file MCP_OTEL_GO_SPAN_FILE as one JSON line (the fields
// tests/node/telemetry.cjs writes), as it ends.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// spanFileEnv names the file the spans go to (the server, crossserver, reads the same variable).
const spanFileEnv = "MCP_OTEL_GO_SPAN_FILE"

type step struct {
	Tool         string         `json:"tool"`
	Arguments    map[string]any `json:"arguments"`
	AbortAfterMs *int           `json:"abortAfterMs"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "crossagent:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) < 2 {
		return errors.New("usage: crossagent COMMAND [ARGS...]")
	}
	var plan []step
	if err := json.Unmarshal([]byte(envOr("MCP_PLAN", "[]")), &plan); err != nil {
		return fmt.Errorf("MCP_PLAN: %w", err)
	}
	var serverEnv map[string]string
	if err := json.Unmarshal([]byte(envOr("MCP_SERVER_ENV", "{}")), &serverEnv); err != nil {
		return fmt.Errorf("MCP_SERVER_ENV: %w", err)
	}

	provider, err := tracerProvider("mcp-otel-go-agent")
	if err != nil {
		return err
	}
	defer func() { _ = provider.Shutdown(context.Background()) }()
	propagator := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

	client := mcp.NewClient(&mcp.Implementation{Name: "go-agent", Version: "1.0.0"}, nil)
	mcpotel.InstrumentClient(client, mcpotel.WithTracerProvider(provider), mcpotel.WithPropagators(propagator))

	command := exec.Command(os.Args[1], os.Args[2:]...)
	command.Env = os.Environ()
	for key, value := range serverEnv {
		command.Env = append(command.Env, key+"="+value)
	}
	command.Stderr = os.Stderr
	ctx := context.Background()
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: command}, nil)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	out := json.NewEncoder(os.Stdout)
	for _, s := range plan {
		callCtx, cancel := context.WithCancel(ctx)
		if s.AbortAfterMs != nil {
			time.AfterFunc(time.Duration(*s.AbortAfterMs)*time.Millisecond, cancel)
		}
		arguments := s.Arguments
		if arguments == nil {
			arguments = map[string]any{}
		}
		result, err := session.CallTool(callCtx, &mcp.CallToolParams{Name: s.Tool, Arguments: arguments})
		aborted := callCtx.Err() != nil
		cancel()
		line := map[string]any{"tool": s.Tool}
		switch {
		case err == nil:
			line["isError"] = result.IsError
		case aborted && errors.Is(err, context.Canceled):
			line["error"] = "aborted"
		default:
			var code any
			var rpc *jsonrpc.Error
			if errors.As(err, &rpc) {
				code = rpc.Code
			}
			line["error"] = map[string]any{"code": code}
		}
		if err := out.Encode(line); err != nil {
			return err
		}
	}
	// Closing stdin ends the server; the SDK waits for it to exit.
	return session.Close()
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
