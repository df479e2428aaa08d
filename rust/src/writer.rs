//! The writer: the one function that puts a verdict (the classifier's, `model`) on a span. Status,
//! `error.type` and the outcome are set here together, from that one verdict, and nowhere else
//! (docs/decisions.md rule 4).

use opentelemetry::KeyValue;
use opentelemetry::trace::{SpanRef, Status};

use crate::model::{Outcome, Verdict};
use crate::semconv::{MCP_REQUEST_RESULT_TYPE, RPC_RESPONSE_STATUS_CODE};

/// Writes `verdict` (and `late` attributes) on the span of a method request and ends it. Ok and
/// cancelled leave the status UNSET; failed sets ERROR (a receiver's caller fault: UNSET). An
/// unfinished answer states its result type and no outcome.
pub(crate) fn finish_span(span: &SpanRef<'_>, verdict: &Verdict, tool_call: bool, late: Vec<KeyValue>) {
    match verdict {
        Verdict::Finished(outcome) => {
            span.set_attributes(outcome_attributes(outcome, tool_call));
            if outcome.is_error() {
                span.set_status(Status::error(outcome.description.clone()));
            }
        }
        Verdict::Unfinished(unfinished) => {
            span.set_attribute(KeyValue::new(MCP_REQUEST_RESULT_TYPE, unfinished.result_type.as_str()));
            if let Some(code) = &unfinished.rpc_code {
                span.set_attribute(KeyValue::new(RPC_RESPONSE_STATUS_CODE, code.clone()));
            }
        }
    }
    if !late.is_empty() {
        span.set_attributes(late);
    }
    span.end();
}

/// An outcome's attributes on a span and its point.
pub(crate) fn outcome_attributes(outcome: &Outcome, tool_call: bool) -> impl Iterator<Item = KeyValue> {
    outcome.pairs(tool_call).into_iter().map(|(key, value)| KeyValue::new(key, value))
}
