// Package spanlines is what the cross-language test programs (crossagent, crossserver) share: a
// tracer provider that writes each span as it ends to the file MCP_OTEL_GO_SPAN_FILE names, one
// JSON line each, in the shape tests/node/telemetry.cjs writes them.
package spanlines

import (
	"context"
	"encoding/json"
	"os"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// spanFileEnv names the file the spans go to.
const spanFileEnv = "MCP_OTEL_GO_SPAN_FILE"

// EnvOr is the variable's value, or fallback when it is unset.
func EnvOr(key, fallback string) string {
	if value, ok := os.LookupEnv(key); ok {
		return value
	}
	return fallback
}

// TracerProvider writes each span as it ends to the span file (if one is named).
func TracerProvider(service string) (*sdktrace.TracerProvider, error) {
	res := resource.NewSchemaless(attribute.String("service.name", EnvOr("OTEL_SERVICE_NAME", service)))
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
