"""Every name and value mcp-otel writes: attribute names, metric names, outcome values.

This is the single source of these strings; instrumentation code, tests, the collector
configuration and the dashboards all take them from here (ADR-191 rule 3: one string travels
end to end).

Sources the names are pinned to:

* MCP conventions: open-telemetry/semantic-conventions-genai ``docs/gen-ai/mcp.md`` at
  revision 4172e394d28f2d26ec4a4514a45f153580c68670 (status: Development).
* General attributes (``error.type``, ``network.*``, ``server.*``, ``client.*``,
  ``rpc.response.status_code``, ``jsonrpc.request.id``): open-telemetry/semantic-conventions
  v1.44.0.

We do not import ``opentelemetry.semconv._incubating``: its MCP names are deprecated there
("moved to the GenAI repository") and the module path is private.

Names marked *mcp-otel* are our own; no convention defines an outcome for cancelled calls.
"""

from __future__ import annotations

from enum import Enum
from typing import Final

# --- MCP and GenAI attributes (semantic-conventions-genai docs/gen-ai/mcp.md @4172e394) ---
MCP_METHOD_NAME: Final = "mcp.method.name"
MCP_PROTOCOL_VERSION: Final = "mcp.protocol.version"
MCP_SESSION_ID: Final = "mcp.session.id"
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_PROMPT_NAME: Final = "gen_ai.prompt.name"
# Conditionally required on resources/read|subscribe|unsubscribe spans; opt-in on metrics.
MCP_RESOURCE_URI: Final = "mcp.resource.uri"
# A conversation's id, as the application puts it in OpenTelemetry baggage (GenAI's
# gen_ai.conversation.id): on both sides' spans, never on metric points (cardinality).
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
# Opt-in (sensitive): the call's arguments and result as JSON (semantic-conventions-genai
# gen-ai-spans.md "Execute tool span", Opt-In attributes).
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"

# --- General attributes (semantic-conventions v1.44.0) ---
ERROR_TYPE: Final = "error.type"
JSONRPC_REQUEST_ID: Final = "jsonrpc.request.id"
# Renamed to rpc.status_code on semantic-conventions main (#3921, unreleased); mcp.md still uses this.
RPC_RESPONSE_STATUS_CODE: Final = "rpc.response.status_code"
NETWORK_TRANSPORT: Final = "network.transport"
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"
CLIENT_ADDRESS: Final = "client.address"
CLIENT_PORT: Final = "client.port"
# The HTTP status of a request refused before JSON-RPC (mcp-otel proxy over HTTP); error.type is
# that status then (semantic-conventions-genai PR #458: MCP over HTTP).
HTTP_RESPONSE_STATUS_CODE: Final = "http.response.status_code"

# --- MCP metrics (semantic-conventions-genai model/mcp/metrics.yaml, mcp.md @4172e394) ---
MCP_CLIENT_OPERATION_DURATION: Final = "mcp.client.operation.duration"
MCP_SERVER_OPERATION_DURATION: Final = "mcp.server.operation.duration"
MCP_CLIENT_SESSION_DURATION: Final = "mcp.client.session.duration"
MCP_SERVER_SESSION_DURATION: Final = "mcp.server.session.duration"
DURATION_UNIT: Final = "s"
# *mcp-otel*: the proxy's requests whose answer it could not observe (no span and no duration
# point: an outcome it did not see is none), counted by why (UnobservedReason).
MCP_OTEL_UNOBSERVED_REQUESTS: Final = "mcp_otel.proxy.unobserved_requests"
MCP_OTEL_UNOBSERVED_REASON: Final = "mcp_otel.unobserved.reason"
# "SHOULD be specified with ExplicitBucketBoundaries of" (the semconv helper functions set none).
DURATION_BUCKETS: Final = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
# The value a bounded metric attribute takes past its limit (error.type's well-known value too).
OTHER_VALUE: Final = "_OTHER"

# --- mcp-otel attributes ---
# The outcome of every request span and operation-duration point (one tri-state value).
MCP_REQUEST_OUTCOME: Final = "mcp.request.outcome"
MCP_REQUEST_CANCEL_REASON: Final = "mcp.request.cancel.reason"
# The same values again on tools/call spans and points: the project's first public contract
# (dashboards, alerts and users read them), kept as long as anyone reads them.
TOOL_OUTCOME: Final = "tool.outcome"
TOOL_CANCEL_REASON: Final = "tool.cancel.reason"
# A request answered with something other than its result (the protocol's ``resultType``):
# ``input_required`` (a round of a multi-round call) or ``task``. Such a span has no outcome and
# no operation-duration point: the request has not finished, it is neither ok nor failed.
MCP_REQUEST_RESULT_TYPE: Final = "mcp.request.result_type"
# A logical call's CLIENT span: the requests it took (input rounds), and the kinds of input the
# server asked for in them (request methods, sorted; no content).
MCP_REQUEST_ROUNDS: Final = "mcp.request.rounds"
MCP_REQUEST_INPUT_METHODS: Final = "mcp.request.input.methods"
# A round's SERVER span: how many input responses the request carried (a continued call).
MCP_REQUEST_INPUT_RESPONSES: Final = "mcp.request.input.responses"
# The person's answer to an elicitation (ElicitResult.action): accept | decline | cancel.
MCP_ELICITATION_ACTION: Final = "mcp.elicitation.action"
# Span events of a logical call: per round answered with InputRequiredResult, and per input
# request of it answered (its method, the elicitation's action, and the cancel reason of a no).
EVENT_INPUT_REQUIRED: Final = "mcp.input_required"
EVENT_INPUT_ANSWERED: Final = "mcp.input_answered"
# The server's self-reported identity (serverInfo.name / .version), or the configured override.
MCP_SERVER_NAME: Final = "mcp.server.name"
MCP_SERVER_VERSION: Final = "mcp.server.version"

# --- Values ---
METHOD_TOOLS_CALL: Final = "tools/call"
METHOD_INITIALIZE: Final = "initialize"
METHOD_PROMPTS_GET: Final = "prompts/get"
METHOD_SERVER_DISCOVER: Final = "server/discover"
METHOD_ELICITATION_CREATE: Final = "elicitation/create"
METHOD_SAMPLING_CREATE_MESSAGE: Final = "sampling/createMessage"
METHOD_ROOTS_LIST: Final = "roots/list"
METHOD_TASKS_GET: Final = "tasks/get"
METHOD_TASKS_RESULT: Final = "tasks/result"
METHOD_TASKS_CANCEL: Final = "tasks/cancel"
TASKS_METHOD_PREFIX: Final = "tasks/"  # the requests about a task (params.taskId)
# The notification a request's sender cancels it with (params.requestId, params.reason).
METHOD_CANCELLED: Final = "notifications/cancelled"
METHOD_INITIALIZED: Final = "notifications/initialized"
# A request's progress (params.progressToken: the SDKs use the request's own id) and a log message.
METHOD_PROGRESS: Final = "notifications/progress"
METHOD_LOG_MESSAGE: Final = "notifications/message"
NOTIFICATION_PREFIX: Final = "notifications/"
# Notifications that come by the hundred: spans of theirs only with trace_progress_and_logs.
FREQUENT_NOTIFICATIONS: Final = frozenset({METHOD_PROGRESS, METHOD_LOG_MESSAGE})
# Requests a server makes for input mid-call (a person may answer them; 2026-07-28 embeds them
# in InputRequiredResult).
INPUT_METHODS: Final = frozenset({METHOD_ELICITATION_CREATE, METHOD_SAMPLING_CREATE_MESSAGE, METHOD_ROOTS_LIST})
# The request and notification methods the MCP specification defines (2025-11-25 and 2026-07-28,
# both directions): always admitted as metric values; any other method name is bounded like a
# tool name.
KNOWN_METHODS: Final = frozenset(
    {
        METHOD_INITIALIZE,
        "ping",
        "tools/list",
        METHOD_TOOLS_CALL,
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        METHOD_PROMPTS_GET,
        "completion/complete",
        "logging/setLevel",
        METHOD_SERVER_DISCOVER,
        "subscriptions/listen",
        METHOD_SAMPLING_CREATE_MESSAGE,
        METHOD_ELICITATION_CREATE,
        METHOD_ROOTS_LIST,
        METHOD_TASKS_GET,
        METHOD_TASKS_RESULT,
        "tasks/list",
        METHOD_TASKS_CANCEL,
        METHOD_CANCELLED,
        METHOD_INITIALIZED,
        METHOD_PROGRESS,
        METHOD_LOG_MESSAGE,
        "notifications/resources/list_changed",
        "notifications/resources/updated",
        "notifications/prompts/list_changed",
        "notifications/tools/list_changed",
        "notifications/roots/list_changed",
        "notifications/subscriptions/acknowledged",
        "notifications/tasks/status",
    }
)
# Methods whose span carries mcp.resource.uri (mcp.md: conditionally required).
RESOURCE_URI_METHODS: Final = frozenset(
    {"resources/read", "resources/subscribe", "resources/unsubscribe", "notifications/resources/updated"}
)
OPERATION_EXECUTE_TOOL: Final = "execute_tool"
TRANSPORT_PIPE: Final = "pipe"  # stdio
TRANSPORT_TCP: Final = "tcp"  # streamable HTTP, SSE

# JSON-RPC codes that say the caller sent a request the server could not serve: parse error,
# invalid request, method not found, invalid params, and MCP 2025-06-18 resource not found -32002
# (semantic-conventions-genai's list); MCP 2026-07-28's header mismatch -32020, missing required
# client capability -32021 and unsupported protocol version -32022 (mcp-otel: they postdate it).
# On SERVER spans and points: status UNSET, no error.type, the code in rpc.response.status_code.
CALLER_FAULT_CODES: Final = frozenset({-32700, -32600, -32601, -32602, -32002, -32020, -32021, -32022})
# MCP 2026-07-28: the server needs a person to complete a URL elicitation first (the caller retries
# then); a request answered with it has no result yet (``input_required``), it did not fail.
URL_ELICITATION_REQUIRED_CODE: Final = -32042
# A ``server/discover`` probe answered with these is a version negotiation step: the client falls
# back to ``initialize``, or probes again at a version the server names (-32022). Older servers
# answer -32601 (the TypeScript SDK), -32602 (mcp 1.x over stdio: params it cannot validate) or
# -32600 (mcp 1.x over HTTP: a request without a session).
NEGOTIATION_CODES: Final = frozenset({-32600, -32601, -32602, -32022})
# The code a client answers sampling/createMessage with when the person rejected it (MCP
# 2025-11-25 client/sampling, "Error Handling": -1 "User rejected sampling request").
USER_REJECTED_CODE: Final = -1
# ElicitResult.action values that mean the person said no (decline) or dismissed it (cancel).
DECLINING_ACTIONS: Final = frozenset({"decline", "cancel"})
ELICITATION_ACTIONS: Final = frozenset({"accept", *DECLINING_ACTIONS})

# The instrumentation scope name of every span and metric we create.
INSTRUMENTATION_SCOPE: Final = "mcp_otel"


class Outcome(str, Enum):
    """How one request ended: the single tri-state value (ADR-191 rule 1)."""

    OK = "ok"
    FAILED = "failed"
    CANCELLED = "cancelled"


# The name it had when only tool calls had an outcome.
ToolOutcome = Outcome


class CancelReason(str, Enum):
    """Values of ``mcp.request.cancel.reason``: low cardinality; free-text MCP reasons are never
    recorded. "Client"/"server" name the request's sender and receiver, whichever side that is."""

    # Sender: the task awaiting the request was cancelled, or this sender cancelled the request.
    CALLER = "caller"
    # Receiver: the sender sent notifications/cancelled for the request.
    CLIENT = "client"
    # Receiver: the sender closed the request's stream or the connection with it in flight.
    DISCONNECT = "disconnect"
    # Both sides: the person declined or dismissed an input request of the call (elicitation
    # decline/cancel, sampling rejected) and the call then ended in error. Not a server failure.
    INPUT_DECLINED = "input_declined"


class ResultType(str, Enum):
    """Values of ``mcp.request.result_type``: a request answered with no result yet."""

    INPUT_REQUIRED = "input_required"  # 2026-07-28 InputRequiredResult: one round of a call
    TASK = "task"  # the request became a task (CreateTaskResult, resultType "task")
    # A ``server/discover`` probe the server answered it does not speak (NEGOTIATION_CODES): the
    # client goes on with another handshake. Neither a failure nor a request of its own.
    NEGOTIATION = "negotiation"


class UnobservedReason(str, Enum):
    """Values of ``mcp_otel.unobserved.reason``: why the proxy could not see a request's answer."""

    # Its answer could only come on a stream the proxy does not hold: an HTTP exchange answered
    # without it (202, the answer on the session's event stream), a POST stream that ended before
    # it, a server's request (answered by a POST that may reach another replica).
    ANSWER_ELSEWHERE = "answer_elsewhere"
    # The proxy stopped following the session (it follows at most so many at once).
    SESSION_UNTRACKED = "session_untracked"


class ErrorType:
    """Our own ``error.type`` values; JSON-RPC errors use their code and exceptions their class name."""

    TOOL_ERROR: Final = "tool_error"  # CallToolResult.isError (named by mcp.md)
    TIMEOUT: Final = "timeout"  # the SDK's read timeout expired (named by the error.type guidance)
    CONNECTION_CLOSED: Final = "connection_closed"  # transport closed / server process died
    SHUTDOWN: Final = "shutdown"  # server shutting down with the call in flight
    TASK_FAILED: Final = "task_failed"  # the task a tool call was answered with ended "failed"


# --- The same names as Prometheus stores them (collector-config/, grafana/) ---
# The collector's span metrics connector (opentelemetry-collector-contrib v0.161.0
# connector/spanmetricsconnector: namespace traces.span.metrics, metrics "calls" and "duration",
# default dimensions span.kind and status.code with SPAN_KIND_* / STATUS_CODE_* values) through its
# Prometheus exporters (pkg/translator/prometheus: "." -> "_", unit and _total suffixes); Grafana
# Tempo's metrics-generator (docs metrics-from-traces/span-metrics @ad33aa8) names them
# traces_spanmetrics_*. collector-config/collector.yaml pins the namespace and the unit (s).
SPAN_METRICS_CALLS: Final = ("traces_span_metrics_calls_total", "traces_spanmetrics_calls_total")
SPAN_METRICS_DURATION_BUCKETS: Final = (
    "traces_span_metrics_duration_seconds_bucket",
    "traces_spanmetrics_latency_bucket",
)
SPAN_KIND_LABEL: Final = "span_kind"
SPAN_KIND_CLIENT: Final = "SPAN_KIND_CLIENT"
SPAN_KIND_SERVER: Final = "SPAN_KIND_SERVER"
STATUS_CODE_LABEL: Final = "status_code"
STATUS_CODE_ERROR: Final = "STATUS_CODE_ERROR"
SERVICE_NAME_LABEL: Final = "service_name"
# collector-config/gateway.yaml: the gateway that wrote a span-metric series (each gateway of the
# scaled topology writes its own series; the rules and panels sum over them).
GATEWAY_NAME: Final = "mcp_otel.gateway"
# Their rpc.response.status_code values, on both sides' spans and points: how dashboards, rules and
# ``report`` keep callers' faults out of server-fault rates (a SERVER span's has no error.type).
CALLER_FAULT_STATUS_CODES: Final = tuple(str(code) for code in sorted(CALLER_FAULT_CODES, reverse=True))


def prometheus_label(attribute: str) -> str:
    """An attribute's Prometheus label name (the collector's and Tempo's sanitising: "." -> "_")."""
    return attribute.replace(".", "_")


def prometheus_histogram(metric: str, suffix: str) -> str:
    """A histogram's Prometheus series name (unit DURATION_UNIT, seconds): ``_bucket|_count|_sum``."""
    return f"{prometheus_label(metric)}_seconds_{suffix}"
