//! The cases of content capture (spec/content.json, the file the Python, TypeScript and Go tests
//! read) through the Rust crate's: every case's value gives exactly its text.

use mcp_otel::model::captured;
use serde_json::Value;

const CASES: &str = include_str!("../../spec/content.json");

#[test]
fn every_case_captures_as_the_spec_writes_it() {
    let spec: Value = serde_json::from_str(CASES).expect("spec/content.json");
    let cases = spec["cases"].as_array().expect("cases");
    assert!(cases.len() >= 9, "{} cases", cases.len());
    for case in cases {
        let limit = usize::try_from(case["maxLength"].as_u64().expect("maxLength")).expect("a length");
        let text = captured(&case["value"], limit);
        assert_eq!(text.as_deref(), case["captured"].as_str(), "{}", case["name"]);
    }
}
