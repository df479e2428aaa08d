//! The writer: the one function that puts a verdict (the classifier's, `model`) on a span and its
//! point. Status, `error.type` and the outcome are set here together, from that one verdict, and
//! nowhere else (docs/decisions.md rule 4); the point gets the very attributes the span got (rule 3).

use opentelemetry::KeyValue;
use opentelemetry::trace::{SpanRef, Status};

use crate::model::{Outcome, Verdict};
use crate::semconv::{MCP_REQUEST_RESULT_TYPE, RPC_RESPONSE_STATUS_CODE};

/// Writes `verdict` (and `late` attributes) on the span of a method request and ends it; a
/// finished one's outcome attributes are added to its `point` too. Ok and cancelled leave the status
/// UNSET; failed sets ERROR (a receiver's caller fault: UNSET). An unfinished answer states its
/// result type and no outcome.
pub(crate) fn finish_span(
    span: &SpanRef<'_>,
    verdict: &Verdict,
    tool_call: bool,
    late: Vec<KeyValue>,
    point: &mut Vec<KeyValue>,
) {
    match verdict {
        Verdict::Finished(outcome) => {
            let known = point.len();
            point.extend(outcome_attributes(outcome, tool_call));
            span.set_attributes(point[known..].iter().cloned());
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
fn outcome_attributes(outcome: &Outcome, tool_call: bool) -> impl Iterator<Item = KeyValue> + '_ {
    outcome.pairs(tool_call).map(|(key, value)| KeyValue::new(key, value))
}
