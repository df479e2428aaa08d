package mcpotel_test

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcp-otel/mcp-otel/go/mcpotel"
	"github.com/mcp-otel/mcp-otel/go/test/internal/testserver"
)

// What mcpotel costs a tools/call, against the same call with no instrumentation (bare) and with
// the same span and point made by hand (floor: testserver.Floor, a CLIENT span with the same
// attributes and the trace context injected into a copy of _meta, one histogram point; on the
// server a SERVER span parented to it, one point), every variant with the same real SDK
// providers: a batch span processor to a no-op exporter, a meter provider with a manual reader.
// The added-cost ratio is (mcpotel - bare) / (floor - bare).

// benchProviders are the real SDK providers every variant records to: spans through a batch
// processor (batch) or a synchronous one, to a no-op exporter.
func benchProviders(b testing.TB, batch bool) (*sdktrace.TracerProvider, *sdkmetric.MeterProvider) {
	processor := sdktrace.WithSyncer(tracetest.NewNoopExporter())
	if batch {
		processor = sdktrace.WithBatcher(tracetest.NewNoopExporter())
	}
	tp := sdktrace.NewTracerProvider(processor)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return tp, mp
}

// instrument adds a variant's instrumentation to a client and (if not nil) a server.
func instrument(b testing.TB, variant string, batch bool, client *mcp.Client, server *mcp.Server) {
	tp, mp := benchProviders(b, batch)
	switch variant {
	case "bare":
	case "floor":
		floor := testserver.NewFloor(tp, mp, propagator)
		client.AddSendingMiddleware(floor.Sending)
		if server != nil {
			server.AddReceivingMiddleware(floor.Receiving)
		}
	case "mcpotel":
		opts := []mcpotel.Option{mcpotel.WithTracerProvider(tp), mcpotel.WithMeterProvider(mp), mcpotel.WithPropagators(propagator)}
		mcpotel.InstrumentClient(client, opts...)
		if server != nil {
			mcpotel.InstrumentServer(server, opts...)
		}
	default:
		b.Fatalf("variant %q", variant)
	}
}

// benchSession is a variant's session in memory.
func benchSession(b testing.TB, variant string, batch bool) *mcp.ClientSession {
	server := testserver.New(testserver.Hooks{}, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	instrument(b, variant, batch, client, server)
	server.AddReceivingMiddleware(growStack) // last added: outermost, in every variant
	session, ss := connectInMemory(b, client, server)
	b.Cleanup(func() { _ = session.Close(); _ = ss.Close() })
	return session
}

// connectInMemory connects client to server over the SDK's in-memory transports.
func connectInMemory(tb testing.TB, client *mcp.Client, server *mcp.Server) (*mcp.ClientSession, *mcp.ServerSession) {
	tb.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	session, err := client.Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return session, ss
}

var variants = []string{"bare", "floor", "mcpotel"}

// growStack grows the stack of the goroutine that handles a request (the SDK starts one per
// request, with 8 KiB) at its start, the same way in every variant. The SDK's schema validation
// needs more, and a copied stack costs a walk of every frame on it: unlevelled, a variant whose
// middleware has a large frame (the floor's) grows it early, at a few frames, while bare and
// mcpotel grow it deep in the validation, 40-60k instructions a call more (cachegrind, GOGC=off:
// runtime.step, pcvalue and the like), a difference of frame layout, not of work.
func growStack(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		stackPad(3)
		return next(ctx, method, req)
	}
}

// stackPad takes 3 KiB of stack at each of depth frames.
//
//go:noinline
func stackPad(depth int) byte {
	var pad [3 << 10]byte
	pad[depth] = byte(depth)
	if depth > 0 {
		pad[0] = stackPad(depth - 1)
	}
	return pad[depth/2]
}

func benchCalls(b *testing.B, session *mcp.ClientSession) {
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu, measured := processCPU()
	for b.Loop() {
		if _, err := session.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
	if used, ok := processCPU(); ok && measured {
		b.ReportMetric(float64(used-cpu)/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkCallTool(b *testing.B) {
	for _, variant := range variants {
		b.Run(variant, func(b *testing.B) { benchCalls(b, benchSession(b, variant, true)) })
	}
}

// Over stdio: the server is the built test server, instrumented the same way in its process
// (ns/op is the round trip; allocs/op and cpu-ns/op the client's process only).
func BenchmarkCallToolStdio(b *testing.B) {
	for _, variant := range variants {
		b.Run(variant, func(b *testing.B) {
			client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
			instrument(b, variant, true, client, nil)
			cmd := exec.Command(testServerBinary(b))
			mode := variant
			if variant == "bare" {
				mode = "none"
			}
			cmd.Env = append(cmd.Environ(), "MCPOTEL_TESTSERVER_INSTRUMENT="+mode)
			session, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = session.Close() })
			benchCalls(b, session)
		})
	}
}

// 100,000 calls with mcpotel on both sides hold no memory: the heap in use, after a collection,
// every 10,000 calls, stays within heapBound of what it was after 20,000 (the first 10,000 warm
// up the SDKs' pools and the metric streams). Spans go through a synchronous processor: a batch
// processor's queue holds up to 2,048 ended spans, whatever instrumentation made them, and what
// it holds when the heap is read would be the queue's, not mcpotel's.
const heapBound = 256 << 10 // 256 KiB: a leak of 4 bytes a call would pass it

func TestHeapFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 calls: not with -short")
	}
	if raceEnabled {
		t.Skip("the race detector's own allocations (its shadow state is not in the Go heap, its bookkeeping is) make the series meaningless, and 100,000 calls take minutes under it: run without -race")
	}
	session := benchSession(t, "mcpotel", false)
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}
	ctx := context.Background()
	var series []uint64
	var stats runtime.MemStats
	for i := 1; i <= 100_000; i++ {
		if _, err := session.CallTool(ctx, params); err != nil {
			t.Fatal(err)
		}
		if i%10_000 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&stats)
			series = append(series, stats.HeapInuse)
		}
	}
	flat(t, "calls", 10_000, series)
}

// flat logs a heap series sampled every step units and fails if its last sample is more than
// heapBound above its second.
func flat(t *testing.T, unit string, step int, series []uint64) {
	t.Helper()
	line := ""
	for i, inUse := range series {
		line += fmt.Sprintf(" %d:%.3fMiB", (i+1)*step, float64(inUse)/(1<<20))
	}
	t.Logf("heap in use after each %d %s:%s", step, unit, line)
	if last, base := series[len(series)-1], series[1]; last > base+heapBound {
		t.Errorf("heap in use %d bytes after %d %s, %d after %d: grew %d, more than %d", last, len(series)*step, unit, base, 2*step, last-base, heapBound)
	}
}

// Sessions come and go: what mcpotel keeps of each (the server's identity its handshake named,
// the calls a client session has in flight) goes with it. 5,000 sessions in memory, each an
// initialize (the server remembers the session), a call and a close.
func TestSessionsForgotten(t *testing.T) {
	if testing.Short() {
		t.Skip("5,000 sessions: not with -short")
	}
	if raceEnabled {
		t.Skip("see TestHeapFlat: run without -race")
	}
	tp, mp := benchProviders(t, false)
	opts := []mcpotel.Option{mcpotel.WithTracerProvider(tp), mcpotel.WithMeterProvider(mp), mcpotel.WithPropagators(propagator)}
	server := testserver.New(testserver.Hooks{}, nil)
	server.AddReceivingMiddleware(testserver.RefuseDiscover)
	mcpotel.InstrumentServer(server, opts...)
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	mcpotel.InstrumentClient(client, opts...)
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}
	ctx := context.Background()
	var series []uint64
	var stats runtime.MemStats
	for i := 1; i <= 5_000; i++ {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := server.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		session, err := client.Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := session.CallTool(ctx, params); err != nil {
			t.Fatal(err)
		}
		_ = session.Close()
		_ = ss.Wait()
		if i%500 == 0 {
			runtime.GC()
			runtime.GC() // the first collection runs the cleanups, the second frees what they let go
			runtime.ReadMemStats(&stats)
			series = append(series, stats.HeapInuse)
		}
	}
	flat(t, "sessions", 500, series)
}

// The client's middleware alone: the innermost sending middleware answers tools/call itself, so
// the call never reaches the transport (or the server), and what is left is the SDK's CallTool
// and the instrumentation; without the transport's and the server's time and garbage, the
// instrumentation's own cost shows clearly (a diagnostic of BenchmarkCallTool's ratio).
func BenchmarkClientMiddleware(b *testing.B) {
	answer := testserver.Text("hi", false)
	stub := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				return answer, nil
			}
			return next(ctx, method, req)
		}
	}
	for _, variant := range variants {
		b.Run(variant, func(b *testing.B) {
			client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
			client.AddSendingMiddleware(stub) // first added: innermost
			instrument(b, variant, true, client, nil)
			session, ss := connectInMemory(b, client, testserver.New(testserver.Hooks{}, nil))
			b.Cleanup(func() { _ = session.Close(); _ = ss.Close() })
			benchCalls(b, session)
		})
	}
}

// The floor is what its name says: for a tools/call in memory it records what mcpotel records, the
// same CLIENT and SERVER spans (name, status, attributes, the server's parented to the client's)
// and the same point on each side (attributes, one call), only by hand.
func TestFloorRecordsWhatMcpotelRecords(t *testing.T) {
	type recorded struct {
		spans  map[string]testserver.Span // by kind
		points map[string]attrs           // by side: client, server
	}
	got := map[string]recorded{}
	for _, variant := range []string{"floor", "mcpotel"} {
		s := newSide(t)
		server := testserver.New(testserver.Hooks{}, nil)
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
		if variant == "floor" {
			floor := testserver.NewFloor(s.tp, s.mp, propagator)
			client.AddSendingMiddleware(floor.Sending)
			server.AddReceivingMiddleware(floor.Receiving)
		} else {
			mcpotel.InstrumentClient(client, s.options()...)
			mcpotel.InstrumentServer(server, s.options()...)
		}
		session, ss := connectInMemory(t, client, server)
		ctx := context.Background()
		if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
			t.Fatal(err)
		}
		r := recorded{spans: map[string]testserver.Span{}, points: map[string]attrs{}}
		for _, kind := range []string{"client", "server"} {
			r.spans[kind] = s.span(t, kind, "tools/call echo")
		}
		_ = session.Close()
		_ = ss.Wait()
		var rm metricdata.ResourceMetrics
		if err := s.reader.Collect(ctx, &rm); err != nil {
			t.Fatal(err)
		}
		for _, scope := range rm.ScopeMetrics {
			for _, m := range scope.Metrics {
				h, ok := m.Data.(metricdata.Histogram[float64])
				if !ok {
					continue
				}
				for _, point := range h.DataPoints {
					a := attrsOf(point.Attributes)
					if a["mcp.method.name"] != "tools/call" {
						continue
					}
					if point.Count != 1 {
						t.Errorf("%s %s: %d calls, want 1", variant, m.Name, point.Count)
					}
					r.points[strings.Split(m.Name, ".")[1]] = a
				}
			}
		}
		got[variant] = r
	}
	floor, instrumented := got["floor"], got["mcpotel"]
	for _, kind := range []string{"client", "server"} {
		f, m := floor.spans[kind], instrumented.spans[kind]
		if f.Status != m.Status || !maps.Equal(f.Attributes, m.Attributes) {
			t.Errorf("%s span: floor %s %v, mcpotel %s %v", kind, f.Status, f.Attributes, m.Status, m.Attributes)
		}
		if !maps.Equal(floor.points[kind], instrumented.points[kind]) || len(floor.points[kind]) == 0 {
			t.Errorf("%s point: floor %v, mcpotel %v", kind, floor.points[kind], instrumented.points[kind])
		}
	}
	for variant, r := range got {
		if r.spans["server"].Parent != r.spans["client"].SpanID {
			t.Errorf("%s: the server's span is not the client's child", variant)
		}
	}
}
