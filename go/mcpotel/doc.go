// Package mcpotel instruments the official Go MCP SDK (github.com/modelcontextprotocol/go-sdk)
// with OpenTelemetry: one CLIENT span for each request a client or server sends, one SERVER span
// for each request it handles, in one trace across processes and languages, each stating its
// outcome in mcp.request.outcome = ok | failed | cancelled, status ERROR only for failures, and one
// duration point per request. A caller's cancel is cancelled, never a failure.
//
// Two calls add the SDK's sending and receiving middleware:
//
//	mcpotel.InstrumentClient(client)
//	mcpotel.InstrumentServer(server)
//
// The names, attributes, outcomes and rules are the Python and TypeScript packages' (one model,
// tested across languages): docs/go.md and docs/outcomes.md in the repository.
//
// An opt-in wrapper of the SDK's transport adds what middleware is not shown: the request id and
// transport of each request sent, and each session's duration point:
//
//	session, err := client.Connect(ctx, mcpotel.Transport(&mcp.CommandTransport{Command: cmd}), nil)
//
// The package's layers mirror the others': instrument.go (the host), middleware.go (the front end,
// with sessions.go and meta.go the only code that reads the SDK's types; wire.go, the transport
// wrapper's, reads its messages), lifecycle.go (a request opened and finished once),
// attributes.go and propagation.go (what a request is read as), writer.go and metrics.go (the one
// writer of status and outcome, the duration points), and internal/model (the pure classifier).
package mcpotel
