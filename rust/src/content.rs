//! Opt-in capture of tool arguments and results (`gen_ai.tool.call.arguments` / `.result`), as the
//! other languages' content modules do it, from the spec's pattern and marks.
//!
//! Off by default: nothing a tool is given or answers is recorded unless the application asks
//! (`capture_content(true)`). When on, a span of a `tools/call` gets the value as JSON, the value of
//! every secret-looking key replaced by `[REDACTED]` at any depth, the text cut to
//! `max_content_length` characters. Never on a point: content would make a series per call.

use std::sync::OnceLock;

use opentelemetry::KeyValue;
use regex_lite::Regex;
use serde::Serialize;
use serde_json::Value;

use crate::config::Config;
use crate::model::bounded;
use crate::semconv::{
    GEN_AI_TOOL_CALL_ARGUMENTS, GEN_AI_TOOL_CALL_RESULT, MAX_CONTENT_DEPTH, REDACTED, SECRET_KEY_PATTERN, TOO_DEEP,
};

/// The spec's pattern, compiled once, ignoring case (`None` only if it did not compile: then nothing
/// is captured, rather than something unredacted).
fn secret_key() -> Option<&'static Regex> {
    static SECRET_KEY: OnceLock<Option<Regex>> = OnceLock::new();
    SECRET_KEY.get_or_init(|| Regex::new(&format!("(?i){SECRET_KEY_PATTERN}")).ok()).as_ref()
}

/// `value` with every secret-looking key's value replaced, at any depth.
fn redacted(value: &Value, secret: &Regex, depth: i64) -> Value {
    if depth > MAX_CONTENT_DEPTH {
        return Value::from(TOO_DEEP);
    }
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, item)| {
                    let item =
                        if secret.is_match(key) { Value::from(REDACTED) } else { redacted(item, secret, depth + 1) };
                    (key.clone(), item)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|item| redacted(item, secret, depth + 1)).collect()),
        scalar => scalar.clone(),
    }
}

/// `{key: JSON}` when capture is on: the content as written on the wire, redacted and bounded.
fn captured(key: &'static str, content: &impl Serialize, config: &Config) -> Option<KeyValue> {
    if !config.capture_content {
        return None;
    }
    let secret = secret_key()?;
    let text = serde_json::to_value(content).ok().map(|value| redacted(&value, secret, 0).to_string())?;
    Some(KeyValue::new(key, bounded(&text, config.max_content_length).into_owned()))
}

/// A tool call's arguments, captured (a call with none has no attribute).
pub(crate) fn arguments(arguments: Option<&impl Serialize>, config: &Config) -> Option<KeyValue> {
    captured(GEN_AI_TOOL_CALL_ARGUMENTS, arguments?, config)
}

/// A tool call's result, captured (an error is no result: it has none).
pub(crate) fn result(result: Option<&impl Serialize>, config: &Config) -> Option<KeyValue> {
    captured(GEN_AI_TOOL_CALL_RESULT, result?, config)
}
