package mcpotel_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-otel/mcp-otel/go/test/internal/testserver"
)

// The same calls over stdio (the built test server in a child process, its spans in a file) and
// over streamable HTTP (stateless: 2026-07-28; stateful: the SDK's default, initialize at
// 2025-11-25), and what only a real transport can do: a server that dies mid-call, a client that
// is killed mid-call.

func TestStdio(t *testing.T) {
	runScenarios(t, scenarios, testserver.ModernProtocol, func(t *testing.T, s setup) *pair { return s.overStdio(t) }, setup{})
}

func TestStreamableHTTP(t *testing.T) {
	connect := func(t *testing.T, s setup) *pair {
		p, _ := s.overHTTP(t)
		return p
	}
	t.Run("stateless", func(t *testing.T) {
		runScenarios(t, scenarios, testserver.ModernProtocol, connect, setup{stateless: true})
	})
	t.Run("stateful", func(t *testing.T) {
		runScenarios(t, scenarios, testserver.LegacyProtocol, connect, setup{})
	})
}

// The server process dies mid-call (SIGKILL): the client's call fails, connection_closed; the
// server never ended its span.
func TestStdioServerDies(t *testing.T) {
	call := func(p *pair) (*mcp.CallToolResult, error) {
		return p.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "die"})
	}
	bareRes, bareErr := call(setup{bare: true}.overStdio(t))
	p := setup{}.overStdio(t)
	res, err := call(p)
	same(t, bareRes, bareErr, res, err)
	want := toolCall("die", testserver.ModernProtocol, "").with(closedTool)
	wantSpan(t, p.agent.span(t, "client", "tools/call die"), "client", "tools/call die", "Error", want)
	p.agent.point(t, clientMetric, pointOf(want), 1)
	p.child.waitEvent(t, "started die")
	if found := named(p.child.spans(), "server", "tools/call die"); len(found) != 0 {
		t.Errorf("a server killed mid-call ended its span:\n%s", dump(found))
	}
}

// killedClient runs the built test server as a bare client of target (over how: stdio or http),
// calling tool, and kills it (SIGKILL) once the tool has started (started waits for that).
func killedClient(t *testing.T, how, target, tool string, env []string, started func()) {
	t.Helper()
	cmd := exec.Command(testServerBinary(t), "client", how, target, tool)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "connected\n" {
		t.Fatalf("the client said %q", line)
	}
	started()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// The client process is killed mid-call over stdio: the server reads the end of its input, and
// the SDK cancels the handler. How it says so depends on the SDK:
//   - v1.8: the handler context's cause is io.EOF: mcpotel tells the client went away,
//     cancelled/disconnect;
//   - v1.7: the cause is context.Canceled, the same as a notifications/cancelled's, so mcpotel
//     can only record cancelled/client (the middleware sees nothing else that tells them apart).
//
// (≤ v1.6 the handler was not told at all; those versions are not supported.)
func TestStdioClientKilled(t *testing.T) {
	c := newChild(t)
	killedClient(t, "stdio", testServerBinary(t), "slow", c.env(), func() { c.waitEvent(t, "started slow") })
	reason, cause := "client", "context canceled"
	if sdk18() {
		reason, cause = "disconnect", "EOF"
	}
	if got, want := c.waitEvent(t, "ended slow"), "ended slow context canceled "+cause; got != want {
		t.Errorf("the handler's context: %q, want %q", got, want)
	}
	got := c.span(t, "server", "tools/call slow")
	wantSpan(t, got, "server", "tools/call slow", "Unset", toolCall("slow", testserver.ModernProtocol, "").with(cancelledTool(reason)))
	if got.Parent != "" {
		t.Errorf("parent %s: the killed client was not instrumented", got.Parent)
	}
	// The server then sees the end of its input and exits by itself; kill it if it does not.
	if pid, err := os.ReadFile(c.pidFile); err == nil {
		n, _ := strconv.Atoi(strings.TrimSpace(string(pid)))
		deadline := time.Now().Add(waitFor)
		for syscall.Kill(n, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if syscall.Kill(n, 0) == nil {
			t.Logf("the server (pid %d) had not exited %v after its client died; killed", n, waitFor)
			_ = syscall.Kill(n, syscall.SIGKILL)
		}
	}
}

// The server closes the connections (httptest's CloseClientConnections) mid-call: the client's
// POST fails (the SDK's -32005 "rejected by transport" wrapping io.EOF): connection_closed.
// The server's side: a stateful session's handler is not told (released, it returns a plain
// result, and its span says ok); a stateless one that propagates its request's end
// (PropagateRequestCancellation) is cancelled as by the client's cancel (cause
// context.Canceled: nothing tells the two apart), cancelled/client.
func TestHTTPServerCloses(t *testing.T) {
	for _, stateless := range []bool{true, false} {
		name := map[bool]string{true: "stateless", false: "stateful"}[stateless]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			version := map[bool]string{true: testserver.ModernProtocol, false: testserver.LegacyProtocol}[stateless]
			call := func(p *pair, hs *httptest.Server) (*mcp.CallToolResult, error) {
				go func() {
					if err := p.awaitStarted("hang"); err != nil {
						t.Error(err)
					}
					hs.CloseClientConnections()
				}()
				return p.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "hang"})
			}
			bareRes, bareErr := call(setup{bare: true, stateless: stateless}.overHTTP(t))
			p, hs := setup{stateless: stateless}.overHTTP(t)
			res, err := call(p, hs)
			same(t, bareRes, bareErr, res, err)
			session := ""
			if !stateless {
				session = p.session.ID()
			}
			client := p.agent.span(t, "client", "tools/call hang")
			want := toolCall("hang", version, session).with(closedTool)
			wantSpan(t, client, "client", "tools/call hang", "Error", want)
			p.agent.point(t, clientMetric, pointOf(want), 1)

			serverOutcome := cancelledTool("client")
			if !stateless {
				serverOutcome = okTool
				time.Sleep(100 * time.Millisecond)
				if found := named(p.server.ended(), "server", "tools/call hang"); len(found) != 0 {
					t.Errorf("the handler was not told, yet its span ended:\n%s", dump(found))
				}
				p.releaseAll()
			}
			server := p.server.span(t, "server", "tools/call hang")
			wantSpan(t, server, "server", "tools/call hang", "Unset", toolCall("hang", version, session).with(serverOutcome))
			wantChild(t, server, client)
		})
	}
}

// The client process is killed mid-call over HTTP: the SDK never tells the handler (stateful or
// stateless, both SDK versions; only stateless with PropagateRequestCancellation would, and this
// server has it off). What mcpotel records is what the handler does: its span ends when it
// returns, here released with a plain result, ok.
func TestHTTPClientKilled(t *testing.T) {
	for _, stateless := range []bool{true, false} {
		name := map[bool]string{true: "stateless", false: "stateful"}[stateless]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			version := map[bool]string{true: testserver.ModernProtocol, false: testserver.LegacyProtocol}[stateless]
			s := setup{stateless: stateless}
			p := s.make(t)
			handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
			hs := httptest.NewServer(handler)
			t.Cleanup(hs.Close)
			t.Cleanup(p.releaseAll)
			killedClient(t, "http", hs.URL, "hang", os.Environ(), func() { p.waitStarted(t, "hang") })
			time.Sleep(300 * time.Millisecond)
			if found := named(p.server.ended(), "server", "tools/call hang"); len(found) != 0 {
				t.Fatalf("the handler was not told, yet its span ended:\n%s", dump(found))
			}
			p.releaseAll()
			got := p.server.span(t, "server", "tools/call hang")
			want := toolCall("hang", version, "").with(okTool)
			if !stateless {
				want["mcp.session.id"] = got.Attributes["mcp.session.id"]
				if want["mcp.session.id"] == "" {
					t.Errorf("no mcp.session.id on a stateful session's span")
				}
			}
			wantSpan(t, got, "server", "tools/call hang", "Unset", want)
			p.server.point(t, serverMetric, pointOf(want), 1)
		})
	}
}
