//! The text of opt-in captured content (a tool call's arguments or result): the same in every
//! language, held to the cases of `spec/content.json` (`tests/content.rs`).
//!
//! The value of every secret-looking key is `[REDACTED]`, at any depth; content nested deeper than
//! the spec's depth is one mark; JSON with no spaces, object keys sorted by code point (whatever
//! order `serde_json` keeps, `preserve_order` or not); cut to the limit's characters.

use std::sync::OnceLock;

use regex_lite::Regex;
use serde_json::{Map, Value};

use super::outcome::bounded;
use crate::semconv::{MAX_CONTENT_DEPTH, REDACTED, SECRET_KEY_PATTERN, TOO_DEEP};

/// The spec's pattern, compiled once, ignoring case (`None` only if it did not compile: then nothing
/// is captured, rather than something unredacted).
fn secret_key() -> Option<&'static Regex> {
    static SECRET_KEY: OnceLock<Option<Regex>> = OnceLock::new();
    SECRET_KEY.get_or_init(|| Regex::new(&format!("(?i){SECRET_KEY_PATTERN}")).ok()).as_ref()
}

/// `value` with every secret-looking key's value replaced, its objects' keys in order.
fn redacted(value: &Value, secret: &Regex, depth: i64) -> Value {
    if depth > MAX_CONTENT_DEPTH {
        return Value::from(TOO_DEEP);
    }
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by_key(|(key, _)| *key);
            let redact = |(key, item): (&String, &Value)| {
                let item = if secret.is_match(key) { Value::from(REDACTED) } else { redacted(item, secret, depth + 1) };
                (key.clone(), item)
            };
            Value::Object(entries.into_iter().map(redact).collect::<Map<String, Value>>())
        }
        Value::Array(items) => Value::Array(items.iter().map(|item| redacted(item, secret, depth + 1)).collect()),
        scalar => scalar.clone(),
    }
}

/// The text a span carries of `content`, cut to `limit` characters (`None` only when the spec's
/// pattern could not be compiled).
pub fn captured(content: &Value, limit: usize) -> Option<String> {
    let text = redacted(content, secret_key()?, 0).to_string();
    Some(bounded(&text, limit).into_owned())
}
