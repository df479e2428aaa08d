"""The tool set every test server offers, independent of the SDK major.

ok           returns text "ok"
tool_error   returns a result with isError true (text "tool failed: secret-detail")
rpc_error    answers a JSON-RPC error -32602 "bad input"
server_error answers a JSON-RPC error -32603 "internal failure"
crash        raises ValueError("boom"): the SDK answers with its generic error code
slow         sleeps `seconds` (default 5), then returns "slept"
stubborn     ignores cancellation: sleeps `seconds` (default 1) shielded, then returns
bad_output   declares an output schema and returns structured content that violates it
die          the server goes away mid-call (stdio: the process exits; in-memory: streams close)
whoami       returns the request's _meta as JSON text
"""

SERVER_NAME = "test-server"
SERVER_VERSION = "9.8.7"
RPC_ERROR_CODE = -32602
RPC_ERROR_MESSAGE = "bad input"
SERVER_ERROR_CODE = -32603
SERVER_ERROR_MESSAGE = "internal failure"
TOOL_ERROR_TEXT = "tool failed: secret-detail"
OUTPUT_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TOOL_NAMES = (
    "ok",
    "tool_error",
    "rpc_error",
    "server_error",
    "crash",
    "slow",
    "stubborn",
    "bad_output",
    "die",
    "whoami",
)
