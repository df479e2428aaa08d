package mcpotel

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-otel/mcp-otel/go/internal/model"
	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

// finishSpan writes a verdict (and late attributes) onto the span of a method request and ends it:
// the only writer of status, error.type, rpc.response.status_code and the outcome attributes. Ok
// and cancelled leave the status UNSET; failed sets ERROR (a receiver's caller fault: UNSET). An
// unfinished answer states its result type and no outcome.
func finishSpan(span trace.Span, verdict model.Verdict, method string, late []attribute.KeyValue) {
	switch v := verdict.(type) {
	case *model.Outcome:
		span.SetAttributes(pairs(v.Pairs(method == semconv.MethodToolsCall))...)
		if v.IsError() {
			span.SetStatus(codes.Error, v.Description)
		}
	case *model.Unfinished:
		span.SetAttributes(attribute.String(semconv.MCPRequestResultType, v.ResultType))
		if v.RPCCode != "" {
			span.SetAttributes(attribute.String(semconv.RPCResponseStatusCode, v.RPCCode))
		}
	}
	if len(late) > 0 {
		span.SetAttributes(late...)
	}
	span.End()
}

func pairs(found []model.Pair) []attribute.KeyValue {
	out := make([]attribute.KeyValue, len(found))
	for i, pair := range found {
		out[i] = attribute.String(pair.Key, pair.Value)
	}
	return out
}
