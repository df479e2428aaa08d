//! `src/semconv.rs` carries the sha256 of the spec it was generated from (spec/generate.py): a spec
//! changed since fails here, with no other language's toolchain. `include_bytes!` makes cargo
//! rebuild this test whenever the spec changes.

use std::fmt::Write;

use sha2::{Digest, Sha256};

const SPEC: &[u8] = include_bytes!("../../spec/names.yaml");
const GENERATED: &str = include_str!("../src/semconv.rs");

#[test]
fn the_names_module_is_generated_from_the_spec_as_it_is_now() {
    let stamp = GENERATED
        .lines()
        .find_map(|line| line.strip_prefix("// spec/names.yaml sha256 "))
        .expect("rust/src/semconv.rs has no spec hash: run python spec/generate.py");
    let sum = Sha256::digest(SPEC).iter().fold(String::new(), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    });
    assert_eq!(stamp, sum, "rust/src/semconv.rs is stale: run python spec/generate.py");
}

#[test]
fn the_outcome_values_are_the_spec_strings() {
    use mcp_otel::semconv::{CancelReason, Outcome};
    assert_eq!(Outcome::ALL.map(Outcome::as_str), ["ok", "failed", "cancelled"]);
    assert_eq!(CancelReason::ALL.map(CancelReason::as_str), ["caller", "client", "disconnect", "input_declined"]);
}
