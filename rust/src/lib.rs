//! OpenTelemetry for the Rust MCP SDK, [rmcp](https://crates.io/crates/rmcp): one CLIENT span per
//! request a client sends and one SERVER span per request a service handles, in one trace, each
//! stating `mcp.request.outcome` = `ok` | `failed` | `cancelled` (`tool.outcome` on tool calls),
//! status ERROR only for failures: a caller's cancel, a dropped call future included, is never a
//! server's failure. The names, the outcomes and the classifier's verdicts are the other mcp-otel
//! packages' (Python, TypeScript, Go), generated from one spec.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! # #[derive(Clone)] struct Weather;
//! # impl rmcp::ServerHandler for Weather {}
//! use rmcp::ServiceExt;
//!
//! // A server: every request it handles gets a SERVER span (the wrapped transport tells a
//! // client that hung up mid-call from an answered one).
//! let server = mcp_otel::service(Weather).serve(mcp_otel::transport(rmcp::transport::stdio())).await?;
//!
//! // A client: every request sent through it gets a CLIENT span, its context in `params._meta`.
//! # let transport = rmcp::transport::stdio();
//! let client = mcp_otel::client(().serve(transport).await?);
//! let tools = client.list_tools(None).await?;
//! # Ok(()) }
//! ```
//!
//! With the feature `streamable-http-server`, `McpOtel::sessionless` wraps rmcp's
//! `StreamableHttpService`: a SERVER span for each request it serves without a session.
//!
//! docs/rust.md in the repository: each outcome, what rmcp does in each case, and the limits.

#[rustfmt::skip]
#[allow(clippy::doc_markdown, clippy::unreadable_literal)]
pub mod semconv;

mod attributes;
mod client;
mod config;
mod facts;
#[cfg(feature = "streamable-http-server")]
pub mod http;
mod instrument;
mod lifecycle;
mod metrics;
pub mod model;
mod options;
mod propagation;
mod service;
mod wire;
mod writer;

use rmcp::service::{RunningService, ServiceRole};
use rmcp::transport::{IntoTransport, Transport};
use rmcp::{RoleClient, Service};

pub use client::Client;
pub use instrument::McpOtel;
pub use options::Builder;
pub use semconv::Outcome;
pub use service::Instrumented;
pub use wire::Wire;

/// `service` with a SERVER span for every request it handles, on the global providers
/// ([`McpOtel::global`]).
pub fn service<S>(service: S) -> Instrumented<S> {
    McpOtel::global().service(service)
}

/// `running` (a client, after its handshake) with a CLIENT span for every request sent through
/// the returned [`Client`], on the global providers ([`McpOtel::global`]).
pub fn client<S: Service<RoleClient>>(running: RunningService<RoleClient, S>) -> Client<S> {
    McpOtel::global().client(running)
}

/// `transport` (anything rmcp's `serve` takes) with the wire front end around it, on the global
/// providers ([`McpOtel::global`]): what only the connection shows (a peer that hung up), and the
/// requests sent past [`Client`] traced (rmcp's `initialize`, a framework's, a server's own).
pub fn transport<R, T, E, A>(transport: T) -> Wire<impl Transport<R, Error = E>>
where
    R: ServiceRole,
    T: IntoTransport<R, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    McpOtel::global().transport(transport)
}
