package mcpotel_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
)

// The library's own module has the OpenTelemetry API only: these tests run with no SDK in the
// program, as an application that imports mcpotel and never installs one. The global providers
// are then the API's no-op ones: instrumented, a client and a server answer exactly as bare ones,
// and put no trace context in a request's _meta (there is none). Every other test, which reads
// spans and points, is in go/test (a module of its own, with the SDK).

type echoArgs struct {
	Text string `json:"text"`
}

// echoServer has one tool: echo answers its text and whether its _meta carried trace context,
// and fails on an empty text (a tool error, the caller's answer).
func echoServer() *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(_ context.Context, req *mcp.CallToolRequest, args echoArgs) (*mcp.CallToolResult, any, error) {
		if args.Text == "" {
			return nil, nil, errors.New("nothing to echo")
		}
		_, traced := req.Params.Meta["traceparent"]
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s (traceparent %v)", args.Text, traced)}}}, nil, nil
	})
	return server
}

// answers are what a client sees of three calls: an answer, a tool error, and the SDK's error
// for an unknown tool.
func answers(t *testing.T, instrument, wire bool) []string {
	t.Helper()
	server, client := echoServer(), mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil)
	if instrument {
		mcpotel.InstrumentServer(server)
		mcpotel.InstrumentClient(client)
	}
	ctx := context.Background()
	clientTransport, serverTransport := mcp.NewInMemoryTransports()
	var transport mcp.Transport = clientTransport
	if wire {
		transport = mcpotel.Transport(clientTransport)
	}
	serverSession, err := server.Connect(ctx, serverTransport, nil)
	if err != nil {
		t.Fatal(err)
	}
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, params := range []*mcp.CallToolParams{
		{Name: "echo", Arguments: map[string]any{"text": "hello"}},
		{Name: "echo", Arguments: map[string]any{"text": ""}},
		{Name: "missing"},
	} {
		res, err := session.CallTool(ctx, params)
		if err != nil {
			seen = append(seen, "error: "+err.Error())
			continue
		}
		seen = append(seen, fmt.Sprintf("%s (isError %v)", res.Content[0].(*mcp.TextContent).Text, res.IsError))
	}
	if err := session.Close(); err != nil {
		t.Fatal(err)
	}
	if err := serverSession.Wait(); err != nil {
		t.Fatal(err)
	}
	return seen
}

func TestWithoutAnSDKTheCallsAreUnchanged(t *testing.T) {
	bare := answers(t, false, false)
	want := []string{"hello (traceparent false) (isError false)", "nothing to echo (isError true)", `error: calling "tools/call": unknown tool "missing"`}
	if !reflect.DeepEqual(bare, want) {
		t.Fatalf("bare: %q, want %q", bare, want)
	}
	for _, wire := range []bool{false, true} {
		if got := answers(t, true, wire); !reflect.DeepEqual(got, bare) {
			t.Errorf("instrumented (transport wrapped: %v): %q, want %q", wire, got, bare)
		}
	}
}
