package mcpotel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-otel/mcp-otel/go/internal/model"
	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

// The front end: the SDK's sending and receiving middleware, and with sessions.go (what each
// session keeps) and meta.go (a request's _meta) the only code that reads the SDK's types (its
// params, results, sessions and errors). Every request a Client or Server sends
// passes its sending middleware, every request it handles its receiving middleware, on both
// (a server's elicitation/create is sent; an agent's answer to it is handled).
//
// What the SDK keeps from middleware, and so from its spans: the JSON-RPC request id (no
// jsonrpc.request.id), the transport (no network.transport or server.address), requests it
// refuses before middleware runs (an unknown method, params it cannot decode: the caller sees
// the error; the server has no span), and the notifications/cancelled it sends itself. The
// opt-in transport wrapper (wire.go) gives a sent request's id and transport back.

// rejectedByTransport is the SDK's own code for a message its transport could not carry
// (jsonrpc2.ErrRejected): a closed connection, not a peer's answer.
const rejectedByTransport = -32005

// telemetry is one instrumentation of one Client or Server.
type telemetry struct {
	config    *config
	lifecycle *lifecycle
	// The calls each client session has in flight: an elicitation its agent declines belongs to them.
	inFlight sync.Map // weak.Pointer[mcp.ClientSession] -> *calls
	// The last session's: most calls are on the session of the call before.
	lastCalls atomic.Pointer[sessionCalls]
	// What each server session's handshake named (the SDK keeps the server's identity to itself).
	servers sync.Map // weak.Pointer[mcp.ServerSession] -> connectionFacts
	// The refused server/discover probe each client session holds until its handshake (negotiation.go).
	negotiated sync.Map // weak.Pointer[mcp.ClientSession] -> *heldProbe
}

// handledKey holds, in a handler's context, the request being handled: a request its handler
// sends (an elicitation) belongs to it.
type handledKey struct{}

func (t *telemetry) sending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, semconv.NotificationPrefix) {
			return t.notify(ctx, sideClient, method, req, next)
		}
		r, attrs, point := t.read(method, req, t.lifecycle.metrics)
		c := t.lifecycle.open(ctx, sideClient, r.method, r.name(), attrs, point, nil)
		handled, _ := ctx.Value(handledKey{}).(*call)
		calls := t.track(req, c)
		res, err := next(c, method, withMeta(c.ctx, t, method, req))
		calls.remove(c)
		t.sent(ctx, req.GetSession(), c, handled, r.method, res, err)
		return res, err
	}
}

func (t *telemetry) receiving(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, semconv.NotificationPrefix) {
			return t.notify(ctx, sideServer, method, req, next)
		}
		r, attrs, point := t.read(method, req, t.lifecycle.metrics)
		wire := received(req)
		if wire != nil {
			attrs = append(attrs, wire.attributes...)
			point = t.lifecycle.metrics.attributes(attrs) // network.transport too
		}
		parent, links := t.parent(ctx, req)
		c := t.lifecycle.open(parent, sideServer, r.method, r.name(), attrs, point, links)
		if wire != nil {
			wire.serving(req.GetSession(), c.span.SpanContext())
		}
		res, err := next(context.WithValue(c.ctx, handledKey{}, c), method, req)
		t.handled(ctx, c, r.method, req, res, err)
		if wire != nil {
			wire.done()
		}
		return res, err
	}
}

// sent finishes a request this side sent, from what the SDK returned to its caller.
func (t *telemetry) sent(ctx context.Context, session mcp.Session, c *call, handled *call, method string, res mcp.Result, err error) {
	var late []attribute.KeyValue
	if method == semconv.MethodInitialize || method == semconv.MethodServerDiscover {
		var named *mcp.Implementation
		if err == nil {
			named, _ = handshakeOf(res)
		}
		t.handshakeAnswered(session, named) // a probe refused before it ends, named by it if it names
	}
	if err != nil {
		var rpc *jsonrpc.Error
		isRPC := errors.As(err, &rpc)
		rejected := isRPC && rpc.Code == rejectedByTransport
		facts := model.ClientFailure{
			// The caller's own cancel: its context cancelled, and that is what the SDK returned.
			CallerCancelled:  ctx.Err() != nil && errors.Is(err, context.Canceled),
			TimedOut:         errors.Is(err, context.DeadlineExceeded),
			ConnectionClosed: rejected || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, mcp.ErrConnectionClosed),
			ErrorName:        errorName(err),
			KeepMessage:      t.config.captureContent,
			InputDeclined:    c.inputDeclined.Load(),
			Method:           method,
		}
		if isRPC && !rejected {
			facts.RPC = &model.RPCError{Code: int(rpc.Code), Message: rpc.Message}
		}
		facts.AnswerDeclined = model.IsDeclinedAnswer(method, model.Answer{}, facts.RPC)
		if facts.AnswerDeclined && handled != nil {
			handled.inputDeclined.Store(true)
		}
		verdict := model.ClassifyClientFailure(facts)
		if !t.holdNegotiation(session, c, verdict) {
			t.lifecycle.finish(c, verdict, nil)
		}
		return
	}
	answer := answerOf(res)
	if info, version := handshakeOf(res); info != nil || version != "" {
		late = t.learnt(info, version)
	}
	if answer.Action != "" {
		late = append(late, attribute.String(semconv.MCPElicitationAction, answer.Action))
	}
	if method == semconv.MethodToolsCall {
		late = append(late, captured(semconv.GenAIToolCallResult, res, t.config)...)
	}
	declined := model.IsDeclinedAnswer(method, answer, nil)
	if declined && handled != nil {
		handled.inputDeclined.Store(true)
	}
	t.lifecycle.finish(c, model.ClassifyClientResult(answer, declined, c.inputDeclined.Load()), late)
}

// handled finishes a request this side handled, from what its handler returned (what the SDK
// answers) and, when the handler's context ended, why it ended.
func (t *telemetry) handled(ctx context.Context, c *call, method string, req mcp.Request, res mcp.Result, err error) {
	facts := model.ServerEnd{Method: method, KeepMessage: t.config.captureContent, InputDeclined: c.inputDeclined.Load()}
	var late []attribute.KeyValue
	// The cause only of a context that ended (finding it walks the whole chain of contexts).
	if ctx.Err() != nil {
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, io.EOF), errors.Is(cause, io.ErrUnexpectedEOF):
			facts.IsCancellation, facts.TransportClosed = true, true // the peer went away (stdio)
		case errors.Is(cause, context.Canceled):
			facts.PeerCancelled = true // the client's notifications/cancelled (SDK v1.7: a disconnect too)
		default:
			facts.IsCancellation = true // the server's own closing
		}
	}
	if err != nil {
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) {
			facts.RPC = &model.RPCError{Code: int(rpc.Code), Message: rpc.Message}
		} else {
			facts.RPC = &model.RPCError{Code: 0, Message: err.Error()} // what the SDK answers a Go error with
		}
	} else {
		answer := answerOf(res)
		facts.Answer = &answer
		if answer.Action != "" {
			late = append(late, attribute.String(semconv.MCPElicitationAction, answer.Action))
		}
		if info, version := handshakeOf(res); info != nil || version != "" {
			late = t.learnt(info, version)
			if session, ok := req.GetSession().(*mcp.ServerSession); ok {
				t.rememberServer(session, info, version)
			}
		}
		if method == semconv.MethodToolsCall {
			late = append(late, captured(semconv.GenAIToolCallResult, res, t.config)...)
		}
	}
	facts.AnswerDeclined = model.IsDeclinedAnswer(method, answerOrNone(facts.Answer), facts.RPC)
	if facts.AnswerDeclined {
		t.declinedOn(req.GetSession())
	}
	t.lifecycle.finish(c, model.ClassifyServerCall(facts), late)
}

// notify makes the span of a notification sent (CLIENT) or received (SERVER): no outcome, no point.
func (t *telemetry) notify(ctx context.Context, side int, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	if !tracedNotification(method, t.config) {
		return next(ctx, method, req)
	}
	r, attrs, _ := t.read(method, req, nil)
	parent, links := ctx, []trace.Link(nil)
	if side == sideServer {
		parent, links = t.parent(ctx, req)
		// The SDK sends its cancels with no trace context: the cancelled call's span is the parent
		// when a wrapped connection read both.
		if method == semconv.MethodCancelled && parent == ctx && links == nil {
			if call, ok := cancelledCall(req); ok {
				parent = trace.ContextWithSpanContext(ctx, call)
			}
		}
	}
	spanCtx, span := t.lifecycle.notification(parent, side, r.name(), attrs, links)
	defer span.End()
	if side == sideClient {
		req = withMeta(spanCtx, t, method, req)
	}
	return next(spanCtx, method, req)
}

// parent is a received request's parent: the sender's context in _meta (keeping the handler's own
// context's values and cancellation), or, not trusted, a link to it.
func (t *telemetry) parent(ctx context.Context, req mcp.Request) (context.Context, []trace.Link) {
	remote, ok := extracted(t.config.propagator, metaOf(req))
	if !ok {
		return ctx, nil
	}
	sender := trace.SpanContextFromContext(remote)
	if !t.config.trustRemoteContext {
		return ctx, []trace.Link{{SpanContext: sender}}
	}
	parent := trace.ContextWithRemoteSpanContext(ctx, sender)
	if members := baggage.FromContext(remote); members.Len() > 0 {
		parent = baggage.ContextWithBaggage(parent, members)
	}
	return parent, nil
}

// read is what a request names and what its session knows, as span attributes, and as point
// attributes when it has a point (metrics: its names' bounds; nil: none).
func (t *telemetry) read(method string, req mcp.Request, metrics *callMetrics) (request, []attribute.KeyValue, []attribute.KeyValue) {
	var target, uri string
	var arguments any
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParams:
		if p != nil {
			target, arguments = p.Name, p.Arguments
		}
	case *mcp.CallToolParamsRaw:
		if p != nil {
			target, arguments = p.Name, p.Arguments
		}
	case *mcp.GetPromptParams:
		if p != nil {
			target = p.Name
		}
	case *mcp.ReadResourceParams:
		if p != nil {
			uri = p.URI
		}
	case *mcp.SubscribeParams:
		if p != nil {
			uri = p.URI
		}
	case *mcp.UnsubscribeParams:
		if p != nil {
			uri = p.URI
		}
	case *mcp.ResourceUpdatedNotificationParams:
		if p != nil {
			uri = p.URI
		}
	}
	r := newRequest(method, target, uri, t.config)
	attrs, point := requestAttributes(r, t.sessionFacts(req), t.config, metrics)
	if method == semconv.MethodToolsCall && arguments != nil {
		attrs = append(attrs, captured(semconv.GenAIToolCallArguments, arguments, t.config)...)
	}
	return r, attrs, point
}

// answerOf is what a result says of itself.
func answerOf(res mcp.Result) model.Answer {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		if r != nil {
			return model.Answer{IsError: r.IsError}
		}
	case *mcp.ElicitResult:
		if r != nil && semconv.ElicitationActions.Has(r.Action) {
			return model.Answer{Action: r.Action}
		}
	}
	return model.Answer{}
}

func answerOrNone(a *model.Answer) model.Answer {
	if a == nil {
		return model.Answer{}
	}
	return *a
}

// handshakeOf is what a handshake's answer names: the server and the protocol version. A
// 2026-07-28 session has no handshake: its server/discover answer names the server in its _meta
// (io.modelcontextprotocol/serverInfo), read there only (every result carries it on such a
// session; the session's later requests learn it from the SDK).
func handshakeOf(res mcp.Result) (*mcp.Implementation, string) {
	switch r := res.(type) {
	case *mcp.InitializeResult:
		if r != nil {
			return r.ServerInfo, r.ProtocolVersion
		}
	case *mcp.DiscoverResult:
		if r != nil {
			return serverInfoOf(r.GetMeta()[mcp.MetaKeyServerInfo]), ""
		}
	}
	return nil, ""
}

// serverInfoOf is the server's Implementation in a result's _meta: as the SDK put it (in memory)
// or as it came over the wire (a JSON object), its strings only; nil without a name.
func serverInfoOf(value any) *mcp.Implementation {
	switch info := value.(type) {
	case *mcp.Implementation:
		if info != nil && info.Name != "" {
			return info
		}
	case map[string]any:
		name, _ := info["name"].(string)
		version, _ := info["version"].(string)
		if name != "" {
			return &mcp.Implementation{Name: name, Version: version}
		}
	}
	return nil
}

// errorName is error.type for an error that is none of the SDK's: its Go type, unless that is one
// of the standard library's anonymous ones (which name nothing).
func errorName(err error) string {
	name := fmt.Sprintf("%T", err)
	switch name {
	case "*errors.errorString", "*fmt.wrapError", "*fmt.wrapErrors", "*errors.joinError":
		return semconv.OtherValue
	}
	return name
}

// serverIdentity is the Implementation a Server was made with (its name and version on its own
// spans): the SDK keeps it in an unexported field and offers no way to read it back, and on
// 2026-07-28 connections no handshake answer carries it past the middleware. Empty if the field
// is not there.
func serverIdentity(s *mcp.Server) (name, version string) {
	value := reflect.ValueOf(s)
	if value.Kind() != reflect.Pointer || value.IsNil() {
		return "", ""
	}
	impl := value.Elem().FieldByName("impl")
	if !impl.IsValid() || impl.Kind() != reflect.Pointer || impl.IsNil() {
		return "", ""
	}
	fields := impl.Elem()
	if fields.Kind() != reflect.Struct {
		return "", ""
	}
	text := func(field string) string {
		if found := fields.FieldByName(field); found.IsValid() && found.Kind() == reflect.String {
			return found.String()
		}
		return ""
	}
	return text("Name"), text("Version")
}
