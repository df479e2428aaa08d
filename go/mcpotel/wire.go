package mcpotel

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-otel/mcp-otel/go/internal/model"
	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

// The second front end: an opt-in wrapper of the SDK's Transport, the only code that reads its
// Connection and jsonrpc messages. It sees what the SDK keeps from middleware: the id a request
// travels with and the transport (on a request sent: found by the call its context is; on a
// request read: by the traceparent its sender put in _meta), and when a connection opens and
// closes (a session's duration). It makes no span of its own and never changes a message.

// Transport wraps t: the requests sent over it get jsonrpc.request.id and network.transport on
// their CLIENT spans, the requests read from it on their SERVER spans when their sender propagated
// trace context (network.transport on the points too), and each connection it makes records its
// session's duration (mcp.client.session.duration, or mcp.server.session.duration for a
// handshake-era session) when it closes. Use it with InstrumentClient or InstrumentServer: pass
// the wrapped transport to c.Connect, s.Connect or s.Run. opts are the Instrument functions' (the
// meter provider, name limits and server identity apply to the session points).
func Transport(t mcp.Transport, opts ...Option) mcp.Transport {
	c := newConfig(opts)
	meter := c.meterProvider.Meter(semconv.InstrumentationScope, meterVersion)
	return &wireTransport{Transport: t, kind: transportKind(t), sessions: newSessionMetrics(meter, c)}
}

// transportKind is network.transport for the SDK's own transports ("": another, not named).
func transportKind(t mcp.Transport) string {
	switch t.(type) {
	case *mcp.StdioTransport, *mcp.CommandTransport:
		return semconv.TransportPipe
	case *mcp.StreamableClientTransport, *mcp.StreamableServerTransport, *mcp.SSEClientTransport, *mcp.SSEServerTransport:
		return semconv.TransportTCP
	}
	return ""
}

type wireTransport struct {
	mcp.Transport
	kind     string
	sessions *sessionMetrics
}

func (w *wireTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := w.Transport.Connect(ctx)
	if err != nil || conn == nil {
		return conn, err
	}
	readers.Add(1)
	return &wireConnection{Connection: conn, transport: w, started: time.Now()}, nil
}

// wireConnection is one connection: it notes the id of each request it writes on the call that
// sent it, and keeps what its session's points need.
type wireConnection struct {
	mcp.Connection
	transport *wireTransport
	started   time.Time
	closeOnce sync.Once

	mu sync.Mutex
	// side: the side of the first request it carried (written: a client; read: a server).
	side      int
	sideKnown bool
	// A server's session is a handshake-era one (it read initialize; 2026-07-28 connections are
	// stateless: no session), answered by the request with this id.
	handshakeID any
	session     bool
	// The server's name and protocol version, as the session's requests' points said them.
	facts []attribute.KeyValue
	// Read failed before this side closed the connection: the peer went away.
	closing, peerGone bool
	// The keys of the requests it read (receivedRequests), forgotten when it closes.
	pending map[string]*receivedOn
	// The SERVER spans of the requests it read that are being handled, and of those a cancel it
	// read named, by request id; the session they are handled on.
	serving, cancels map[string]trace.SpanContext
	handledOn        mcp.Session
}

// sentOn is what a connection saw of a call it carried.
type sentOn struct {
	attributes []attribute.KeyValue
	connection *wireConnection
}

func (c *wireConnection) Write(ctx context.Context, msg jsonrpc.Message) error {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		c.sawRequest(m, sideClient)
		if sent, ok := ctx.Value(callKey{}).(*call); ok && m.ID.IsValid() {
			wire := &sentOn{connection: c, attributes: []attribute.KeyValue{attribute.String(semconv.JSONRPCRequestID, fmt.Sprint(m.ID.Raw()))}}
			if c.transport.kind != "" {
				wire.attributes = append(wire.attributes, attribute.String(semconv.NetworkTransport, c.transport.kind))
			}
			sent.wire.Store(wire)
			c.learn(sent.point) // what the session knew when the request left (it may close first)
		}
	case *jsonrpc.Response:
		c.answered(m)
	}
	return c.Connection.Write(ctx, msg)
}

func (c *wireConnection) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.mu.Lock()
		c.peerGone = c.peerGone || !c.closing
		c.mu.Unlock()
	} else if req, ok := msg.(*jsonrpc.Request); ok {
		c.sawRequest(req, sideServer)
		if req.ID.IsValid() {
			c.received(req)
		} else if req.Method == semconv.MethodCancelled {
			c.cancelRead(req)
		}
	}
	return msg, err
}

// received notes a request read, for the middleware that handles it to find by the trace context
// its sender put in _meta (W3C traceparent: the sender's span, one per request). The SDK hands the
// request to middleware on another goroutine with nothing else that joins the two; a request
// without one is not found, and two read with the same one (a sender that reuses its context)
// are neither.
func (c *wireConnection) received(req *jsonrpc.Request) {
	var params struct {
		Meta struct {
			Traceparent string `json:"traceparent"`
		} `json:"_meta"`
	}
	if len(req.Params) == 0 || json.Unmarshal(req.Params, &params) != nil || params.Meta.Traceparent == "" {
		return // the SDK answers params it cannot read; not ours to report
	}
	key := params.Meta.Traceparent
	id := model.Bounded(fmt.Sprint(req.ID.Raw()), c.transport.sessions.config.maxNameLength) // the peer's choice
	on := &receivedOn{connection: c, id: id, attributes: []attribute.KeyValue{attribute.String(semconv.JSONRPCRequestID, id)}}
	if c.transport.kind != "" {
		on.attributes = append(on.attributes, attribute.String(semconv.NetworkTransport, c.transport.kind))
	}
	if _, loaded := receivedRequests.LoadOrStore(key, on); loaded {
		receivedRequests.Store(key, ambiguous)
		return
	}
	c.mu.Lock()
	if c.pending == nil {
		c.pending = map[string]*receivedOn{}
	}
	c.pending[key] = on
	c.mu.Unlock()
}

// receivedOn is what a connection saw of a request it read.
type receivedOn struct {
	attributes []attribute.KeyValue
	connection *wireConnection
	id         string
}

// serving notes the SERVER span of the request handled, while it runs, for a cancel of it
// (session: the session middleware handles it on).
func (on *receivedOn) serving(session mcp.Session, span trace.SpanContext) {
	c := on.connection
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.serving == nil {
		c.serving = map[string]trace.SpanContext{}
	}
	c.serving[on.id] = span
	if c.handledOn == nil && session != nil {
		c.handledOn = session
		connectionOf.Store(session, c)
	}
}

// done: the request was handled.
func (on *receivedOn) done() {
	on.connection.mu.Lock()
	delete(on.connection.serving, on.id)
	on.connection.mu.Unlock()
}

// cancelRead notes a notifications/cancelled read: the SERVER span of the request it names, still
// running (the SDK cancels the handler only after this read; the notification's middleware may run
// after the handler returned), for the notification's span to be its child.
func (c *wireConnection) cancelRead(req *jsonrpc.Request) {
	var params struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &params) != nil || params.RequestID == nil {
		return
	}
	id := model.Bounded(fmt.Sprint(params.RequestID), c.transport.sessions.config.maxNameLength)
	c.mu.Lock()
	defer c.mu.Unlock()
	if span, ok := c.serving[id]; ok {
		if c.cancels == nil {
			c.cancels = map[string]trace.SpanContext{}
		}
		c.cancels[id] = span
	}
}

// cancelledCall is the SERVER span of the request a received notifications/cancelled names, when a
// wrapped connection read both.
func cancelledCall(req mcp.Request) (trace.SpanContext, bool) {
	if readers.Load() == 0 {
		return trace.SpanContext{}, false
	}
	params, ok := req.GetParams().(*mcp.CancelledParams)
	if !ok || params == nil || params.RequestID == nil {
		return trace.SpanContext{}, false
	}
	found, ok := connectionOf.Load(req.GetSession())
	if !ok {
		return trace.SpanContext{}, false
	}
	c := found.(*wireConnection)
	id := model.Bounded(fmt.Sprint(params.RequestID), c.transport.sessions.config.maxNameLength)
	c.mu.Lock()
	defer c.mu.Unlock()
	span, ok := c.cancels[id]
	delete(c.cancels, id)
	return span, ok
}

var (
	// receivedRequests: requests read and not yet handled, by their traceparent.
	receivedRequests sync.Map // string -> *receivedOn
	ambiguous        = &receivedOn{}
	// readers is how many wrapped connections are open: the middleware looks only while one is.
	readers atomic.Int64
	// connectionOf: the wrapped connection each session handles requests from (learnt from them).
	connectionOf sync.Map // mcp.Session -> *wireConnection
)

// received is what a wrapped connection saw of a request handled, if one read it (no wrapped
// connection open: one atomic load).
func received(req mcp.Request) *receivedOn {
	if readers.Load() == 0 {
		return nil
	}
	key, _ := metaOf(req)[traceparentKey].(string)
	if key == "" {
		return nil
	}
	found, ok := receivedRequests.LoadAndDelete(key)
	if !ok || found == ambiguous {
		return nil
	}
	on := found.(*receivedOn)
	on.connection.mu.Lock()
	delete(on.connection.pending, key)
	on.connection.mu.Unlock()
	return on
}

const traceparentKey = "traceparent"

func (c *wireConnection) Close() error {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	err := c.Connection.Close()
	c.closeOnce.Do(func() {
		c.ended()
		c.mu.Lock()
		for key, on := range c.pending { // read, never handled (refused before middleware)
			receivedRequests.CompareAndDelete(key, on)
		}
		c.pending, c.serving, c.cancels = nil, nil, nil
		if c.handledOn != nil {
			connectionOf.CompareAndDelete(c.handledOn, c)
		}
		c.mu.Unlock()
		readers.Add(-1)
	})
	return err
}

// sawRequest learns the connection's side from its first request, and a server's session from
// the handshake it reads.
func (c *wireConnection) sawRequest(req *jsonrpc.Request, side int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sideKnown {
		c.side, c.sideKnown = side, true
		c.session = side == sideClient
	}
	if side == sideServer && c.side == sideServer && req.Method == semconv.MethodInitialize && req.ID.IsValid() && c.handshakeID == nil {
		c.handshakeID = req.ID.Raw()
	}
}

// answered reads a server's answer to its handshake: the server and the protocol version it names.
func (c *wireConnection) answered(res *jsonrpc.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.handshakeID == nil || c.session || res.ID.Raw() != c.handshakeID || res.Error != nil {
		return
	}
	c.session = true
	var answer struct {
		ProtocolVersion string              `json:"protocolVersion"`
		ServerInfo      *mcp.Implementation `json:"serverInfo"`
	}
	if err := json.Unmarshal(res.Result, &answer); err != nil {
		reportOnce("could not read a handshake's answer", err)
		return
	}
	c.facts = c.transport.sessions.attributes(answer.ServerInfo, answer.ProtocolVersion)
}

// learn keeps what a finished request's point says of the session: its server and protocol
// (each the latest said: a server/discover's point names no protocol version).
func (c *wireConnection) learn(point []attribute.KeyValue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, kv := range point {
		if kv.Key != semconv.MCPServerName && kv.Key != semconv.MCPProtocolVersion {
			continue
		}
		if i := slices.IndexFunc(c.facts, func(known attribute.KeyValue) bool { return known.Key == kv.Key }); i >= 0 {
			c.facts[i] = kv
		} else {
			c.facts = append(c.facts, kv)
		}
	}
}

// ended records the session's one point: a client's, or a server's handshake-era session.
func (c *wireConnection) ended() {
	c.mu.Lock()
	side, session, facts, peerGone := c.side, c.session, slices.Clone(c.facts), c.peerGone
	c.mu.Unlock()
	if !session {
		return
	}
	// A client whose server went away ended with connection_closed; a client closing the
	// connection is how a server's session ends (stdio).
	if side == sideClient && peerGone {
		facts = append(facts, attribute.String(semconv.ErrorType, semconv.ErrorConnectionClosed))
	}
	c.transport.sessions.record(side, time.Since(c.started), facts)
}
