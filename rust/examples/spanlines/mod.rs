//! What the cross-language test programs (crossagent, crossserver) share: a tracer provider that
//! writes each span as it ends to the file `MCP_OTEL_RUST_SPAN_FILE` names, one JSON line each, in
//! the shape tests/node/telemetry.cjs and go/test/internal/cmd/spanlines write them (ids in
//! lowercase hex, kind and status by name): tests/node/conftest.py's `Span` reads every language's.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::Mutex;

use opentelemetry::trace::{SpanId, SpanKind, Status};
use opentelemetry::{Array, StringValue, Value, global};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use serde_json::{Map, json};

/// Names the file the spans go to.
const SPAN_FILE_ENV: &str = "MCP_OTEL_RUST_SPAN_FILE";

/// The variable's value, or `fallback` when it is unset.
pub fn env_or(key: &str, fallback: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| fallback.to_owned())
}

/// A provider (also the global one) that writes each span as it ends to the span file, if one is
/// named, as service `OTEL_SERVICE_NAME` (else `service`).
///
/// # Errors
///
/// The span file cannot be opened.
pub fn tracer_provider(service: &str) -> std::io::Result<SdkTracerProvider> {
    let resource = Resource::builder().with_service_name(env_or("OTEL_SERVICE_NAME", service)).build();
    let mut builder = SdkTracerProvider::builder().with_resource(resource);
    if let Ok(path) = std::env::var(SPAN_FILE_ENV) {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        // The simple processor exports each span as it ends: nothing is lost if the process is stopped.
        builder = builder.with_simple_exporter(JsonLines { file: Mutex::new(file), service: None });
    }
    let provider = builder.build();
    global::set_tracer_provider(provider.clone());
    Ok(provider)
}

/// Appends finished spans to a file, one JSON line each.
struct JsonLines {
    file: Mutex<File>,
    service: Option<String>,
}

impl fmt::Debug for JsonLines {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("JsonLines")
    }
}

impl SpanExporter for JsonLines {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let mut lines = String::new();
        for span in batch {
            let attributes: Map<String, serde_json::Value> =
                span.attributes.iter().map(|kv| (kv.key.to_string(), plain(&kv.value))).collect();
            let parent = (span.parent_span_id != SpanId::INVALID).then(|| span.parent_span_id.to_string());
            let line = json!({
                "name": span.name,
                "kind": kind(&span.span_kind),
                "trace_id": span.span_context.trace_id().to_string(),
                "span_id": span.span_context.span_id().to_string(),
                "parent_id": parent,
                "attributes": attributes,
                "status": status(&span.status),
                "scope": span.instrumentation_scope.name(),
                "service": self.service,
            });
            lines.push_str(&line.to_string());
            lines.push('\n');
        }
        let mut file = self.file.lock().map_err(|_| OTelSdkError::InternalFailure("span file poisoned".into()))?;
        file.write_all(lines.as_bytes()).map_err(|error| OTelSdkError::InternalFailure(error.to_string()))
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.service = resource.get(&"service.name".into()).map(|name| name.as_str().into_owned());
    }
}

fn kind(kind: &SpanKind) -> &'static str {
    match kind {
        SpanKind::Internal => "INTERNAL",
        SpanKind::Server => "SERVER",
        SpanKind::Client => "CLIENT",
        SpanKind::Producer => "PRODUCER",
        SpanKind::Consumer => "CONSUMER",
    }
}

fn status(status: &Status) -> &'static str {
    match status {
        Status::Unset => "UNSET",
        Status::Ok => "OK",
        Status::Error { .. } => "ERROR",
    }
}

/// An attribute's value as JSON of its own type (a number stays a number).
fn plain(value: &Value) -> serde_json::Value {
    match value {
        Value::Bool(value) => json!(value),
        Value::I64(value) => json!(value),
        Value::F64(value) => json!(value),
        Value::Array(Array::Bool(values)) => json!(values),
        Value::Array(Array::I64(values)) => json!(values),
        Value::Array(Array::F64(values)) => json!(values),
        Value::Array(Array::String(values)) => json!(values.iter().map(StringValue::as_str).collect::<Vec<_>>()),
        other => json!(other.as_str()),
    }
}
