// Command mcp-testserver is the test server (package testserver) over stdio, for the mcpotel
// tests that need a real child process: a server that dies mid-call, a client that is killed.
//
//	mcp-testserver                       serve over stdio
//	mcp-testserver -version              print the MCP SDK version it was built with
//	mcp-testserver client stdio BIN TOOL a bare client: run BIN over stdio, call TOOL
//	mcp-testserver client http URL TOOL  a bare client: streamable HTTP to URL, call TOOL
//
// Serving, it reads its environment:
//
//	MCPOTEL_TESTSERVER_INSTRUMENT  mcpotel (default), floor or none
//	MCPOTEL_TESTSERVER_SPANS       a file: each finished span is appended as a JSON line
//	MCPOTEL_TESTSERVER_EVENTS      a file: "started TOOL", "ended TOOL ERR CAUSE" lines
//	MCPOTEL_TESTSERVER_PIDFILE     a file: the process id, written at start
//	MCPOTEL_TESTSERVER_LEGACY      1: server/discover refused (the client falls back to initialize at 2025-11-25)
//	MCPOTEL_TESTSERVER_WIRE        1: its transport wrapped with mcpotel.Transport
//
// A client prints "connected" once connected and then what the call returned, and is meant to
// be killed mid-call.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
	"github.com/mcp-otel/mcp-otel/go/test/internal/testserver"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-version" {
		fmt.Println(testserver.SDKVersion())
		return
	}
	if len(os.Args) == 5 && os.Args[1] == "client" {
		if err := client(os.Args[2], os.Args[3], os.Args[4]); err != nil {
			fmt.Fprintln(os.Stderr, "mcp-testserver client:", err)
			os.Exit(1)
		}
		return
	}
	if err := serve(); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-testserver:", err)
		os.Exit(1)
	}
}

func serve() error {
	if path := os.Getenv("MCPOTEL_TESTSERVER_PIDFILE"); path != "" {
		if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			return err
		}
	}
	var events func(string)
	if path := os.Getenv("MCPOTEL_TESTSERVER_EVENTS"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		var mu sync.Mutex
		events = func(line string) {
			mu.Lock()
			defer mu.Unlock()
			_, _ = f.WriteString(line + "\n")
		}
	}
	hooks := testserver.Hooks{Die: func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }}
	if events != nil {
		hooks.Started = func(tool string) { events("started " + tool) }
		hooks.Ended = func(tool string, err, cause error) { events(fmt.Sprintf("ended %s %v %v", tool, err, cause)) }
	}
	server := testserver.New(hooks, nil)
	if os.Getenv("MCPOTEL_TESTSERVER_LEGACY") == "1" {
		server.AddReceivingMiddleware(testserver.RefuseDiscover)
	}

	var exporter sdktrace.SpanExporter = tracetest.NewNoopExporter()
	processor := sdktrace.NewBatchSpanProcessor(exporter)
	if path := os.Getenv("MCPOTEL_TESTSERVER_SPANS"); path != "" {
		fileExporter, err := testserver.NewFileExporter(path)
		if err != nil {
			return err
		}
		processor = sdktrace.NewSimpleSpanProcessor(fileExporter)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(processor))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	propagator := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	switch mode := os.Getenv("MCPOTEL_TESTSERVER_INSTRUMENT"); mode {
	case "", "mcpotel":
		mcpotel.InstrumentServer(server, mcpotel.WithTracerProvider(tp), mcpotel.WithMeterProvider(mp), mcpotel.WithPropagators(propagator))
	case "floor":
		floor := testserver.NewFloor(tp, mp, propagator)
		server.AddReceivingMiddleware(floor.Receiving)
	case "none":
	default:
		return fmt.Errorf("MCPOTEL_TESTSERVER_INSTRUMENT=%q: mcpotel, floor or none", mode)
	}
	var transport mcp.Transport = &mcp.StdioTransport{}
	if os.Getenv("MCPOTEL_TESTSERVER_WIRE") == "1" {
		transport = mcpotel.Transport(transport, mcpotel.WithMeterProvider(mp))
	}
	return server.Run(context.Background(), transport)
}

func client(how, target, tool string) error {
	var transport mcp.Transport
	switch how {
	case "stdio":
		transport = &mcp.CommandTransport{Command: exec.Command(target)}
	case "http":
		transport = &mcp.StreamableClientTransport{Endpoint: target, MaxRetries: -1}
	default:
		return fmt.Errorf("client %q: stdio or http", how)
	}
	ctx := context.Background()
	session, err := mcp.NewClient(&mcp.Implementation{Name: "killed-client", Version: "0.0.1"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		return err
	}
	defer session.Close()
	fmt.Println("connected")
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool})
	fmt.Println("returned", res != nil, testserver.Describe(err))
	return nil
}
