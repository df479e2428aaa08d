//! A classified outcome (`Outcome`), or an answer with no result yet (`Unfinished`): what the writer
//! puts on a span and the metrics on a point.

use std::borrow::Cow;

use crate::semconv::{
    self, CancelReason, ERROR_TYPE, MCP_REQUEST_CANCEL_REASON, MCP_REQUEST_OUTCOME, RPC_RESPONSE_STATUS_CODE,
    TOOL_CANCEL_REASON, TOOL_OUTCOME,
};

/// Status descriptions come from peers: bounded.
pub const MAX_DESCRIPTION_LENGTH: usize = 512;

/// One attribute of a span and its point.
pub type Pair = (&'static str, Cow<'static, str>);

/// How a request ended: an outcome, or an answer with no result yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The request finished: ok, failed or cancelled.
    Finished(Outcome),
    /// The request was answered with something other than its result (no outcome, no point).
    Unfinished(Unfinished),
}

/// A classified outcome. Build it with [`Outcome::ok`], [`Outcome::failed`],
/// [`Outcome::caller_fault`] or [`Outcome::cancelled`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The tri-state value.
    pub outcome: semconv::Outcome,
    /// `error.type`, when failed (never on a receiver's caller fault).
    pub error_type: Option<Cow<'static, str>>,
    /// A peer's wire code (`rpc.response.status_code`).
    pub rpc_code: Option<String>,
    /// The status description of a failure (bounded).
    pub description: String,
    /// Why a cancelled request was cancelled.
    pub cancel_reason: Option<CancelReason>,
    /// On a receiver: the request was wrong (no `error.type`, status UNSET).
    pub caller_fault: bool,
}

impl Outcome {
    /// The outcome of most requests.
    pub const fn ok() -> Self {
        Self {
            outcome: semconv::Outcome::Ok,
            error_type: None,
            rpc_code: None,
            description: String::new(),
            cancel_reason: None,
            caller_fault: false,
        }
    }

    /// A failure of `error_type`; `rpc_code` is a peer's wire code.
    pub fn failed(error_type: impl Into<Cow<'static, str>>, description: &str, rpc_code: Option<i64>) -> Self {
        Self {
            outcome: semconv::Outcome::Failed,
            error_type: Some(error_type.into()),
            rpc_code: rpc_code.map(|code| code.to_string()),
            description: bounded(description, MAX_DESCRIPTION_LENGTH).into_owned(),
            ..Self::ok()
        }
    }

    /// A receiver's JSON-RPC answer that blames the request: no `error.type`, status UNSET.
    pub fn caller_fault(code: i64) -> Self {
        Self { outcome: semconv::Outcome::Failed, rpc_code: Some(code.to_string()), caller_fault: true, ..Self::ok() }
    }

    /// A cancel, for `reason`.
    pub const fn cancelled(reason: CancelReason) -> Self {
        Self {
            outcome: semconv::Outcome::Cancelled,
            error_type: None,
            rpc_code: None,
            description: String::new(),
            cancel_reason: Some(reason),
            caller_fault: false,
        }
    }

    /// Whether the span's status is ERROR: a cancel is not, nor on a receiver a caller's fault.
    pub fn is_error(&self) -> bool {
        self.outcome == semconv::Outcome::Failed && !self.caller_fault
    }

    /// The outcome's attributes on a span and its point (`tool.*` again on tool calls), with no
    /// allocation but a peer's code.
    pub fn pairs(&self, tool_call: bool) -> impl Iterator<Item = Pair> + '_ {
        let value = self.outcome.as_str();
        let reason = self.cancel_reason.map(CancelReason::as_str);
        [
            Some((MCP_REQUEST_OUTCOME, Cow::Borrowed(value))),
            tool_call.then_some((TOOL_OUTCOME, Cow::Borrowed(value))),
            self.error_type.clone().map(|error_type| (ERROR_TYPE, error_type)),
            self.rpc_code.clone().map(|code| (RPC_RESPONSE_STATUS_CODE, Cow::Owned(code))),
            reason.map(|reason| (MCP_REQUEST_CANCEL_REASON, Cow::Borrowed(reason))),
            reason.filter(|_| tool_call).map(|reason| (TOOL_CANCEL_REASON, Cow::Borrowed(reason))),
        ]
        .into_iter()
        .flatten()
    }
}

/// A request answered with no result yet: its result type, and the code that said so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unfinished {
    /// `mcp.request.result_type`.
    pub result_type: semconv::ResultType,
    /// The error code that said so, when an error did.
    pub rpc_code: Option<String>,
}

/// `text` cut to `limit` characters, the cut marked.
pub fn bounded(text: &str, limit: usize) -> Cow<'_, str> {
    // No more bytes than the limit: no more characters either (most names), without counting them.
    if text.len() <= limit || text.chars().count() <= limit {
        return Cow::Borrowed(text);
    }
    let mut out: String = text.chars().take(limit.saturating_sub(1)).collect();
    out.push('…');
    Cow::Owned(out)
}
