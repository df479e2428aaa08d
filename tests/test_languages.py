"""One set of names in every language (ADR-191 rule 3): the TypeScript package's names module
(``node/src/semconv.ts``, loaded from its build) and the Go module's (``go/internal/semconv``,
printed by ``go run ./internal/cmd/names``) define each name under the constant name
``mcp_otel.semconv`` uses (Go: in its ``Shared`` map), with the same value, and define every name
a span or a point carries; the TypeScript settings read the same environment variables. The same
facts through each language's classifier give the same verdict. A name or a rule changed in one
language fails here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import fields
from enum import Enum
from typing import Any

from mcp_otel import semconv
from mcp_otel.config import ENV_PREFIX, Settings
from tests.harness import REPO_ROOT
from tests.processes import needs

NODE_DIST = REPO_ROOT / "node" / "dist" / "cjs"
GO_MODULE = REPO_ROOT / "go"

# Every name a request's span or point carries, and the values they take: what each language must
# define exactly as the Python package does.
SHARED = [
    "MCP_METHOD_NAME",
    "MCP_PROTOCOL_VERSION",
    "MCP_SESSION_ID",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_TOOL_NAME",
    "GEN_AI_PROMPT_NAME",
    "MCP_RESOURCE_URI",
    "GEN_AI_CONVERSATION_ID",
    "GEN_AI_TOOL_CALL_ARGUMENTS",
    "GEN_AI_TOOL_CALL_RESULT",
    "ERROR_TYPE",
    "JSONRPC_REQUEST_ID",
    "RPC_RESPONSE_STATUS_CODE",
    "NETWORK_TRANSPORT",
    "SERVER_ADDRESS",
    "SERVER_PORT",
    "CLIENT_ADDRESS",
    "CLIENT_PORT",
    "MCP_CLIENT_OPERATION_DURATION",
    "MCP_SERVER_OPERATION_DURATION",
    "MCP_CLIENT_SESSION_DURATION",
    "MCP_SERVER_SESSION_DURATION",
    "DURATION_UNIT",
    "DURATION_BUCKETS",
    "OTHER_VALUE",
    "MCP_REQUEST_OUTCOME",
    "MCP_REQUEST_CANCEL_REASON",
    "TOOL_OUTCOME",
    "TOOL_CANCEL_REASON",
    "MCP_REQUEST_RESULT_TYPE",
    "MCP_ELICITATION_ACTION",
    "MCP_SERVER_NAME",
    "MCP_SERVER_VERSION",
    "METHOD_TOOLS_CALL",
    "METHOD_CANCELLED",
    "METHOD_PROGRESS",
    "METHOD_LOG_MESSAGE",
    "NOTIFICATION_PREFIX",
    "FREQUENT_NOTIFICATIONS",
    "KNOWN_METHODS",
    "RESOURCE_URI_METHODS",
    "OPERATION_EXECUTE_TOOL",
    "TRANSPORT_PIPE",
    "TRANSPORT_TCP",
    "CALLER_FAULT_CODES",
    "URL_ELICITATION_REQUIRED_CODE",
    "NEGOTIATION_CODES",
    "USER_REJECTED_CODE",
    "DECLINING_ACTIONS",
    "ELICITATION_ACTIONS",
    "INSTRUMENTATION_SCOPE",
    "Outcome",
    "CancelReason",
    "ResultType",
    "ErrorType",
]


def comparable(value: Any) -> Any:
    """A Python name's value as JSON carries it: sets sorted, enums and ErrorType as their members."""
    if isinstance(value, type) and issubclass(value, Enum):
        return {member.name: member.value for member in value}
    if isinstance(value, type):  # ErrorType: a namespace of constants
        return {key: item for key, item in vars(value).items() if key.isupper()}
    if isinstance(value, (frozenset, set)):
        return sorted(value, key=str)
    if isinstance(value, tuple):
        return [float(item) if isinstance(item, float) else item for item in value]
    return value


def node_module(path: str) -> dict[str, Any]:
    """The exports of a built module of the TypeScript package, as JSON (sets as sorted arrays)."""
    script = (
        f"const m = require({json.dumps(str(NODE_DIST / path))});"
        "const out = {};"
        "const sorted = (v) => [...v].sort((a, b) => (String(a) < String(b) ? -1 : 1));"
        "for (const [k, v] of Object.entries(m)) out[k] = v instanceof Set ? sorted(v) : v;"
        "process.stdout.write(JSON.stringify(out));"
    )
    node = shutil.which("node")
    assert node is not None
    exports: dict[str, Any] = json.loads(
        subprocess.run([node, "-e", script], check=True, capture_output=True, text=True).stdout
    )
    return exports


needs_node_build = needs(
    "the TypeScript package is not built (make node builds it)"
    if shutil.which("node") is None or not (NODE_DIST / "semconv.js").exists()
    else None
)


@needs_node_build
def test_typescript_names_are_the_python_names() -> None:
    assert_the_python_names(node_module("semconv.js"), "TypeScript")


def assert_the_python_names(names: dict[str, Any], language: str) -> None:
    """``names`` (a language's, by Python constant name) define every shared name, each with the
    Python value, and no name Python lacks."""
    missing = [name for name in SHARED if name not in names]
    assert missing == [], f"names {language} does not define: {missing}"
    differing = {
        name: (comparable(getattr(semconv, name, None)), value)
        for name, value in names.items()
        if comparable(getattr(semconv, name, None)) != value
    }
    assert differing == {}, f"{language} names whose Python name has another value, or none (python, {language})"


@needs_node_build
def test_typescript_settings_read_the_python_variables() -> None:
    variables = node_module("config.js")["SETTING_VARIABLES"]
    python = {ENV_PREFIX + field.name.upper() for field in fields(Settings)}
    assert set(variables) <= python
    assert len(variables) == len(set(variables))


@needs_node_build
def test_typescript_package_version_is_its_scope_version() -> None:
    package = json.loads((REPO_ROOT / "node" / "package.json").read_text())
    assert node_module("version.js")["VERSION"] == package["version"]


# The same facts through both classifiers: the receiver's end of a request, and an error answer as
# its sender sees it. Each case: the facts, in the TypeScript names (the Python ones are the same
# words in snake case).
SERVER_CASES: list[dict[str, Any]] = [
    {"method": "tools/call", "answer": {"content": []}},
    {"method": "tools/call", "answer": {"content": [], "isError": True}},
    {"method": "tools/call", "answer": {"content": [], "isError": True}, "inputDeclined": True},
    {"method": "elicitation/create", "answer": {"action": "decline"}, "answerDeclined": True},
    {"method": "tools/call", "answer": {"resultType": "input_required"}},
    {"method": "tools/call", "peerCancelled": True},
    {"method": "tools/call", "isCancellation": True, "transportClosed": True},
    {"method": "tools/call", "isCancellation": True},
    *(
        {"method": method, "rpcError": {"code": code, "message": "m"}}
        for method in ("tools/call", "resources/list", "server/discover")
        for code in (-32700, -32600, -32601, -32602, -32603, -32002, -32020, -32021, -32022, -32042, -32000, 0, 7)
    ),
    {"method": "tools/call", "rpcError": {"code": -32603, "message": "m"}, "inputDeclined": True},
]
CLIENT_ERROR_CASES: list[dict[str, Any]] = [
    *(
        {"method": method, "error": {"code": code, "message": "m"}}
        for method in ("tools/call", "prompts/get", "server/discover")
        for code in (-32700, -32600, -32601, -32602, -32603, -32002, -32022, -32042, -32001, -32000, -32800, 0, 7)
    ),
    {"method": "tools/call", "error": {"code": -32603, "message": "m"}, "inputDeclined": True},
    {"method": "sampling/createMessage", "error": {"code": -1, "message": "m"}, "answerDeclined": True},
    {"method": "tools/call", "error": {"code": -32603, "message": "the tool's text"}, "keepMessage": True},
]


def verdict(found: Any) -> dict[str, Any]:
    """What a classified verdict writes: its span and point attributes and status, or its result type."""
    from mcp_otel.outcome import CallOutcome, Unfinished

    if isinstance(found, Unfinished):
        return {"resultType": found.result_type.value, "code": found.rpc_code}
    if not isinstance(found, CallOutcome):
        return {"resultType": found.value, "code": None}
    return {"attributes": dict(found.point_attributes[1]), "error": found.is_error, "description": found.description}


def python_verdicts() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from mcp_otel.classify import RpcError, classify_client_error, classify_server_call, unfinished

    def rpc(facts: dict[str, Any] | None) -> RpcError | None:
        return None if facts is None else RpcError(facts["code"], facts["message"])

    # (The Python server side asks `unfinished` of an answer first; TypeScript's classifier does.)
    server = [
        verdict(
            ("answer" in case and unfinished(case["answer"]))
            or classify_server_call(
                answer=case.get("answer"),
                rpc_error=rpc(case.get("rpcError")),
                peer_cancelled=case.get("peerCancelled", False),
                is_cancellation=case.get("isCancellation", False),
                transport_closed=case.get("transportClosed", False),
                answer_declined=case.get("answerDeclined", False),
                input_declined=case.get("inputDeclined", False),
                keep_message=case.get("keepMessage", False),
                method=case["method"],
            )
        )
        for case in SERVER_CASES
    ]
    client = [
        verdict(
            classify_client_error(
                rpc(case["error"]),  # type: ignore[arg-type]
                keep_message=case.get("keepMessage", False),
                answer_declined=case.get("answerDeclined", False),
                input_declined=case.get("inputDeclined", False),
                method=case["method"],
            )
        )
        for case in CLIENT_ERROR_CASES
    ]
    return server, client


def typescript_verdicts() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    script = f"""
const {{ classifyServerCall, classifyClientError }} = require({json.dumps(str(NODE_DIST / "classify.js"))});
const {{ Unfinished }} = require({json.dumps(str(NODE_DIST / "outcome.js"))});
const verdict = (found) => found instanceof Unfinished
  ? {{ resultType: found.resultType, code: found.rpcCode ?? null }}
  : {{ attributes: found.pointAttributes[1], error: found.isError, description: found.description ?? null }};
const server = {json.dumps(SERVER_CASES)}.map((facts) => verdict(classifyServerCall(facts)));
const client = {json.dumps(CLIENT_ERROR_CASES)}.map(
  ({{ error, ...facts }}) => verdict(classifyClientError(error, facts)));
process.stdout.write(JSON.stringify([server, client]));
"""
    node = shutil.which("node")
    assert node is not None
    server, client = json.loads(subprocess.run([node, "-e", script], check=True, capture_output=True, text=True).stdout)
    return server, client


@needs_node_build
def test_both_classifiers_give_the_same_verdict_for_the_same_facts() -> None:
    assert_the_python_verdicts(*typescript_verdicts())


def assert_the_python_verdicts(server: list[dict[str, Any]], client: list[dict[str, Any]]) -> None:
    """A language's verdicts of SERVER_CASES and CLIENT_ERROR_CASES are the Python classifier's,
    case by case (the differing ones listed with their facts)."""
    python_server, python_client = python_verdicts()
    differing = [
        (case, python, other)
        for case, python, other in zip(
            SERVER_CASES + CLIENT_ERROR_CASES, python_server + python_client, server + client, strict=True
        )
        if python != other
    ]
    assert differing == []


needs_go = needs("go is not installed" if shutil.which("go") is None else None)


def go_run(command: str, stdin: str = "") -> Any:
    """The JSON a command of the Go module's ``internal/cmd`` prints (it needs no module download)."""
    go = shutil.which("go")
    assert go is not None
    done = subprocess.run(
        [go, "run", f"./internal/cmd/{command}"], cwd=GO_MODULE, input=stdin, check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout)


@needs_go
def test_go_names_are_the_python_names() -> None:
    assert_the_python_names(go_run("names"), "Go")


@needs_go
def test_the_go_classifier_gives_the_python_verdicts() -> None:
    assert_the_python_verdicts(*go_run("classify", json.dumps({"server": SERVER_CASES, "client": CLIENT_ERROR_CASES})))
