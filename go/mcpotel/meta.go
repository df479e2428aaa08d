package mcpotel

import (
	"context"
	"reflect"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

// A request's _meta, as the front end reads it and writes it: the sending middleware hands the
// SDK a copy of the request whose _meta carries the trace context, and never changes the caller's
// request, params or map (propagation.go injects and extracts the context itself).

// metaOf is a request's _meta, or nil (the SDK passes typed nil params for some requests).
func metaOf(req mcp.Request) map[string]any {
	params := req.GetParams()
	if isNil(params) {
		return nil
	}
	return params.GetMeta()
}

// withMeta is req with a copy of its params whose _meta carries the trace context of ctx: the
// caller's params and map are never changed, the SDK's own _meta keys are kept, and the request
// keeps its concrete type. The SDK's own request types are copied as themselves; any other
// through reflection (a type assertion costs nothing, a reflective one a walk of method sets).
func withMeta(ctx context.Context, t *telemetry, method string, req mcp.Request) mcp.Request {
	params := req.GetParams()
	var copied mcp.Params
	if isNil(params) {
		if copied = emptyParams(method); copied == nil {
			return req
		}
	} else {
		copied = copyParams(params)
	}
	copied.SetMeta(injected(ctx, t.config.propagator, copied.GetMeta()))
	switch r := req.(type) {
	case *mcp.ClientRequest[mcp.Params]:
		if r != nil {
			fresh := *r
			fresh.Params = copied
			return &fresh
		}
	case *mcp.ServerRequest[mcp.Params]:
		if r != nil {
			fresh := *r
			fresh.Params = copied
			return &fresh
		}
	}
	return withParams(req, copied)
}

// copyParams is a shallow copy of params (not nil): a tool call's as itself, any other by reflection.
func copyParams(params mcp.Params) mcp.Params {
	if p, ok := params.(*mcp.CallToolParams); ok {
		fresh := *p
		return &fresh
	}
	value := reflect.ValueOf(params)
	fresh := reflect.New(value.Elem().Type())
	fresh.Elem().Set(value.Elem())
	return fresh.Interface().(mcp.Params)
}

// withParams is a copy of a request of a type of its own (a pointer to a struct with a Params
// field) holding params instead; req itself when it has no such field.
func withParams(req mcp.Request, params mcp.Params) mcp.Request {
	request := reflect.ValueOf(req)
	if request.Kind() != reflect.Pointer || request.Elem().Kind() != reflect.Struct {
		return req
	}
	fresh := reflect.New(request.Elem().Type())
	fresh.Elem().Set(request.Elem())
	index, ok := paramsField(request.Elem().Type())
	if !ok {
		return req
	}
	slot := fresh.Elem().Field(index)
	if !reflect.TypeOf(params).AssignableTo(slot.Type()) {
		return req
	}
	slot.Set(reflect.ValueOf(params))
	return fresh.Interface().(mcp.Request)
}

// emptyParams is a fresh params value for the requests the SDK may send with nil params.
func emptyParams(method string) mcp.Params {
	switch method {
	case "ping":
		return &mcp.PingParams{}
	case "tools/list":
		return &mcp.ListToolsParams{}
	case "prompts/list":
		return &mcp.ListPromptsParams{}
	case "resources/list":
		return &mcp.ListResourcesParams{}
	case "resources/templates/list":
		return &mcp.ListResourceTemplatesParams{}
	case semconv.MethodRootsList:
		//lint:ignore SA1019 roots/list is deprecated from 2026-07-28 on, and servers still send it on older connections.
		return &mcp.ListRootsParams{}
	}
	return nil
}

func isNil(params mcp.Params) bool {
	if params == nil {
		return true
	}
	value := reflect.ValueOf(params)
	return value.Kind() == reflect.Pointer && value.IsNil()
}

// paramsFields is the index of each request type's Params field, found once per type (a field
// found by name costs a search of the struct on every request).
var paramsFields sync.Map // reflect.Type -> int (-1: none)

func paramsField(t reflect.Type) (int, bool) {
	if found, ok := paramsFields.Load(t); ok {
		return found.(int), found.(int) >= 0
	}
	index := -1
	if field, ok := t.FieldByName("Params"); ok && len(field.Index) == 1 {
		index = field.Index[0]
	}
	paramsFields.Store(t, index)
	return index, index >= 0
}
