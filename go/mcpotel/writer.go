package mcpotel

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-otel/mcp-otel/go/internal/model"
	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

// The writer: the one function that puts a verdict (the classifier's, internal/model) on a span.
// Status, error.type and the outcome are set here together, from that one verdict, and nowhere
// else (docs/decisions.md rule 4); the outcome model itself is internal/model/outcome.go.

// finishSpan writes a verdict (and late attributes) onto the span of a method request and ends it:
// the only writer of status, error.type, rpc.response.status_code and the outcome attributes. Ok
// and cancelled leave the status UNSET; failed sets ERROR (a receiver's caller fault: UNSET). An
// unfinished answer states its result type and no outcome.
func finishSpan(span trace.Span, verdict model.Verdict, method string, late []attribute.KeyValue, end ...trace.SpanEndOption) {
	switch v := verdict.(type) {
	case *model.Outcome:
		span.SetAttributes(outcomeAttributes(v, method == semconv.MethodToolsCall)...)
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
	span.End(end...)
}

// okAttributes are model.OK's attributes, converted once: the outcome of most requests.
var okAttributes = [2][]attribute.KeyValue{pairs(model.OK.Pairs(false)), pairs(model.OK.Pairs(true))}

// outcomeAttributes are an outcome's attributes on a span and its point (shared: not to be changed).
func outcomeAttributes(o *model.Outcome, toolCall bool) []attribute.KeyValue {
	if o == model.OK {
		if toolCall {
			return okAttributes[1]
		}
		return okAttributes[0]
	}
	return pairs(o.Pairs(toolCall))
}

func pairs(found []model.Pair) []attribute.KeyValue {
	out := make([]attribute.KeyValue, len(found))
	for i, pair := range found {
		out[i] = attribute.String(pair.Key, pair.Value)
	}
	return out
}
