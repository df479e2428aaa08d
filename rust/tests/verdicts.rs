//! The classifier's cases (spec/verdicts.json, the file the Python, TypeScript and Go tests read)
//! through the Rust classifier: every case's facts give exactly its verdict.

use std::collections::BTreeMap;

use mcp_otel::model::{
    Answer, ClientFailure, RpcError, ServerEnd, Verdict, classify_client_failure, classify_client_result,
    classify_server_call,
};
use mcp_otel::semconv::ResultType;
use serde_json::{Map, Value, json};

const CASES: &str = include_str!("../../spec/verdicts.json");

const SHARED_FACTS: [&str; 6] = ["method", "answer", "rpcError", "keepMessage", "answerDeclined", "inputDeclined"];

/// The facts the Rust front ends hand the classifier, by side: a case with another is refused.
fn takes(side: &str, fact: &str) -> bool {
    SHARED_FACTS.contains(&fact)
        || match side {
            "sender" => ["callerCancelled", "timedOut", "transportClosed", "errorName"].contains(&fact),
            _ => ["peerCancelled", "isCancellation", "transportClosed"].contains(&fact),
        }
}

fn flag(facts: &Map<String, Value>, name: &str) -> bool {
    facts.get(name).and_then(Value::as_bool).unwrap_or(false)
}

fn text<'a>(facts: &'a Map<String, Value>, name: &str) -> &'a str {
    facts.get(name).and_then(Value::as_str).unwrap_or_default()
}

fn answer_of(facts: &Map<String, Value>) -> Option<Answer> {
    let answer = facts.get("answer")?;
    let result_type = answer
        .get("resultType")
        .and_then(Value::as_str)
        .and_then(|kind| ResultType::ALL.into_iter().find(|known| known.as_str() == kind));
    Some(Answer {
        result_type,
        is_error: answer.get("isError").and_then(Value::as_bool).unwrap_or(false),
        action: answer.get("action").and_then(Value::as_str).map(str::to_owned),
    })
}

/// The Rust classifier's verdict on a case's facts, through the functions its front ends call.
fn classify(side: &str, facts: &Map<String, Value>) -> Verdict {
    let unknown: Vec<&String> = facts.keys().filter(|fact| !takes(side, fact)).collect();
    assert!(unknown.is_empty(), "facts the Rust classifier does not take on the {side}: {unknown:?}");
    let rpc = facts.get("rpcError").map(|error| RpcError {
        code: error["code"].as_i64().expect("a code"),
        message: error.get("message").and_then(Value::as_str).unwrap_or_default().to_owned(),
    });
    let answer = answer_of(facts);
    if side == "receiver" {
        return classify_server_call(&ServerEnd {
            answer,
            rpc,
            peer_cancelled: flag(facts, "peerCancelled"),
            is_cancellation: flag(facts, "isCancellation"),
            transport_closed: flag(facts, "transportClosed"),
            keep_message: flag(facts, "keepMessage"),
            answer_declined: flag(facts, "answerDeclined"),
            input_declined: flag(facts, "inputDeclined"),
            method: text(facts, "method"),
        });
    }
    if let Some(answer) = answer {
        return classify_client_result(&answer, flag(facts, "answerDeclined"), flag(facts, "inputDeclined"));
    }
    let error_name = text(facts, "errorName");
    classify_client_failure(&ClientFailure {
        caller_cancelled: flag(facts, "callerCancelled"),
        timed_out: flag(facts, "timedOut"),
        connection_closed: flag(facts, "transportClosed"),
        rpc,
        error_name: if error_name.is_empty() { "Error" } else { error_name }, // the file's default
        keep_message: flag(facts, "keepMessage"),
        answer_declined: flag(facts, "answerDeclined"),
        input_declined: flag(facts, "inputDeclined"),
        method: text(facts, "method"),
    })
}

/// A verdict in the file's words (a key only when the verdict has it).
fn in_file_words(verdict: &Verdict) -> Value {
    let mut out = BTreeMap::from([("status", json!("UNSET"))]);
    match verdict {
        Verdict::Unfinished(unfinished) => {
            out.insert("resultType", json!(unfinished.result_type.as_str()));
            if let Some(code) = &unfinished.rpc_code {
                out.insert("rpcCode", json!(code));
            }
        }
        Verdict::Finished(outcome) => {
            out.insert("outcome", json!(outcome.outcome.as_str()));
            if outcome.is_error() {
                out.insert("status", json!("ERROR"));
            }
            if let Some(error_type) = &outcome.error_type {
                out.insert("errorType", json!(error_type));
            }
            if let Some(code) = &outcome.rpc_code {
                out.insert("rpcCode", json!(code));
            }
            if let Some(reason) = outcome.cancel_reason {
                out.insert("cancelReason", json!(reason.as_str()));
            }
            if !outcome.description.is_empty() {
                out.insert("description", json!(outcome.description));
            }
        }
    }
    json!(out)
}

#[test]
fn the_rust_classifier_gives_the_case_verdicts() {
    let spec: Value = serde_json::from_str(CASES).expect("spec/verdicts.json");
    let mut ran = 0;
    let mut wrong = Vec::new();
    for (index, case) in spec["cases"].as_array().expect("cases").iter().enumerate() {
        if let Some(languages) = case.get("languages").and_then(Value::as_array)
            && !languages.iter().any(|language| language == "rust")
        {
            continue;
        }
        ran += 1;
        let facts = case["facts"].as_object().expect("facts");
        let got = in_file_words(&classify(case["side"].as_str().expect("side"), facts));
        if got != case["verdict"] {
            wrong.push(format!("case {index} {} {}: got {got}, want {}", case["rows"], case["facts"], case["verdict"]));
        }
    }
    assert!(wrong.is_empty(), "{} cases differ:\n{}", wrong.len(), wrong.join("\n"));
    assert!(ran >= 100, "{ran} cases ran");
}
