//! The pure classifier: the facts a front end read of a request's end in, one [`Verdict`] out.
//! Go's `internal/model/classify.go` line for line, in Rust's words.

use crate::semconv::{
    CALLER_FAULT_CODES, CancelReason, DECLINING_ACTIONS, METHOD_ELICITATION_CREATE, METHOD_SAMPLING_CREATE_MESSAGE,
    METHOD_SERVER_DISCOVER, NEGOTIATION_CODES, OTHER_VALUE, ResultType, URL_ELICITATION_REQUIRED_CODE,
    USER_REJECTED_CODE, error_type,
};

use super::outcome::{Outcome, Unfinished, Verdict};

// The SDKs' own codes (a request timeout: -32001, mcp 1.x Python's 408; a closed connection; the
// Python SDKs' answers to a cancel or a handler's exception): not a server's verdict on the call,
// never in rpc.response.status_code. The same set in every language (spec/verdicts.json).
const CONNECTION_CLOSED_CODE: i64 = -32000;
const SDK_TIMEOUT_CODES: [i64; 2] = [408, -32001];
const SDK_LOCAL_CODES: [i64; 5] = [408, -32001, CONNECTION_CLOSED_CODE, 0, -32800];

/// The code and message of a JSON-RPC error.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RpcError {
    /// The error's code.
    pub code: i64,
    /// The error's message (a description only when content capture is on).
    pub message: String,
}

/// What a result says of itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Answer {
    /// Its `resultType`, when not a complete result.
    pub result_type: Option<ResultType>,
    /// A tool call's `isError`.
    pub is_error: bool,
    /// An elicitation answer's action (accept, decline, cancel).
    pub action: Option<String>,
}

/// A request answered with a result, where nothing but the answer decides.
pub fn classify_answer(answer: &Answer) -> Verdict {
    if let Some(result_type @ (ResultType::InputRequired | ResultType::Task)) = answer.result_type {
        return Verdict::Unfinished(Unfinished { result_type, rpc_code: None });
    }
    Verdict::Finished(if answer.is_error { tool_error() } else { Outcome::ok() })
}

/// Whether the answer to an input request is a person's no.
pub fn is_declined_answer(method: &str, answer: &Answer, rpc: Option<&RpcError>) -> bool {
    match method {
        METHOD_ELICITATION_CREATE => {
            rpc.is_none() && answer.action.as_deref().is_some_and(|action| DECLINING_ACTIONS.contains(&action))
        }
        METHOD_SAMPLING_CREATE_MESSAGE => rpc.is_some_and(|rpc| rpc.code == USER_REJECTED_CODE),
        _ => false,
    }
}

/// How a request's sending failed: the facts the front end read of the error.
#[derive(Clone, Debug, Default)]
#[allow(clippy::struct_excessive_bools)] // facts, each a yes or no, as in every language's model
pub struct ClientFailure<'a> {
    /// The caller's own cancel (its future dropped, or its cancel through rmcp).
    pub caller_cancelled: bool,
    /// The SDK's timeout.
    pub timed_out: bool,
    /// The connection is gone.
    pub connection_closed: bool,
    /// A JSON-RPC error the peer answered.
    pub rpc: Option<RpcError>,
    /// The error's name, for `error.type` when nothing else names it.
    pub error_name: &'a str,
    /// Content capture is on: a peer's message may become the description.
    pub keep_message: bool,
    /// This answer is a person's no to an input request.
    pub answer_declined: bool,
    /// The person declined an input request of this call.
    pub input_declined: bool,
    /// The request's method.
    pub method: &'a str,
}

/// A failed send as its sender sees it.
pub fn classify_client_failure(f: &ClientFailure<'_>) -> Verdict {
    if f.caller_cancelled {
        return finished(Outcome::cancelled(CancelReason::Caller));
    }
    if let Some(rpc) = &f.rpc {
        return classify_client_error(rpc, f);
    }
    if f.answer_declined {
        return finished(declined());
    }
    if f.timed_out {
        return finished(Outcome::failed(error_type::TIMEOUT, "", None));
    }
    if f.connection_closed {
        return finished(Outcome::failed(error_type::CONNECTION_CLOSED, "", None));
    }
    let name = if f.error_name.is_empty() { OTHER_VALUE } else { f.error_name };
    finished(Outcome::failed(name.to_owned(), "", None))
}

/// A JSON-RPC error as a request's sender sees it.
fn classify_client_error(e: &RpcError, f: &ClientFailure<'_>) -> Verdict {
    if f.answer_declined {
        return finished(declined());
    }
    if SDK_TIMEOUT_CODES.contains(&e.code) {
        return finished(Outcome::failed(error_type::TIMEOUT, &e.message, None));
    }
    if e.code == CONNECTION_CLOSED_CODE {
        return finished(Outcome::failed(error_type::CONNECTION_CLOSED, &e.message, None));
    }
    if f.input_declined {
        return finished(declined());
    }
    if let Some(unfinished) = not_done(f.method, e.code) {
        return Verdict::Unfinished(unfinished);
    }
    finished(rpc_failure(e, f.keep_message))
}

/// An error answer that says the request has no result yet.
fn not_done(method: &str, code: i64) -> Option<Unfinished> {
    if code == URL_ELICITATION_REQUIRED_CODE {
        return Some(Unfinished { result_type: ResultType::InputRequired, rpc_code: Some(code.to_string()) });
    }
    if method == METHOD_SERVER_DISCOVER && NEGOTIATION_CODES.contains(&code) {
        return Some(Unfinished { result_type: ResultType::Negotiation, rpc_code: Some(code.to_string()) });
    }
    None
}

fn rpc_failure(e: &RpcError, keep_message: bool) -> Outcome {
    let wire = (!SDK_LOCAL_CODES.contains(&e.code)).then_some(e.code);
    Outcome::failed(e.code.to_string(), if keep_message { &e.message } else { "" }, wire)
}

/// How a request ended on its receiver.
#[derive(Clone, Debug, Default)]
#[allow(clippy::struct_excessive_bools)] // facts, each a yes or no, as in every language's model
pub struct ServerEnd<'a> {
    /// The result answered.
    pub answer: Option<Answer>,
    /// The JSON-RPC error answered.
    pub rpc: Option<RpcError>,
    /// The sender's `notifications/cancelled` came before the answer.
    pub peer_cancelled: bool,
    /// The handler was cancelled otherwise.
    pub is_cancellation: bool,
    /// ... by the sender closing the connection.
    pub transport_closed: bool,
    /// Content capture is on.
    pub keep_message: bool,
    /// This answer is a person's no to an input request.
    pub answer_declined: bool,
    /// The person declined an input request of this call.
    pub input_declined: bool,
    /// The request's method.
    pub method: &'a str,
}

/// How a request ended on its receiver.
pub fn classify_server_call(f: &ServerEnd<'_>) -> Verdict {
    if f.peer_cancelled {
        return finished(Outcome::cancelled(CancelReason::Client));
    }
    if f.is_cancellation && f.transport_closed {
        return finished(Outcome::cancelled(CancelReason::Disconnect));
    }
    if f.is_cancellation {
        return finished(Outcome::failed(error_type::SHUTDOWN, "server shut down with the call in flight", None));
    }
    let answer_is_error = f.answer.as_ref().is_some_and(|answer| answer.is_error);
    if f.answer_declined || (f.input_declined && (f.rpc.is_some() || answer_is_error)) {
        return finished(declined());
    }
    if let Some(rpc) = &f.rpc {
        if let Some(unfinished) = not_done(f.method, rpc.code) {
            return Verdict::Unfinished(unfinished);
        }
        if CALLER_FAULT_CODES.contains(&rpc.code) {
            return finished(Outcome::caller_fault(rpc.code));
        }
        return finished(rpc_failure(rpc, f.keep_message));
    }
    f.answer.as_ref().map_or(finished(Outcome::ok()), classify_answer)
}

/// A result on its sender's side: a person's no (the answer to an input request it sent), a tool
/// error unless the person declined an input request of the call, or ok.
pub fn classify_client_result(answer: &Answer, answer_declined: bool, input_declined: bool) -> Verdict {
    if answer_declined {
        return finished(declined());
    }
    match classify_answer(answer) {
        Verdict::Finished(outcome)
            if input_declined && outcome.error_type.as_deref() == Some(error_type::TOOL_ERROR) =>
        {
            finished(declined())
        }
        verdict => verdict,
    }
}

const fn finished(outcome: Outcome) -> Verdict {
    Verdict::Finished(outcome)
}

const fn declined() -> Outcome {
    Outcome::cancelled(CancelReason::InputDeclined)
}

fn tool_error() -> Outcome {
    Outcome::failed(error_type::TOOL_ERROR, "", None)
}
