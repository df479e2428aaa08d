//! What mcp-otel costs a `tools/call`, against the same call uninstrumented (`bare`) and with the
//! same spans and points made by hand (`floor`: the module `floor/`, which `tests/floor.rs` holds
//! equal to what mcp-otel records). `ours` is mcp-otel as docs/rust.md shows it (the service,
//! `Client`, and both transports wrapped); `unwired` the service and `Client` alone.
//! Every variant records to the same real SDK providers (spans through a batch processor to an
//! exporter that drops them, points aggregated in memory). The added-cost ratio is
//! `(ours - bare) / (floor - bare)`: docs/performance.md, issue 58 asks at most 1.10.
//!
//! ```text
//! cargo bench --bench cost -- instructions [ROUNDS] [CALLS]     # under valgrind: in memory and over stdio
//! cargo bench --bench cost -- cpu [ROUNDS] [CALLS] [TRANSPORT]  # CPU per call, the calling thread's
//! cargo bench --bench cost -- memory [CALLS]                    # resident memory over CALLS calls
//! cargo bench --bench cost -- run VARIANT TRANSPORT CALLS       # one run (what valgrind runs)
//! MCP_OTEL_BENCH_PROPAGATOR=default cargo bench ...             # ours on its default propagator
//! ```
//!
//! Instructions: a figure per call is the difference of two runs of one variant (CALLS and 2 x
//! CALLS calls), so start-up does not count; the variants are interleaved round by round. CPU: a
//! connection of each variant stays open, and each round times CALLS calls of each, in an order
//! shuffled round by round. Over stdio the server is a child process of the same variant (only the
//! client's process is counted).
#![allow(missing_docs, clippy::cast_precision_loss)]

use std::env;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, Implementation, InitializeResult,
    ServerCapabilities,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{RoleClient, RoleServer, ServerHandler, ServiceExt};

mod floor;

use floor::{Floor, FloorServer};

const VARIANTS: [&str; 4] = ["bare", "floor", "ours", "unwired"];
const TRANSPORTS: [&str; 2] = ["memory", "stdio"];

#[derive(Clone)]
struct Weather;

impl ServerHandler for Weather {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("weather", "2.1.0"))
    }

    async fn call_tool(
        &self,
        _: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text("sunny")])))
    }
}

/// Spans are made and exported, then dropped.
#[derive(Debug)]
struct Discard;

impl SpanExporter for Discard {
    async fn export(&self, _: Vec<SpanData>) -> OTelSdkResult {
        Ok(())
    }
}

struct Providers {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
}

impl Providers {
    fn new() -> Self {
        Self {
            tracer: SdkTracerProvider::builder().with_batch_exporter(Discard).build(),
            // Points are aggregated in memory; the reader exports only every 60 s.
            meter: SdkMeterProvider::builder()
                .with_reader(PeriodicReader::builder(InMemoryMetricExporter::default()).build())
                .build(),
        }
    }
}

/// mcp-otel on the benchmark's providers, with W3C trace context configured as the floor's; with
/// `MCP_OTEL_BENCH_PROPAGATOR=default`, on its default instead (the global propagator, resolved per
/// request; W3C trace context while none is set, as here).
fn ours(providers: &Providers) -> mcp_otel::McpOtel {
    let builder = mcp_otel::McpOtel::builder().tracer_provider(&providers.tracer).meter_provider(&providers.meter);
    if env::var("MCP_OTEL_BENCH_PROPAGATOR").as_deref() == Ok("default") {
        builder.build()
    } else {
        builder.propagator(TraceContextPropagator::new()).build()
    }
}

/// Serves `variant` on `transport` until its client hangs up.
async fn serve<T, E, A: 'static>(variant: &str, providers: &Providers, transport: T)
where
    T: rmcp::transport::IntoTransport<RoleServer, E, A> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let network = mcp_otel_network::<T>();
    let waiting = match variant {
        "bare" => Weather.serve(transport).await.expect("served").waiting().await,
        "floor" => {
            FloorServer::new(Floor::new(&providers.tracer, &providers.meter), Weather, network)
                .serve(transport)
                .await
                .expect("served")
                .waiting()
                .await
        }
        "ours" => {
            let otel = ours(providers);
            otel.service(Weather).serve(otel.transport(transport)).await.expect("served").waiting().await
        }
        _ => ours(providers).service(Weather).serve(transport).await.expect("served").waiting().await,
    };
    drop(waiting);
}

/// The `network.transport` the floor states over `T`: what mcp-otel states of the two transports
/// here (stdio and a child process, `pipe`; in memory, none).
fn mcp_otel_network<T>() -> Option<&'static str> {
    let name = std::any::type_name::<T>();
    (name.contains("Stdin") || name.contains("TokioChildProcess")).then_some("pipe")
}

/// A client of one variant, connected, making its calls as that variant makes them.
enum Caller {
    Bare(RunningService<RoleClient, ()>),
    Floor { client: RunningService<RoleClient, ()>, floor: Floor, network: Option<&'static str>, id: i64 },
    Ours(mcp_otel::Client<()>),
}

impl Caller {
    /// A client of `variant`, in memory (both sides in this process, the server's on
    /// `server_providers`) or over stdio (the server a child process of the same variant).
    async fn connect(variant: &str, transport: &str, providers: &Providers, server_providers: &Arc<Providers>) -> Self {
        let otel = ours(providers);
        let wired = variant == "ours";
        let (client, network) = if transport == "memory" {
            let (client_io, server_io) = tokio::io::duplex(1 << 16);
            let (variant_owned, server_providers) = (variant.to_owned(), Arc::clone(server_providers));
            tokio::spawn(async move { serve(&variant_owned, &server_providers, server_io).await });
            let client = if wired { ().serve(otel.transport(client_io)).await } else { ().serve(client_io).await };
            (client.expect("handshake"), None)
        } else {
            let mut command = tokio::process::Command::new(env::current_exe().expect("this program"));
            command.args(["serve", variant]);
            let child = rmcp::transport::TokioChildProcess::new(command).expect("spawned");
            let network = mcp_otel_network::<rmcp::transport::TokioChildProcess>();
            let client = if wired { ().serve(otel.transport(child)).await } else { ().serve(child).await };
            (client.expect("handshake"), network)
        };
        match variant {
            "bare" => Self::Bare(client),
            "floor" => Self::Floor { client, floor: Floor::new(&providers.tracer, &providers.meter), network, id: 0 },
            _ => Self::Ours(otel.client(client)),
        }
    }

    async fn calls(&mut self, calls: usize) {
        for _ in 0..calls {
            match self {
                Self::Bare(client) => {
                    client.call_tool(CallToolRequestParams::new("ok")).await.expect("answered");
                }
                Self::Floor { client, floor, network, id } => {
                    *id += 1;
                    floor.call(client, "ok", *network, *id).await;
                }
                Self::Ours(client) => {
                    client.call_tool(CallToolRequestParams::new("ok")).await.expect("answered");
                }
            }
        }
    }

    async fn close(self) {
        let _ = match self {
            Self::Bare(client) | Self::Floor { client, .. } => client.cancel().await,
            Self::Ours(client) => client.into_inner().cancel().await,
        };
    }
}

/// `calls` tool calls of `variant` on a connection of their own.
async fn run(variant: &str, transport: &str, calls: usize, providers: &Providers, server_providers: &Arc<Providers>) {
    let mut caller = Caller::connect(variant, transport, providers, server_providers).await;
    caller.calls(calls).await;
    caller.close().await;
}

/// Instructions the client process ran for `calls` calls of `variant` (cachegrind's `I refs`).
fn instructions(variant: &str, transport: &str, calls: usize) -> u64 {
    counted(&["run", variant, transport, &calls.to_string()])
}

/// Instructions this program ran with `args` (cachegrind's `I refs`).
fn counted(args: &[&str]) -> u64 {
    let exe = env::current_exe().expect("this program");
    let output = Command::new("valgrind")
        .args(["--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"])
        .arg(exe)
        .args(args)
        .output()
        .expect("valgrind runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    stderr
        .lines()
        .find_map(|line| {
            let (label, count) = line.split_once("refs:")?;
            label.trim_end().ends_with(" I").then(|| count.trim().replace(',', ""))
        })
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("no I refs in:\n{stderr}"))
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// A line per instrumented variant: its figure and what it adds to `bare`, beside the floor's (the
/// medians of the rounds), their ratio, and that ratio's 90% interval: its 5th and 95th percentiles
/// over 2,000 resamplings of the rounds (whole rounds, drawn with replacement).
fn report(what: &str, transport: &str, samples: &[Vec<f64>; 4]) {
    let all: Vec<usize> = (0..samples[0].len()).collect();
    let medians =
        |rounds: &[usize]| samples.each_ref().map(|figures| median(rounds.iter().map(|&r| figures[r]).collect()));
    let figures = medians(&all);
    let [bare, floor, ..] = figures;
    let mut draw = Shuffle(0x2545_f491_4f6c_dd1d);
    let resampled: Vec<[f64; 4]> =
        (0..2000).map(|_| medians(&all.iter().map(|_| draw.below(all.len())).collect::<Vec<_>>())).collect();
    for (index, variant) in VARIANTS.iter().enumerate().skip(2) {
        let figure = figures[index];
        let mut ratios: Vec<f64> =
            resampled.iter().map(|drawn| (drawn[index] - drawn[0]) / (drawn[1] - drawn[0])).collect();
        ratios.sort_by(f64::total_cmp);
        println!(
            "{what:<13} {transport:<7} bare {bare:>10.0}  floor {floor:>10.0}  {variant:<8} {figure:>10.0}  added: floor {:>8.0} {variant:<8} {:>8.0}  ratio {:.3}  90% {:.3}-{:.3}",
            floor - bare,
            figure - bare,
            (figure - bare) / (floor - bare),
            ratios[ratios.len() / 20],
            ratios[ratios.len() * 19 / 20],
        );
    }
}

/// CPU the calling thread has run (`CLOCK_THREAD_CPUTIME_ID`, to the nanosecond). On the
/// benchmark's current-thread runtime that is every task of the call, both sides' in memory; the
/// batch span processors' threads are left out: they export on their own schedule, so their work
/// would land in whichever variant's turn it is.
fn thread_cpu() -> Duration {
    let time = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).expect("a thread's CPU clock");
    Duration::from(time)
}

fn resident_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("linux");
    statm.split(' ').nth(1).and_then(|pages| pages.parse::<u64>().ok()).expect("resident pages") * 4
}

/// Each transport's per-call figure of each variant: `measure(variant, transport, calls)` for
/// `calls` and `2 x calls` calls, the difference over `calls`, the variants interleaved round by
/// round, the median of the rounds.
fn interleaved(what: &str, rounds: usize, calls: usize, mut measure: impl FnMut(&str, &str, usize) -> f64) {
    for transport in TRANSPORTS {
        let mut samples: [Vec<f64>; 4] = Default::default();
        for _ in 0..rounds {
            for (index, variant) in VARIANTS.iter().enumerate() {
                let (one, two) = (measure(variant, transport, calls), measure(variant, transport, 2 * calls));
                samples[index].push((two - one) / calls as f64);
            }
        }
        report(what, transport, &samples);
    }
}

/// CPU per call of each variant on each transport: a connection of each variant kept open, `calls`
/// calls of each in turn (after as many to warm up), the turns shuffled round by round so that no
/// variant always follows another, the medians of the rounds.
async fn cpu(
    rounds: usize,
    calls: usize,
    transports: &[&str],
    providers: &Providers,
    server_providers: &Arc<Providers>,
) {
    let mut order = Shuffle(0x9e37_79b9_7f4a_7c15);
    for &transport in transports {
        let mut callers = Vec::new();
        for variant in VARIANTS {
            let mut caller = Caller::connect(variant, transport, providers, server_providers).await;
            caller.calls(calls).await;
            callers.push(caller);
        }
        let mut samples: [Vec<f64>; 4] = Default::default();
        for _ in 0..rounds {
            for index in order.permutation() {
                let before = thread_cpu();
                callers[index].calls(calls).await;
                samples[index].push(thread_cpu().saturating_sub(before).as_nanos() as f64 / calls as f64);
            }
        }
        for caller in callers {
            caller.close().await;
        }
        report("cpu ns", transport, &samples);
    }
}

/// A fixed-seed xorshift: the same orders run after run, no dependency for it.
struct Shuffle(u64);

impl Shuffle {
    fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % bound as u64).expect("below a usize")
    }

    /// The variants' indexes in a random order (Fisher-Yates).
    fn permutation(&mut self) -> [usize; 4] {
        let mut order = [0, 1, 2, 3];
        for last in (1..order.len()).rev() {
            order.swap(last, self.below(last + 1));
        }
        order
    }
}

fn main() {
    let args: Vec<String> = env::args().skip(1).filter(|arg| arg != "--bench").collect();
    let number = |index: usize, default: usize| args.get(index).and_then(|arg| arg.parse().ok()).unwrap_or(default);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    // One pair of providers for every run: their exporters' threads outlive each run.
    let (providers, server_providers) = (Providers::new(), Arc::new(Providers::new()));
    match args.first().map(String::as_str) {
        Some("serve") => runtime.block_on(serve(&args[1], &providers, rmcp::transport::stdio())),
        Some("run") => runtime.block_on(run(&args[1], &args[2], number(3, 1000), &providers, &server_providers)),
        Some("instructions") => {
            interleaved("instructions", number(1, 3), number(2, 500), |variant, transport, calls| {
                instructions(variant, transport, calls) as f64
            });
        }
        Some("cpu") => {
            let transports: Vec<&str> = args.get(3).map_or(TRANSPORTS.to_vec(), |only| vec![only.as_str()]);
            runtime.block_on(cpu(number(1, 400), number(2, 100), &transports, &providers, &server_providers));
        }
        #[cfg(feature = "streamable-http-server")]
        Some("run-http") => runtime.block_on(http_requests::run(&args[1], number(2, 1000), &providers)),
        #[cfg(feature = "streamable-http-server")]
        Some("http") => http_requests::instructions(number(1, 3), number(2, 500)),
        Some("memory") => {
            let calls = number(1, 100_000);
            let providers = Providers::new();
            runtime.block_on(async {
                let (client_io, server_io) = tokio::io::duplex(1 << 16);
                let server_providers = Providers::new();
                tokio::spawn(async move { serve("ours", &server_providers, server_io).await });
                let otel = ours(&providers);
                let client = otel.client(().serve(otel.transport(client_io)).await.expect("handshake"));
                let mut resident = Vec::new();
                for call in 1..=calls {
                    client.call_tool(CallToolRequestParams::new("ok")).await.expect("answered");
                    if call % (calls / 10) == 0 {
                        resident.push(resident_kib());
                    }
                }
                println!("resident KiB every {} calls: {resident:?}", calls / 10);
            });
        }
        _ => eprintln!("usage: cost instructions|cpu|memory|run ..."),
    }
}

/// Requests rmcp's streamable HTTP server serves without a session (feature
/// `streamable-http-server`): its `StreamableHttpService` in stateless mode, called in this process
/// with a client's POST of `tools/call` (its context in `_meta`) and the event stream read to its
/// end; `bare` unwrapped, `ours` through `McpOtel::sessionless`. No floor: a hand-made span could
/// name neither the tool nor the request without reading the body as `ours` does.
#[cfg(feature = "streamable-http-server")]
mod http_requests {
    use std::sync::Arc;

    use http_body_util::{BodyExt, Full};
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
    use tower_service::Service;

    use super::{Providers, Weather, counted, median, ours};

    fn post(id: usize) -> http::Request<Full<bytes::Bytes>> {
        let meta = serde_json::json!({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"});
        let params = serde_json::json!({"name": "ok", "arguments": {}, "_meta": meta});
        let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        http::Request::post("http://127.0.0.1/mcp")
            .header("host", "127.0.0.1")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(Full::new(body.to_string().into()))
            .expect("a request")
    }

    /// `requests` requests of `variant`.
    pub(super) async fn run(variant: &str, requests: usize, providers: &Providers) {
        let config = StreamableHttpServerConfig::default().with_legacy_session_mode(false);
        let manager = Arc::new(LocalSessionManager::default());
        let mut bare = StreamableHttpService::new(|| Ok(Weather), manager, config.clone());
        if variant == "bare" {
            for id in 0..requests {
                let response = bare.call(post(id)).await.expect("answered");
                response.into_body().collect().await.expect("read");
            }
        } else {
            let mut service = ours(providers).sessionless(bare, &Weather, &config);
            for id in 0..requests {
                let response = service.call(post(id)).await.expect("answered");
                response.into_body().collect().await.expect("read");
            }
        }
    }

    /// Instructions per request of each variant (the difference of `requests` and twice as many),
    /// interleaved round by round, the medians.
    pub(super) fn instructions(rounds: usize, requests: usize) {
        let mut samples: [Vec<f64>; 2] = Default::default();
        for _ in 0..rounds {
            for (index, variant) in ["bare", "ours"].into_iter().enumerate() {
                let count = |requests: usize| counted(&["run-http", variant, &requests.to_string()]) as f64;
                samples[index].push((count(2 * requests) - count(requests)) / requests as f64);
            }
        }
        let [bare, ours] = samples.map(median);
        println!(
            "instructions  http    bare {bare:>10.0}  ours {ours:>10.0}  added {:>8.0}  ratio to bare {:.3}",
            ours - bare,
            ours / bare
        );
    }
}
