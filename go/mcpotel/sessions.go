package mcpotel

import (
	"context"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/mcp-otel/mcp-otel/go/internal/model"
	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

// Sessions: what the front ends keep of each session. Of a client session, its server and
// protocol as the SDK holds them and the calls it has in flight (an input its agent declines
// belongs to them); of a server session, what its handshake named (the SDK keeps the server's
// identity to itself); of a wrapped connection, its one session-duration point (wire.go decides
// when a session ends). Each kept as long as its session lives, never longer.

// sessionFacts are what a request's session knows of its server and protocol.
func (t *telemetry) sessionFacts(req mcp.Request) connectionFacts {
	var facts connectionFacts
	switch s := req.GetSession().(type) {
	case *mcp.ClientSession:
		facts.sessionID = s.ID()
		if result := s.InitializeResult(); result != nil {
			facts.protocolVersion = result.ProtocolVersion
			if result.ServerInfo != nil {
				facts.serverName, facts.serverVersion = result.ServerInfo.Name, result.ServerInfo.Version
			}
		}
	case *mcp.ServerSession:
		facts.sessionID = s.ID()
		// What its handshake named and agreed (a configured identity wins over the name:
		// requestAttributes).
		if known, ok := t.servers.Load(weak.Make(s)); ok {
			facts = known.(connectionFacts)
			facts.sessionID = s.ID()
		}
		// 2026-07-28: each request names its version in _meta; else the one the handshake agreed;
		// else, before its answer, the one asked for. (The SDK's own ServerRequest.ProtocolVersion
		// falls back to the one asked for, which a client asking a newer one never agreed.)
		if version, ok := metaOf(req)[mcp.MetaKeyProtocolVersion].(string); ok && version != "" {
			facts.protocolVersion = version
		} else if params := s.InitializeParams(); params != nil && facts.protocolVersion == "" {
			facts.protocolVersion = params.ProtocolVersion
		}
	}
	return facts
}

// learnt is what a handshake's answer names: the span and the point learn it.
func (t *telemetry) learnt(info *mcp.Implementation, version string) []attribute.KeyValue {
	var late []attribute.KeyValue
	if info != nil && t.config.serverName == "" {
		late = append(late, attribute.String(semconv.MCPServerName, model.Bounded(info.Name, t.config.maxNameLength)))
		if info.Version != "" {
			late = append(late, attribute.String(semconv.MCPServerVersion, model.Bounded(info.Version, t.config.maxNameLength)))
		}
	}
	if version != "" {
		late = append(late, attribute.String(semconv.MCPProtocolVersion, version))
	}
	return late
}

// rememberServer keeps what a server session's handshake named and the protocol version it agreed
// (which a client asking a newer one does not know), for its later spans, as long as the session
// lives.
func (t *telemetry) rememberServer(session *mcp.ServerSession, info *mcp.Implementation, version string) {
	if info == nil && version == "" {
		return
	}
	facts := connectionFacts{protocolVersion: version}
	if info != nil {
		facts.serverName, facts.serverVersion = info.Name, info.Version
	}
	// Keyed weakly, and forgotten when the session is collected (the cleanup holds only the key).
	key := weak.Make(session)
	if _, loaded := t.servers.LoadOrStore(key, facts); !loaded {
		runtime.AddCleanup(session, func(key weak.Pointer[mcp.ServerSession]) { t.servers.Delete(key) }, key)
	}
}

// track notes a call an agent has in flight on its session (nil: not a client session).
func (t *telemetry) track(req mcp.Request, c *call) *calls {
	session, ok := req.GetSession().(*mcp.ClientSession)
	if !ok || session == nil {
		return nil
	}
	var inFlight *calls
	if last := t.lastCalls.Load(); last != nil && last.session.Value() == session {
		inFlight = last.calls // the session of the call before: no weak handle made, no map read
	} else {
		key := weak.Make(session)
		found, ok := t.inFlight.Load(key) // a session's first call only makes its map
		if !ok {
			var loaded bool
			if found, loaded = t.inFlight.LoadOrStore(key, &calls{set: map[*call]struct{}{}}); !loaded {
				runtime.AddCleanup(session, func(key weak.Pointer[mcp.ClientSession]) { t.inFlight.Delete(key) }, key)
			}
		}
		inFlight = found.(*calls)
		t.lastCalls.Store(&sessionCalls{session: key, calls: inFlight})
	}
	inFlight.mu.Lock()
	inFlight.set[c] = struct{}{}
	inFlight.mu.Unlock()
	return inFlight
}

// sessionCalls are a client session's calls in flight, its session held weakly.
type sessionCalls struct {
	session weak.Pointer[mcp.ClientSession]
	calls   *calls
}

// calls are the calls a client session has in flight (a map under a lock: adding and removing a
// call allocates nothing, as a sync.Map's entries do).
type calls struct {
	mu  sync.Mutex
	set map[*call]struct{}
}

func (in *calls) remove(c *call) {
	if in == nil {
		return
	}
	in.mu.Lock()
	delete(in.set, c)
	in.mu.Unlock()
}

// declinedOn: the agent answered its server's input request with the person's no; the calls it has
// in flight on that session are the ones the person declined an input of.
func (t *telemetry) declinedOn(session mcp.Session) {
	client, ok := session.(*mcp.ClientSession)
	if !ok {
		return
	}
	if found, ok := t.inFlight.Load(weak.Make(client)); ok {
		inFlight := found.(*calls)
		inFlight.mu.Lock()
		for c := range inFlight.set {
			c.inputDeclined.Store(true)
		}
		inFlight.mu.Unlock()
	}
}

// sessionMetrics holds the session-duration histograms: one point per session, when it closes,
// with its server's name and protocol version (and error.type when the peer went away).
type sessionMetrics struct {
	config    *config
	durations [2]metric.Float64Histogram // [client, server]
	servers   nameBound
}

func newSessionMetrics(meter metric.Meter, c *config) *sessionMetrics {
	return &sessionMetrics{
		config: c,
		durations: [2]metric.Float64Histogram{
			durationHistogram(meter, semconv.MCPClientSessionDuration, "Duration of MCP sessions as clients saw them."),
			durationHistogram(meter, semconv.MCPServerSessionDuration, "Duration of MCP sessions as servers saw them."),
		},
		servers: nameBound{limit: c.maxMetricNames},
	}
}

// attributes are a session point's: the server's name (the configured identity first) and the
// protocol version its handshake settled on.
func (m *sessionMetrics) attributes(info *mcp.Implementation, version string) []attribute.KeyValue {
	name := m.config.serverName
	if name == "" && info != nil {
		name = info.Name
	}
	out := []attribute.KeyValue{}
	if name != "" {
		out = append(out, attribute.String(semconv.MCPServerName, m.servers.admit(model.Bounded(name, m.config.maxNameLength))))
	}
	if version != "" {
		out = append(out, attribute.String(semconv.MCPProtocolVersion, version))
	}
	return out
}

func (m *sessionMetrics) record(side int, lasted time.Duration, attrs []attribute.KeyValue) {
	if m.durations[side] == nil {
		return
	}
	m.durations[side].Record(context.Background(), lasted.Seconds(), metric.WithAttributes(attrs...))
}
