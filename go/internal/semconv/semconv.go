// Package semconv holds every name and value mcp-otel writes: attribute names, metric names,
// outcome values.
//
// They are the strings of the Python package's src/mcp_otel/semconv.py: Shared maps each of them
// by its Python constant name, and tests/test_languages.py fails when a name or a value differs
// (ADR-191 rule 3: one string travels end to end, whatever language wrote the span).
package semconv

// MCP and GenAI attributes (semantic-conventions-genai docs/gen-ai/mcp.md @4172e394).
const (
	MCPMethodName          = "mcp.method.name"
	MCPProtocolVersion     = "mcp.protocol.version"
	MCPSessionID           = "mcp.session.id"
	GenAIOperationName     = "gen_ai.operation.name"
	GenAIToolName          = "gen_ai.tool.name"
	GenAIPromptName        = "gen_ai.prompt.name"
	MCPResourceURI         = "mcp.resource.uri"
	GenAIConversationID    = "gen_ai.conversation.id"
	GenAIToolCallArguments = "gen_ai.tool.call.arguments"
	GenAIToolCallResult    = "gen_ai.tool.call.result"
)

// General attributes (semantic-conventions v1.44.0).
const (
	ErrorType             = "error.type"
	JSONRPCRequestID      = "jsonrpc.request.id"
	RPCResponseStatusCode = "rpc.response.status_code"
	NetworkTransport      = "network.transport"
	ServerAddress         = "server.address"
	ServerPort            = "server.port"
	ClientAddress         = "client.address"
	ClientPort            = "client.port"
)

// MCP metrics.
const (
	MCPClientOperationDuration = "mcp.client.operation.duration"
	MCPServerOperationDuration = "mcp.server.operation.duration"
	MCPClientSessionDuration   = "mcp.client.session.duration"
	MCPServerSessionDuration   = "mcp.server.session.duration"
	DurationUnit               = "s"
	// OtherValue is the value a bounded metric attribute takes past its limit.
	OtherValue = "_OTHER"
)

// DurationBuckets are the duration histograms' explicit bucket boundaries, in seconds.
var DurationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// mcp-otel attributes.
const (
	MCPRequestOutcome      = "mcp.request.outcome"
	MCPRequestCancelReason = "mcp.request.cancel.reason"
	// ToolOutcome and ToolCancelReason: the same values again on tools/call spans and points, the
	// project's first public contract.
	ToolOutcome          = "tool.outcome"
	ToolCancelReason     = "tool.cancel.reason"
	MCPRequestResultType = "mcp.request.result_type"
	MCPElicitationAction = "mcp.elicitation.action"
	MCPServerName        = "mcp.server.name"
	MCPServerVersion     = "mcp.server.version"
)

// Method names and values.
const (
	MethodToolsCall            = "tools/call"
	MethodInitialize           = "initialize"
	MethodPromptsGet           = "prompts/get"
	MethodServerDiscover       = "server/discover"
	MethodElicitationCreate    = "elicitation/create"
	MethodSamplingCreate       = "sampling/createMessage"
	MethodRootsList            = "roots/list"
	MethodCancelled            = "notifications/cancelled"
	MethodProgress             = "notifications/progress"
	MethodLogMessage           = "notifications/message"
	NotificationPrefix         = "notifications/"
	OperationExecuteTool       = "execute_tool"
	TransportPipe              = "pipe"
	TransportTCP               = "tcp"
	URLElicitationRequiredCode = -32042
	UserRejectedCode           = -1
	// InstrumentationScope is the scope name of every span and metric of all three languages.
	InstrumentationScope = "mcp_otel"
)

// FrequentNotifications come by the hundred: spans of theirs only when asked.
var FrequentNotifications = set(MethodProgress, MethodLogMessage)

// KnownMethods are the methods the MCP specification defines (2025-11-25 and 2026-07-28, both
// directions): always admitted as metric values.
var KnownMethods = set(
	MethodInitialize, "ping", "tools/list", MethodToolsCall, "resources/list", "resources/templates/list",
	"resources/read", "resources/subscribe", "resources/unsubscribe", "prompts/list", MethodPromptsGet,
	"completion/complete", "logging/setLevel", MethodServerDiscover, "subscriptions/listen",
	MethodSamplingCreate, MethodElicitationCreate, MethodRootsList, "tasks/get", "tasks/result", "tasks/list",
	"tasks/cancel", MethodCancelled, "notifications/initialized", MethodProgress, MethodLogMessage,
	"notifications/resources/list_changed", "notifications/resources/updated", "notifications/prompts/list_changed",
	"notifications/tools/list_changed", "notifications/roots/list_changed", "notifications/subscriptions/acknowledged",
	"notifications/tasks/status",
)

// ResourceURIMethods carry mcp.resource.uri on their spans.
var ResourceURIMethods = set("resources/read", "resources/subscribe", "resources/unsubscribe", "notifications/resources/updated")

// CallerFaultCodes say the caller sent a request the server could not serve: on SERVER spans and
// points, status UNSET, no error.type, the code in rpc.response.status_code.
var CallerFaultCodes = codes(-32700, -32600, -32601, -32602, -32002, -32020, -32021, -32022)

// NegotiationCodes answered to server/discover are a version negotiation step.
var NegotiationCodes = codes(-32600, -32601, -32602, -32022)

// DecliningActions are the ElicitResult actions that mean the person said no.
var DecliningActions = set("decline", "cancel")

// ElicitationActions are the ElicitResult actions.
var ElicitationActions = set("accept", "decline", "cancel")

// Outcome values: how one request ended (ADR-191 rule 1: one tri-state value).
const (
	OutcomeOK        = "ok"
	OutcomeFailed    = "failed"
	OutcomeCancelled = "cancelled"
)

// Cancel reasons: "client"/"server" name the request's sender and receiver.
const (
	CancelCaller        = "caller"
	CancelClient        = "client"
	CancelDisconnect    = "disconnect"
	CancelInputDeclined = "input_declined"
)

// Result types of a request answered with no result yet.
const (
	ResultInputRequired = "input_required"
	ResultTask          = "task"
	ResultNegotiation   = "negotiation"
)

// Our own error.type values; JSON-RPC errors use their code.
const (
	ErrorToolError        = "tool_error"
	ErrorTimeout          = "timeout"
	ErrorConnectionClosed = "connection_closed"
	ErrorShutdown         = "shutdown"
	ErrorTaskFailed       = "task_failed"
)

// Shared is every name above by the Python constant that holds the same string (enumerations as
// their members), for the cross-language test.
var Shared = map[string]any{
	"MCP_METHOD_NAME": MCPMethodName, "MCP_PROTOCOL_VERSION": MCPProtocolVersion, "MCP_SESSION_ID": MCPSessionID,
	"GEN_AI_OPERATION_NAME": GenAIOperationName, "GEN_AI_TOOL_NAME": GenAIToolName, "GEN_AI_PROMPT_NAME": GenAIPromptName,
	"MCP_RESOURCE_URI": MCPResourceURI, "GEN_AI_CONVERSATION_ID": GenAIConversationID,
	"GEN_AI_TOOL_CALL_ARGUMENTS": GenAIToolCallArguments, "GEN_AI_TOOL_CALL_RESULT": GenAIToolCallResult,
	"ERROR_TYPE": ErrorType, "JSONRPC_REQUEST_ID": JSONRPCRequestID, "RPC_RESPONSE_STATUS_CODE": RPCResponseStatusCode,
	"NETWORK_TRANSPORT": NetworkTransport, "SERVER_ADDRESS": ServerAddress, "SERVER_PORT": ServerPort,
	"CLIENT_ADDRESS": ClientAddress, "CLIENT_PORT": ClientPort,
	"MCP_CLIENT_OPERATION_DURATION": MCPClientOperationDuration, "MCP_SERVER_OPERATION_DURATION": MCPServerOperationDuration,
	"MCP_CLIENT_SESSION_DURATION": MCPClientSessionDuration, "MCP_SERVER_SESSION_DURATION": MCPServerSessionDuration,
	"DURATION_UNIT": DurationUnit, "DURATION_BUCKETS": DurationBuckets, "OTHER_VALUE": OtherValue,
	"MCP_REQUEST_OUTCOME": MCPRequestOutcome, "MCP_REQUEST_CANCEL_REASON": MCPRequestCancelReason,
	"TOOL_OUTCOME": ToolOutcome, "TOOL_CANCEL_REASON": ToolCancelReason, "MCP_REQUEST_RESULT_TYPE": MCPRequestResultType,
	"MCP_ELICITATION_ACTION": MCPElicitationAction, "MCP_SERVER_NAME": MCPServerName, "MCP_SERVER_VERSION": MCPServerVersion,
	"METHOD_TOOLS_CALL": MethodToolsCall, "METHOD_INITIALIZE": MethodInitialize, "METHOD_PROMPTS_GET": MethodPromptsGet,
	"METHOD_SERVER_DISCOVER": MethodServerDiscover, "METHOD_ELICITATION_CREATE": MethodElicitationCreate,
	"METHOD_SAMPLING_CREATE_MESSAGE": MethodSamplingCreate, "METHOD_ROOTS_LIST": MethodRootsList,
	"METHOD_CANCELLED": MethodCancelled, "METHOD_PROGRESS": MethodProgress, "METHOD_LOG_MESSAGE": MethodLogMessage,
	"NOTIFICATION_PREFIX": NotificationPrefix, "FREQUENT_NOTIFICATIONS": sorted(FrequentNotifications),
	"KNOWN_METHODS": sorted(KnownMethods), "RESOURCE_URI_METHODS": sorted(ResourceURIMethods),
	"OPERATION_EXECUTE_TOOL": OperationExecuteTool, "TRANSPORT_PIPE": TransportPipe, "TRANSPORT_TCP": TransportTCP,
	"CALLER_FAULT_CODES": sortedCodes(CallerFaultCodes), "URL_ELICITATION_REQUIRED_CODE": URLElicitationRequiredCode,
	"NEGOTIATION_CODES": sortedCodes(NegotiationCodes), "USER_REJECTED_CODE": UserRejectedCode,
	"DECLINING_ACTIONS": sorted(DecliningActions), "ELICITATION_ACTIONS": sorted(ElicitationActions),
	"INSTRUMENTATION_SCOPE": InstrumentationScope,
	"Outcome":               map[string]string{"OK": OutcomeOK, "FAILED": OutcomeFailed, "CANCELLED": OutcomeCancelled},
	"CancelReason": map[string]string{
		"CALLER": CancelCaller, "CLIENT": CancelClient, "DISCONNECT": CancelDisconnect, "INPUT_DECLINED": CancelInputDeclined,
	},
	"ResultType": map[string]string{"INPUT_REQUIRED": ResultInputRequired, "TASK": ResultTask, "NEGOTIATION": ResultNegotiation},
	"ErrorType": map[string]string{
		"TOOL_ERROR": ErrorToolError, "TIMEOUT": ErrorTimeout, "CONNECTION_CLOSED": ErrorConnectionClosed,
		"SHUTDOWN": ErrorShutdown, "TASK_FAILED": ErrorTaskFailed,
	},
}
