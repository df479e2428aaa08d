// Package testserver is the MCP server the mcpotel tests talk to, in memory, over streamable HTTP
// and, built as cmd/mcp-testserver, over stdio: its tools end a call each way the outcome model
// tells apart (a result, a tool error, a JSON-RPC error, a call that waits for its cancel, a
// process that dies mid-call, an elicitation the person declines). It also holds the benchmarks'
// "floor" (floor.go: the same span and point made by hand) and the span file the built server
// writes (spanfile.go).
package testserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The server's identity (mcp.server.name and mcp.server.version on its spans).
const (
	Name    = "test-server"
	Version = "1.2.3"
)

// ModernProtocol is the 2026-07-28 revision (server/discover, no initialize); LegacyProtocol is
// the one a client falls back to when the server's transport does not serve it.
const (
	ModernProtocol = "2026-07-28"
	LegacyProtocol = "2025-11-25"
)

// Hooks let a test see into the tools. Every field is optional.
type Hooks struct {
	// Started is called when a tool that waits (slow, hang, die, confirm) has started.
	Started func(tool string)
	// Release, closed, ends the waiting tools (slow, hang): they return a plain result then, as
	// a handler never told of its caller's end does. Nil: they wait for their context or MaxWait.
	Release <-chan struct{}
	// Die ends the process (die tool); nil: die waits like slow.
	Die func()
	// Ended is called with what a waiting tool's handler context said when it ended.
	Ended func(tool string, err, cause error)
}

// MaxWait bounds how long a waiting tool waits: no test hangs on a lost cancel.
const MaxWait = 30 * time.Second

// Text is a tool result holding one text.
func Text(text string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
}

// RPCArgs names the JSON-RPC error the rpcerr tool answers with.
type RPCArgs struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// New is the test server, its tools:
//
//	echo     {text, ...}   a result with the text (any other argument is accepted and ignored)
//	fail     {}            the handler's Go error (the SDK answers IsError)
//	rpcerr   {code, message} the handler's *jsonrpc.Error
//	slow     {}            waits for its context (a cancel), then returns ctx.Err() (IsError)
//	hang     {}            the same (the name says the test expects no cancel to come)
//	die      {}            Hooks.Die mid-call
//	confirm  {}            asks the person (elicitation/create); IsError unless accepted
//	meta     {}            a result whose text is the JSON of the _meta the handler received
func New(h Hooks, opts *mcp.ServerOptions) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Version: Version}, opts)
	started := func(tool string) {
		if h.Started != nil {
			h.Started(tool)
		}
	}
	ended := func(tool string, ctx context.Context) {
		if h.Ended != nil {
			h.Ended(tool, ctx.Err(), context.Cause(ctx))
		}
	}
	wait := func(ctx context.Context, tool string, release <-chan struct{}) (*mcp.CallToolResult, any, error) {
		started(tool)
		select {
		case <-ctx.Done():
			ended(tool, ctx)
			return nil, nil, ctx.Err()
		case <-release:
			return Text("released", false), nil, nil
		case <-time.After(MaxWait):
			return Text("waited too long", true), nil, nil
		}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, any, error) {
		text, _ := args["text"].(string)
		return Text(text, false), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail"}, func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("tool failed")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "rpcerr"}, func(_ context.Context, _ *mcp.CallToolRequest, args RPCArgs) (*mcp.CallToolResult, any, error) {
		return nil, nil, &jsonrpc.Error{Code: args.Code, Message: args.Message}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
		return wait(ctx, "slow", h.Release)
	})
	mcp.AddTool(s, &mcp.Tool{Name: "hang"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
		return wait(ctx, "hang", h.Release)
	})
	mcp.AddTool(s, &mcp.Tool{Name: "die"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
		if h.Die != nil {
			started("die")
			h.Die()
		}
		return wait(ctx, "die", nil)
	})
	mcp.AddTool(s, &mcp.Tool{Name: "confirm"}, func(ctx context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
		started("confirm")
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
			Message: "Proceed?",
			RequestedSchema: map[string]any{
				"type":       "object",
				"properties": map[string]any{"ok": map[string]any{"type": "boolean"}},
			},
		})
		if err != nil {
			return nil, nil, err
		}
		if res.Action != "accept" {
			return Text("the person said "+res.Action, true), nil, nil
		}
		return Text("confirmed", false), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "meta"}, func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
		text, err := json.Marshal(req.Params.Meta)
		if err != nil {
			return nil, nil, err
		}
		return Text(string(text), false), nil, nil
	})
	return s
}

// RefuseDiscover is receiving middleware that answers server/discover as a server that predates
// 2026-07-28 does (-32601, method not found): the client falls back to initialize at 2025-11-25,
// which a server needs to send requests of its own (elicitation/create) during a call. Add it
// before mcpotel: mcpotel, added later, runs first and sees the refusal. (A transport that does
// not serve 2026-07-28 is no way to get there: the SDK's server/discover handler records the
// session as initialized, and the client's initialize that follows is refused as a duplicate.)
func RefuseDiscover(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "server/discover" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
		}
		return next(ctx, method, req)
	}
}

// SDKVersion is the version of the MCP SDK this program was built with ("" if unknown).
func SDKVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, dep := range info.Deps {
		if dep.Path == "github.com/modelcontextprotocol/go-sdk" {
			if dep.Replace != nil {
				return dep.Replace.Version
			}
			return dep.Version
		}
	}
	return ""
}

// Describe is an error as the tests compare it: its message and which sentinels it matches.
func Describe(err error) string {
	if err == nil {
		return "<nil>"
	}
	var rpc *jsonrpc.Error
	code := "none"
	if errors.As(err, &rpc) {
		code = fmt.Sprint(rpc.Code)
	}
	return fmt.Sprintf("%q canceled=%v deadline=%v eof=%v closed=%v rpc=%s", err.Error(),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, io.EOF),
		errors.Is(err, mcp.ErrConnectionClosed), code)
}
