//! docs/rust.md shows the ADK adapter as `src/lib.rs` holds it: the code users copy is the code
//! tested.

#[test]
fn the_docs_show_the_adapter_as_tested() {
    let page = include_str!("../../../docs/rust.md");
    let code = include_str!("../src/lib.rs")
        .split_once("\n\nuse ")
        .map(|(_, rest)| format!("use {rest}"))
        .expect("the adapter's code after its module docs");
    assert!(page.contains(&code), "docs/rust.md's ADK adapter differs from rust/frameworks/src/lib.rs");
}
