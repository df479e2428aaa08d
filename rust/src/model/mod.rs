//! The outcome model and its pure classifier: facts in, one verdict out (docs/outcomes.md is their
//! table). The same rules as the Python package's `model/` and Go's `internal/model`, held to the
//! same cases: `tests/verdicts.rs` runs this classifier on `spec/verdicts.json`. Beside it, the text
//! of opt-in captured content, held to `spec/content.json` (`tests/content.rs`). No OpenTelemetry
//! and no rmcp in here.

mod classify;
mod content;
mod outcome;

pub use classify::{
    Answer, ClientFailure, RpcError, ServerEnd, classify_answer, classify_client_failure, classify_client_result,
    classify_server_call, is_declined_answer,
};
pub use content::captured;
pub use outcome::{MAX_DESCRIPTION_LENGTH, Outcome, Pair, Unfinished, Verdict, bounded};
