// Command crossserver is a Go MCP server over stdio, or over streamable HTTP, for the
// cross-language tests (tests/go, tests/rust): the Go SDK's own Server, instrumented with mcpotel
// as docs/go.md shows (no propagator set).
//
//	crossserver        stdio: the client closing stdin ends it
//	crossserver http   streamable HTTP (the SDK's StreamableHTTPHandler, stateful) at
//	                   http://127.0.0.1:PORT/mcp on an ephemeral port, printed on stdout as
//	                   {"port":N} once listening; SIGTERM ends it
//
// Its tools:
//
//	ok          returns text "ok"
//	tool_error  its handler returns a Go error: the SDK answers a result with isError true
//	slow        waits until its caller cancels it (its context done: returns text "gave up"), at
//	            most 5 s (returns text "slept")
//
// Its name (serverInfo) is MCP_SERVER_NAME, else "go-server", version 1.2.3. Each finished span is appended to the file MCP_OTEL_GO_SPAN_FILE as one JSON
// line (the fields tests/node/telemetry.cjs writes), as it ends.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
	"github.com/mcp-otel/mcp-otel/go/test/internal/cmd/spanlines"
)

// noArguments: the tools take none (an object schema with no properties).
type noArguments struct{}

func text(value string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: value}}}
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "crossserver:", err)
		os.Exit(1)
	}
}

func run() error {
	provider, err := spanlines.TracerProvider("mcp-otel-go-server")
	if err != nil {
		return err
	}
	defer func() { _ = provider.Shutdown(context.Background()) }()

	server := mcp.NewServer(&mcp.Implementation{Name: spanlines.EnvOr("MCP_SERVER_NAME", "go-server"), Version: "1.2.3"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "ok", Description: "ok"},
		func(context.Context, *mcp.CallToolRequest, noArguments) (*mcp.CallToolResult, any, error) {
			return text("ok"), nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "tool_error", Description: "tool_error"},
		func(context.Context, *mcp.CallToolRequest, noArguments) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("tool failed")
		})
	mcp.AddTool(server, &mcp.Tool{Name: "slow", Description: "slow"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noArguments) (*mcp.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
				return text("gave up"), nil, nil
			case <-time.After(5 * time.Second):
				return text("slept"), nil, nil
			}
		})
	mcpotel.InstrumentServer(server, mcpotel.WithTracerProvider(provider))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 && os.Args[1] == "http" {
		return serveHTTP(ctx, server)
	}
	// The client closing stdin (EOF) or a signal is the normal end of the session.
	if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// serveHTTP serves server over streamable HTTP on 127.0.0.1 until ctx ends.
func serveHTTP(ctx context.Context, server *mcp.Server) error {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	httpServer := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = httpServer.Close()
	}()
	fmt.Printf("{\"port\":%d}\n", listener.Addr().(*net.TCPAddr).Port)
	if err := httpServer.Serve(listener); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
