"""The classifier's cases (``spec/verdicts.json``, the same file the TypeScript and Go tests read)
through the Python classifier: every case's facts give exactly its verdict. And the file covers
docs/outcomes.md: every row of its tables has a case, and every case names what it covers there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from mcp_otel.model.classify import (
    RpcError,
    classify_callback_crash,
    classify_client_exception,
    classify_client_result,
    classify_http_rejection,
    classify_server_call,
)
from mcp_otel.model.outcome import CallOutcome, Unfinished, Verdict
from mcp_otel.semconv import ResultType

REPO_ROOT = Path(__file__).resolve().parents[2]
SPEC = json.loads((REPO_ROOT / "spec" / "verdicts.json").read_text(encoding="utf-8"))
CASES: list[dict[str, Any]] = SPEC["cases"]
LANGUAGES = {"python", "typescript", "go", "rust"}
SHARED_FACTS = {"method", "answer", "rpcError", "keepMessage", "answerDeclined", "inputDeclined"}
# The facts the Python front ends hand the classifier, by side: a case with another is refused.
FACTS = {
    "sender": SHARED_FACTS | {"callerCancelled", "transportClosed", "errorName", "cancelSent", "httpStatus"},
    "receiver": SHARED_FACTS
    | {"peerCancelled", "isCancellation", "transportClosed", "callbackCrashed", "errorName", "httpStatus"},
}
VERDICT_KEYS = {"outcome", "status", "errorType", "rpcCode", "cancelReason", "description", "resultType", "httpStatus"}


def rpc_error(facts: dict[str, Any]) -> RpcError | None:
    error = facts.get("rpcError")
    return None if error is None else RpcError(error["code"], error["message"])


def classify(side: str, facts: dict[str, Any]) -> Verdict:
    """The Python classifier's verdict on ``facts``, through the function its front ends call."""
    unknown = set(facts) - FACTS[side]
    assert unknown == set(), f"facts the Python classifier does not take on the {side}: {unknown}"
    if "httpStatus" in facts:
        return classify_http_rejection(facts["httpStatus"], receiver=side == "receiver")
    declines = {
        "answer_declined": facts.get("answerDeclined", False),
        "input_declined": facts.get("inputDeclined", False),
    }
    if side == "receiver":
        if facts.get("callbackCrashed", False):
            return classify_callback_crash(facts["errorName"], facts["rpcError"]["code"])
        return classify_server_call(
            answer=facts.get("answer"),
            rpc_error=rpc_error(facts),
            peer_cancelled=facts.get("peerCancelled", False),
            is_cancellation=facts.get("isCancellation", False),
            transport_closed=facts.get("transportClosed", False),
            keep_message=facts.get("keepMessage", False),
            method=facts["method"],
            **declines,
        )
    if "answer" in facts:
        return classify_client_result(facts["answer"], **declines)
    error: type[Exception] = type(facts.get("errorName", "Error"), (Exception,), {})  # only its class is read
    return classify_client_exception(
        error(),
        is_cancellation=facts.get("callerCancelled", False),
        rpc_error=rpc_error(facts),
        cancel_sent=facts.get("cancelSent", False),
        transport_closed=facts.get("transportClosed", False),
        keep_message=facts.get("keepMessage", False),
        method=facts["method"],
        **declines,
    )


def verdict(found: Verdict) -> dict[str, Any]:
    """A verdict in the file's words (a key only when the verdict has it)."""
    if isinstance(found, ResultType):
        return {"status": "UNSET", "resultType": found.value}
    if isinstance(found, Unfinished):
        return {"status": "UNSET", "resultType": found.result_type.value, "rpcCode": found.rpc_code}
    assert isinstance(found, CallOutcome)
    fields = {
        "errorType": found.error_type,
        "rpcCode": found.rpc_code,
        "cancelReason": None if found.cancel_reason is None else found.cancel_reason.value,
        "description": found.description,
        "httpStatus": found.http_status,
    }
    return {
        "outcome": found.outcome.value,
        "status": "ERROR" if found.is_error else "UNSET",
        **{key: value for key, value in fields.items() if value is not None},
    }


def runs_in(case: dict[str, Any], language: str) -> bool:
    return language in case.get("languages", LANGUAGES)


PYTHON_CASES = [
    pytest.param(case, id=f"{index}-{case['side']}-{case['facts']['method']}")
    for index, case in enumerate(CASES)
    if runs_in(case, "python")
]


@pytest.mark.parametrize("case", PYTHON_CASES)
def test_the_python_classifier_gives_the_case_verdict(case: dict[str, Any]) -> None:
    assert verdict(classify(case["side"], case["facts"])) == case["verdict"]


def test_every_case_is_well_formed() -> None:
    """Sides, languages and verdict keys from the format's words; a note says why a case is not
    every language's."""
    for case in CASES:
        assert case["side"] in FACTS, case
        assert set(case["verdict"]) <= VERDICT_KEYS, case
        assert case["verdict"]["status"] in ("ERROR", "UNSET"), case
        if "languages" in case:
            assert set(case["languages"]) < LANGUAGES, case
            assert case["languages"], case
            assert case.get("note"), case
    assert len(PYTHON_CASES) > 100


OUTCOMES = (REPO_ROOT / "docs" / "outcomes.md").read_text(encoding="utf-8")


def table_rows() -> dict[str, list[str]]:
    """The first cells of docs/outcomes.md's tables: the client side's, the server side's, and the
    caller-fault codes'."""
    tables: dict[str, list[str]] = {"client": [], "server": [], "code": []}
    current: list[str] | None = None
    outcome_tables = iter(("client", "server"))
    for line in OUTCOMES.splitlines():
        if not line.startswith("|"):
            current = None
            continue
        first = line.split("|")[1].strip()
        if current is None:
            current = tables["code"] if first == "code" else tables[next(outcome_tables)]
        elif not re.fullmatch(r"-+", first):
            current.append(first)
    return tables


TABLES = table_rows()


def covered(tag: str) -> str | None:
    """The table row ``tag`` names (``table: start of its first cell``), or ``None`` for words of
    the page (``text: ...``); fails for a tag that names no row, or more than one."""
    kind, _, text = tag.partition(": ")
    if kind == "text":
        assert text in OUTCOMES, f"docs/outcomes.md does not say {text!r}"
        return None
    rows = [row for row in TABLES[kind] if row.startswith(text)]
    assert len(rows) == 1, f"{tag!r} names {len(rows)} rows of docs/outcomes.md"
    return f"{kind}: {rows[0]}"


def test_every_row_of_the_outcomes_page_has_a_case() -> None:
    assert all(TABLES.values()), TABLES  # the page still has its three tables
    named = {covered(tag) for case in CASES for tag in case["rows"]}
    missing = [f"{kind}: {row}" for kind, rows in TABLES.items() for row in rows if f"{kind}: {row}" not in named]
    assert missing == []
    assert all(case["rows"] for case in CASES)
