//! The crate's tests, one test binary, each file a module. As eight binaries, each built rmcp's
//! client and server, tokio's runtime and the SDK's pipeline into itself again: compiling them took
//! 175 s against this binary's 41 (cargo's timings, 2026-12-07), for each rmcp version tested.

mod common;

mod content;
mod floor;
mod hostile;
mod http;
mod in_memory;
mod options;
mod semconv;
mod verdicts;
mod wire;
