// Command crossagent is a Go MCP agent for the cross-language tests (tests/go): the Go SDK's own
// Client, instrumented with mcpotel as docs/go.md shows (no propagator set), calls tools of the
// stdio server whose command follows, or of the streamable HTTP server at URL.
//
//	crossagent COMMAND [ARGS...]
//	crossagent http://127.0.0.1:PORT/mcp
//
// MCP_PLAN (JSON) lists the calls: [{"tool": "...", "arguments": {...}, "abortAfterMs": 300}], a
// call with abortAfterMs being given up by its caller (its context cancelled after that many ms).
// MCP_SERVER_ENV (JSON object): the server's environment besides this one's. Prints one JSON line
// per call: {"tool", "isError"} for a result, {"tool", "error": "aborted"} for a call its caller
// gave up, {"tool", "error": {"code": N|null}} for any other error.
//
// Each finished span is appended to the file MCP_OTEL_GO_SPAN_FILE as one JSON line (the fields
// tests/node/telemetry.cjs writes), as it ends.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
	"github.com/mcp-otel/mcp-otel/go/test/internal/cmd/spanlines"
)

type step struct {
	Tool         string         `json:"tool"`
	Arguments    map[string]any `json:"arguments"`
	AbortAfterMs *int           `json:"abortAfterMs"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "crossagent:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) < 2 {
		return errors.New("usage: crossagent COMMAND [ARGS...]")
	}
	var plan []step
	if err := json.Unmarshal([]byte(spanlines.EnvOr("MCP_PLAN", "[]")), &plan); err != nil {
		return fmt.Errorf("MCP_PLAN: %w", err)
	}
	var serverEnv map[string]string
	if err := json.Unmarshal([]byte(spanlines.EnvOr("MCP_SERVER_ENV", "{}")), &serverEnv); err != nil {
		return fmt.Errorf("MCP_SERVER_ENV: %w", err)
	}

	provider, err := spanlines.TracerProvider("mcp-otel-go-agent")
	if err != nil {
		return err
	}
	defer func() { _ = provider.Shutdown(context.Background()) }()

	client := mcp.NewClient(&mcp.Implementation{Name: "go-agent", Version: "1.0.0"}, nil)
	mcpotel.InstrumentClient(client, mcpotel.WithTracerProvider(provider))

	var transport mcp.Transport
	if strings.HasPrefix(os.Args[1], "http://") {
		transport = &mcp.StreamableClientTransport{Endpoint: os.Args[1]}
	} else {
		command := exec.Command(os.Args[1], os.Args[2:]...)
		command.Env = os.Environ()
		for key, value := range serverEnv {
			command.Env = append(command.Env, key+"="+value)
		}
		command.Stderr = os.Stderr
		transport = &mcp.CommandTransport{Command: command}
	}
	ctx := context.Background()
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	out := json.NewEncoder(os.Stdout)
	for _, s := range plan {
		callCtx, cancel := context.WithCancel(ctx)
		if s.AbortAfterMs != nil {
			time.AfterFunc(time.Duration(*s.AbortAfterMs)*time.Millisecond, cancel)
		}
		arguments := s.Arguments
		if arguments == nil {
			arguments = map[string]any{}
		}
		result, err := session.CallTool(callCtx, &mcp.CallToolParams{Name: s.Tool, Arguments: arguments})
		aborted := callCtx.Err() != nil
		cancel()
		line := map[string]any{"tool": s.Tool}
		switch {
		case err == nil:
			line["isError"] = result.IsError
		case aborted && errors.Is(err, context.Canceled):
			line["error"] = "aborted"
		default:
			var code any
			var rpc *jsonrpc.Error
			if errors.As(err, &rpc) {
				code = rpc.Code
			}
			line["error"] = map[string]any{"code": code}
		}
		if err := out.Encode(line); err != nil {
			return err
		}
	}
	// Over stdio, closing stdin ends the server; the SDK waits for it to exit.
	return session.Close()
}
