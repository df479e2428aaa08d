package mcpotel

import (
	"sync"
	"time"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-otel/mcp-otel/go/internal/model"
	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

// A server/discover probe the server refused (a version negotiation step: servers before
// 2026-07-28 refuse the method) is answered before anything has named the server: the handshake
// that follows does (initialize, or a discover at the version the server offered). Its CLIENT
// span is held, answered and not ended, until that handshake is answered, then ended at the time
// the probe was answered, with the server's name and version the handshake learnt (as the Python
// and TypeScript packages do). A handshake that fails, or never comes within maxNegotiationHold,
// ends it as it is. A negotiation step has no point: only its span waits.

// maxNegotiationHold bounds how long a refused probe waits for the handshake that names its server.
// The SDK sends that handshake at once, in the same Connect, and Connect's context bounds it: this
// bound is for a client that never does.
var maxNegotiationHold = 30 * time.Second

// heldProbe is a refused probe waiting for its server's name.
type heldProbe struct {
	call     *call
	verdict  model.Verdict
	answered time.Time
	timer    *time.Timer
	once     sync.Once
}

// holdNegotiation holds the span of c, a request of session answered with verdict, when it is a
// refused probe whose span names no server yet; false: finish it now.
func (t *telemetry) holdNegotiation(session mcp.Session, c *call, verdict model.Verdict) bool {
	unfinished, ok := verdict.(*model.Unfinished)
	if !ok || unfinished.ResultType != semconv.ResultNegotiation || c.method != semconv.MethodServerDiscover {
		return false
	}
	client, ok := session.(*mcp.ClientSession)
	if !ok || client == nil || namesServer(c.point) {
		return false
	}
	key := weak.Make(client)
	held := &heldProbe{call: c, verdict: verdict, answered: time.Now()}
	held.timer = time.AfterFunc(maxNegotiationHold, func() {
		t.negotiated.CompareAndDelete(key, held)
		held.end(t, nil)
	})
	t.negotiated.Store(key, held) // one at a time: a handshake (a probe too) ends the one before
	return true
}

// handshakeAnswered ends the probe session holds, if any, with the server the handshake that
// followed it named (info; nil: it named none, or failed; a second probe refused: none).
func (t *telemetry) handshakeAnswered(session mcp.Session, info *mcp.Implementation) {
	client, ok := session.(*mcp.ClientSession)
	if !ok || client == nil {
		return
	}
	if found, ok := t.negotiated.LoadAndDelete(weak.Make(client)); ok {
		found.(*heldProbe).end(t, info)
	}
}

// end finishes the held probe's span, once, at the time it was answered, naming info's server.
func (h *heldProbe) end(t *telemetry, info *mcp.Implementation) {
	h.once.Do(func() {
		h.timer.Stop()
		var late []attribute.KeyValue
		if info != nil && info.Name != "" {
			late = t.learnt(info, "") // the server only: the protocol version is the handshake's
		}
		t.lifecycle.finish(h.call, h.verdict, late, trace.WithTimestamp(h.answered))
	})
}

// namesServer reports whether a request's point attributes name its server.
func namesServer(point []attribute.KeyValue) bool {
	for _, kv := range point {
		if kv.Key == semconv.MCPServerName {
			return true
		}
	}
	return false
}
