package mcpotel

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/mcp-otel/mcp-otel/go/internal/model"
	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

// request is one request as both sides describe it: its method and what its parameters name.
type request struct {
	method string
	target string // tool or prompt name (bounded)
	uri    string // mcp.resource.uri (bounded)
}

// name is its spans' name: {method} {target}, or the method alone (never a URI).
func (r request) name() string {
	if r.target != "" {
		return r.method + " " + r.target
	}
	return r.method
}

// newRequest bounds what a peer named: a method the specification does not define, a tool or
// prompt name, a URI.
func newRequest(method, target, uri string, c *config) request {
	if !semconv.KnownMethods.Has(method) {
		method = model.Bounded(method, c.maxNameLength)
	}
	return request{method: method, target: model.Bounded(target, c.maxNameLength), uri: model.Bounded(uri, c.maxContentLength)}
}

// connectionFacts are what a session knows of its server and protocol.
type connectionFacts struct {
	serverName, serverVersion, protocolVersion, sessionID string
}

// requestAttributes are the attributes of a request's span that do not depend on the side, and
// its point's, made together (its names admitted by m's bounds; m nil: no point).
func requestAttributes(r request, facts connectionFacts, c *config, m *callMetrics) (attrs, point []attribute.KeyValue) {
	attrs = make([]attribute.KeyValue, 0, 8)
	if m != nil {
		point = make([]attribute.KeyValue, 0, pointKeys)
	}
	attrs = append(attrs, attribute.String(semconv.MCPMethodName, r.method))
	point = m.onPoint(point, attrs[0], boundMethod)
	switch {
	case r.method == semconv.MethodToolsCall:
		attrs = append(attrs, operationExecuteTool)
		point = m.onPoint(point, operationExecuteTool, unbounded)
		if r.target != "" {
			attrs = append(attrs, attribute.String(semconv.GenAIToolName, r.target))
			point = m.onPoint(point, attrs[len(attrs)-1], boundTool)
		}
	case r.method == semconv.MethodPromptsGet && r.target != "":
		attrs = append(attrs, attribute.String(semconv.GenAIPromptName, r.target))
		point = m.onPoint(point, attrs[len(attrs)-1], boundPrompt)
	}
	if r.uri != "" && semconv.ResourceURIMethods.Has(r.method) {
		attrs = append(attrs, attribute.String(semconv.MCPResourceURI, r.uri))
		point = m.onPoint(point, attrs[len(attrs)-1], boundResource)
	}
	name, version := facts.serverName, facts.serverVersion
	if c.serverName != "" {
		name, version = c.serverName, c.serverVersion
	}
	if facts.protocolVersion != "" {
		attrs = append(attrs, attribute.String(semconv.MCPProtocolVersion, model.Bounded(facts.protocolVersion, c.maxNameLength)))
		point = m.onPoint(point, attrs[len(attrs)-1], unbounded)
	}
	attrs = appendBounded(attrs, semconv.MCPSessionID, facts.sessionID, c.maxNameLength)
	if name != "" {
		attrs = append(attrs, attribute.String(semconv.MCPServerName, model.Bounded(name, c.maxNameLength)))
		point = m.onPoint(point, attrs[len(attrs)-1], boundServer)
	}
	return appendBounded(attrs, semconv.MCPServerVersion, version, c.maxNameLength), point
}

// operationExecuteTool is a tool call's gen_ai.operation.name, made once.
var operationExecuteTool = attribute.String(semconv.GenAIOperationName, semconv.OperationExecuteTool)

// appendBounded appends key = value cut to limit characters, when value is not empty.
func appendBounded(attrs []attribute.KeyValue, key, value string, limit int) []attribute.KeyValue {
	if value == "" {
		return attrs
	}
	return append(attrs, attribute.String(key, model.Bounded(value, limit)))
}

// tracedNotification reports whether a notification of method gets a span: every one, but progress
// and log messages only when asked (they come by the hundred).
func tracedNotification(method string, c *config) bool {
	return !semconv.FrequentNotifications.Has(method) || c.traceProgressAndLogs
}
