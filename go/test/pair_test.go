package mcpotel_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
	"github.com/mcp-otel/mcp-otel/go/test/internal/testserver"
)

// The sessions the tests make: a client and a server (a pair) in memory, over streamable HTTP on
// 127.0.0.1, and over stdio to the built test server (cmd/mcp-testserver, built once with the MCP
// SDK this test binary was built with: go.mod's or newest.mod's).

// sdkVersion is the MCP SDK this test binary was built with (go.mod: the lowest supported,
// newest.mod: the newest), and modFile the module file that requires it.
var sdkVersion, modFile = detectSDK()

// sdk18 reports whether the SDK is v1.8 or later (the tests say where it behaves differently).
func sdk18() bool { return semverAtLeast(sdkVersion, "v1.8.0") }

// detectSDK reads the SDK's version with runtime/debug.ReadBuildInfo. A test binary carries no
// dependency list (golang/go#76926: ReadBuildInfo lists no dependencies there), so then the
// version is the one go.mod or newest.mod requires, told apart by what the compiled SDK has:
// ClientSessionOptions.ProtocolVersion is exported from v1.8.0 on. The built test server
// (a plain binary, whose ReadBuildInfo does list the SDK) confirms it (testServerBinary).
func detectSDK() (version, modfile string) {
	version = testserver.SDKVersion()
	_, exported := reflect.TypeFor[mcp.ClientSessionOptions]().FieldByName("ProtocolVersion")
	for _, name := range []string{"go.mod", "newest.mod"} {
		text, err := os.ReadFile(name)
		if err != nil {
			panic(err)
		}
		found := regexp.MustCompile(`(?m)^\s*github\.com/modelcontextprotocol/go-sdk (v\S+)\s*$`).FindSubmatch(text)
		if found == nil {
			panic(name + " requires no MCP SDK")
		}
		required := string(found[1])
		if version == required || (version == "" && semverAtLeast(required, "v1.8.0") == exported) {
			return required, name
		}
	}
	panic(fmt.Sprintf("neither go.mod nor newest.mod requires the MCP SDK this test was built with (%q)", version))
}

// semverAtLeast compares vMAJOR.MINOR.PATCH versions.
func semverAtLeast(version, least string) bool {
	parse := func(v string) (out [3]int) {
		fmt.Sscanf(strings.TrimPrefix(v, "v"), "%d.%d.%d", &out[0], &out[1], &out[2])
		return out
	}
	a, b := parse(version), parse(least)
	return slices.Compare(a[:], b[:]) >= 0
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binaryDir != "" {
		_ = os.RemoveAll(binaryDir)
	}
	os.Exit(code)
}

// pair is a client and a server and their session (in memory unless said).
type pair struct {
	agent, server *side // nil when not instrumented (server: when in another process)
	client        *mcp.Client
	srv           *mcp.Server // nil over stdio
	session       *mcp.ClientSession
	started       chan string   // the waiting tools that started (in this process)
	release       chan struct{} // closed: the waiting tools return
	releaseOnce   sync.Once
	child         *child // over stdio: the server process's files
}

// waitStarted waits until the server's tool has started.
func (p *pair) waitStarted(t testing.TB, tool string) {
	t.Helper()
	if err := p.awaitStarted(tool); err != nil {
		t.Fatal(err)
	}
}

// awaitStarted waits until the server's tool has started (any goroutine may call it).
func (p *pair) awaitStarted(tool string) error {
	if p.child != nil {
		_, err := p.child.awaitEvent("started " + tool)
		return err
	}
	select {
	case got := <-p.started:
		if got != tool {
			return fmt.Errorf("%s started, want %s", got, tool)
		}
		return nil
	case <-time.After(waitFor):
		return fmt.Errorf("%s never started", tool)
	}
}

// releaseAll ends the waiting tools (a server waits for its handlers before it closes).
func (p *pair) releaseAll() { p.releaseOnce.Do(func() { close(p.release) }) }

// serverSpan waits for the server's one span of kind named name.
func (p *pair) serverSpan(t testing.TB, kind, name string) testserver.Span {
	t.Helper()
	if p.child != nil {
		return p.child.span(t, kind, name)
	}
	return p.server.span(t, kind, name)
}

// serverSpans are the spans the server has ended so far.
func (p *pair) serverSpans() []testserver.Span {
	if p.child != nil {
		return p.child.spans()
	}
	return p.server.ended()
}

// setup says how to make a pair.
type setup struct {
	bare      bool // no mcpotel
	legacy    bool // the server refuses server/discover: initialize at 2025-11-25
	clientOpt *mcp.ClientOptions
	agentOpts []mcpotel.Option // more options, agent side
	srvOpts   []mcpotel.Option // more options, server side
	// HTTP: stateless (2026-07-28) and told of a caller's cancel (its request's end).
	stateless bool
	// Receiving middleware added to the server before mcpotel (so run inside it).
	inner []mcp.Middleware
	// The transports wrapped with mcpotel.Transport: the client's, and the server's in memory and
	// over stdio (HTTP: the handler makes the server's).
	wire bool
}

// transport is t, wrapped with mcpotel.Transport and side's options when the setup says so.
func (s setup) transport(t mcp.Transport, side *side) mcp.Transport {
	if !s.wire || s.bare {
		return t
	}
	return mcpotel.Transport(t, side.options()...)
}

func (s setup) make(t testing.TB) *pair {
	p := &pair{started: make(chan string, 100), release: make(chan struct{})}
	p.client = mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "0.1.0"}, s.clientOpt)
	p.srv = testserver.New(testserver.Hooks{Started: func(tool string) { p.started <- tool }, Release: p.release}, nil)
	if s.legacy {
		p.srv.AddReceivingMiddleware(testserver.RefuseDiscover) // before mcpotel: it sees the refusal
	}
	p.srv.AddReceivingMiddleware(s.inner...)
	if !s.bare {
		p.agent, p.server = newSide(t), newSide(t)
		mcpotel.InstrumentServer(p.srv, p.server.options(s.srvOpts...)...)
		mcpotel.InstrumentClient(p.client, p.agent.options(s.agentOpts...)...)
	}
	return p
}

// inMemory connects a pair in memory.
func (s setup) inMemory(t testing.TB) *pair {
	t.Helper()
	p := s.make(t)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := p.srv.Connect(ctx, s.transport(st, p.server), nil)
	if err != nil {
		t.Fatal(err)
	}
	p.session, err = p.client.Connect(ctx, s.transport(ct, p.agent), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.releaseAll()
		_ = p.session.Close()
		_ = ss.Close()
	})
	return p
}

// handler serves the pair's server over streamable HTTP: stateful (the client falls back to
// initialize at 2025-11-25), or stateless (2026-07-28) and told of a caller's cancel.
func (s setup) handler(p *pair) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.srv },
		&mcp.StreamableHTTPOptions{Stateless: s.stateless, PropagateRequestCancellation: s.stateless})
}

// overHTTP connects a pair over streamable HTTP on 127.0.0.1.
func (s setup) overHTTP(t testing.TB) (*pair, *httptest.Server) {
	t.Helper()
	p := s.make(t)
	hs := httptest.NewServer(s.handler(p)) // 127.0.0.1
	t.Cleanup(hs.Close)
	var err error
	p.session, err = p.client.Connect(context.Background(), s.transport(&mcp.StreamableClientTransport{Endpoint: hs.URL}, p.agent), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.session.Close() })
	t.Cleanup(p.releaseAll) // first: closing the session and the server waits for the handlers
	return p, hs
}

// The built test server (cmd/mcp-testserver), built once, with the SDK this test binary was
// built with.
var (
	binaryOnce sync.Once
	binaryDir  string
	binaryPath string
	binaryErr  error
)

// testServerBinary builds cmd/mcp-testserver into a temporary directory (removed by TestMain).
func testServerBinary(t testing.TB) string {
	t.Helper()
	path, err := buildTestServer()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// buildTestServer builds cmd/mcp-testserver once, with the module file of this test's SDK, and
// checks the SDK it was built with.
func buildTestServer() (string, error) {
	binaryOnce.Do(func() {
		if binaryDir, binaryErr = os.MkdirTemp("", "mcpotel-test"); binaryErr != nil {
			return
		}
		binaryPath = filepath.Join(binaryDir, "mcp-testserver")
		build := exec.Command("go", "build", "-modfile="+modFile, "-o", binaryPath, "./internal/testserver/cmd/mcp-testserver")
		if out, err := build.CombinedOutput(); err != nil {
			binaryErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		out, err := exec.Command(binaryPath, "-version").Output()
		if err != nil {
			binaryErr = err
		} else if got := strings.TrimSpace(string(out)); got != sdkVersion {
			binaryErr = fmt.Errorf("the test server was built with the SDK %s, the tests with %s", got, sdkVersion)
		}
	})
	return binaryPath, binaryErr
}

// child is the built test server run by a test, its files in a temporary directory.
type child struct {
	dir                        string
	spansFile, events, pidFile string
}

func newChild(t testing.TB) *child {
	dir := t.TempDir()
	return &child{dir: dir, spansFile: filepath.Join(dir, "spans.jsonl"), events: filepath.Join(dir, "events"), pidFile: filepath.Join(dir, "pid")}
}

// env is the test server's environment (extra: more of it).
func (c *child) env(extra ...string) []string {
	return append(append(os.Environ(),
		"MCPOTEL_TESTSERVER_SPANS="+c.spansFile,
		"MCPOTEL_TESTSERVER_EVENTS="+c.events,
		"MCPOTEL_TESTSERVER_PIDFILE="+c.pidFile,
	), extra...)
}

// spans are the spans the child has written so far.
func (c *child) spans() []testserver.Span {
	spans, _ := testserver.ReadSpans(c.spansFile)
	return spans
}

func (c *child) span(t testing.TB, kind, name string) testserver.Span {
	t.Helper()
	return waitSpan(t, c.spans, kind, name)
}

// waitEvent waits for a line of the child's events that starts with prefix.
func (c *child) waitEvent(t testing.TB, prefix string) string {
	t.Helper()
	line, err := c.awaitEvent(prefix)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

func (c *child) awaitEvent(prefix string) (string, error) {
	deadline := time.Now().Add(waitFor)
	for {
		text, _ := os.ReadFile(c.events)
		for _, line := range strings.Split(string(text), "\n") {
			if strings.HasPrefix(line, prefix) {
				return line, nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the test server never wrote %q; events:\n%s", prefix, text)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// overStdio connects a client to the built test server over stdio (CommandTransport); the
// server's spans are in its file (p.child); it is killed when the test ends if still running.
func (s setup) overStdio(t testing.TB, extraEnv ...string) *pair {
	t.Helper()
	p := s.make(t)
	p.srv, p.server, p.child = nil, nil, newChild(t)
	cmd := exec.Command(testServerBinary(t))
	if s.legacy {
		extraEnv = append(extraEnv, "MCPOTEL_TESTSERVER_LEGACY=1")
	}
	if s.bare {
		extraEnv = append(extraEnv, "MCPOTEL_TESTSERVER_INSTRUMENT=none")
	} else if s.wire {
		extraEnv = append(extraEnv, "MCPOTEL_TESTSERVER_WIRE=1")
	}
	cmd.Env = p.child.env(extraEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var err error
	p.session, err = p.client.Connect(context.Background(), s.transport(&mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, p.agent), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
		_ = p.session.Close()
	})
	return p
}
