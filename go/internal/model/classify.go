package model

import (
	"strconv"

	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

// The SDKs' own codes (a request timeout: -32001, mcp 1.x Python's 408; a closed connection; the
// Python SDKs' answers to a cancel or a handler's exception): not a server's verdict on the call,
// never in rpc.response.status_code. The same set in every language (spec/verdicts.json).
const connectionClosedCode = -32000

var (
	sdkTimeoutCodes = map[int]bool{408: true, -32001: true}
	sdkLocalCodes   = map[int]bool{408: true, -32001: true, connectionClosedCode: true, 0: true, -32800: true}
)

// RPCError is the code and message of a JSON-RPC error.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

var (
	declined  = Cancelled(semconv.CancelInputDeclined)
	toolError = Failed(semconv.ErrorToolError, "", nil)
)

// Answer is what a result says of itself: its resultType, and isError (tool calls).
type Answer struct {
	ResultType string
	IsError    bool
	// Action of an elicitation's answer (accept, decline, cancel), "" for other answers.
	Action string
}

// ClassifyAnswer is a request answered with a result where nothing but the answer decides.
func ClassifyAnswer(a Answer) Verdict {
	switch a.ResultType {
	case semconv.ResultInputRequired, semconv.ResultTask:
		return &Unfinished{ResultType: a.ResultType}
	}
	if a.IsError {
		return toolError
	}
	return OK
}

// IsDeclinedAnswer reports whether the answer to an input request is a person's no.
func IsDeclinedAnswer(method string, a Answer, rpc *RPCError) bool {
	switch method {
	case semconv.MethodElicitationCreate:
		return rpc == nil && semconv.DecliningActions.Has(a.Action)
	case semconv.MethodSamplingCreate:
		return rpc != nil && rpc.Code == semconv.UserRejectedCode
	}
	return false
}

// ClientFailure is how a request's sending failed: the facts the front end read of the error.
type ClientFailure struct {
	// CallerCancelled: the error is the caller's own cancellation of its context.
	CallerCancelled bool
	// TimedOut: the caller's deadline, or the SDK's timeout.
	TimedOut bool
	// ConnectionClosed: the connection is gone (end of input, the transport refused to carry it).
	ConnectionClosed bool
	// RPC: a JSON-RPC error the peer answered.
	RPC            *RPCError
	ErrorName      string
	KeepMessage    bool
	AnswerDeclined bool
	InputDeclined  bool
	Method         string
}

// ClassifyClientFailure is a failed send as its sender sees it.
func ClassifyClientFailure(f ClientFailure) Verdict {
	switch {
	case f.CallerCancelled:
		return Cancelled(semconv.CancelCaller)
	case f.RPC != nil:
		return ClassifyClientError(*f.RPC, ClientErrorFacts{KeepMessage: f.KeepMessage, AnswerDeclined: f.AnswerDeclined, InputDeclined: f.InputDeclined, Method: f.Method})
	case f.AnswerDeclined:
		return declined
	case f.TimedOut:
		return Failed(semconv.ErrorTimeout, "", nil)
	case f.ConnectionClosed:
		return Failed(semconv.ErrorConnectionClosed, "", nil)
	}
	name := f.ErrorName
	if name == "" {
		name = semconv.OtherValue
	}
	return Failed(name, "", nil)
}

// ClientErrorFacts are what else decides a JSON-RPC error on its sender's side.
type ClientErrorFacts struct {
	KeepMessage    bool
	AnswerDeclined bool
	InputDeclined  bool
	Method         string
}

// ClassifyClientError is a JSON-RPC error as a request's sender sees it.
func ClassifyClientError(e RPCError, f ClientErrorFacts) Verdict {
	switch {
	case f.AnswerDeclined:
		return declined
	case sdkTimeoutCodes[e.Code]:
		return Failed(semconv.ErrorTimeout, e.Message, nil)
	case e.Code == connectionClosedCode:
		return Failed(semconv.ErrorConnectionClosed, e.Message, nil)
	case f.InputDeclined:
		return declined
	}
	if u := NotDone(f.Method, e.Code); u != nil {
		return u
	}
	return rpcFailure(e, f.KeepMessage)
}

// NotDone is an error answer that says the request has no result yet, or nil.
func NotDone(method string, code int) *Unfinished {
	if code == semconv.URLElicitationRequiredCode {
		return &Unfinished{ResultType: semconv.ResultInputRequired, RPCCode: strconv.Itoa(code)}
	}
	if method == semconv.MethodServerDiscover && semconv.NegotiationCodes.Has(code) {
		return &Unfinished{ResultType: semconv.ResultNegotiation, RPCCode: strconv.Itoa(code)}
	}
	return nil
}

func rpcFailure(e RPCError, keepMessage bool) *Outcome {
	var wire *int
	if !sdkLocalCodes[e.Code] {
		code := e.Code
		wire = &code
	}
	description := ""
	if keepMessage {
		description = e.Message
	}
	return Failed(strconv.Itoa(e.Code), description, wire)
}

// ServerEnd is how a request ended on its receiver.
type ServerEnd struct {
	Answer          *Answer
	RPC             *RPCError
	PeerCancelled   bool
	IsCancellation  bool
	TransportClosed bool
	KeepMessage     bool
	AnswerDeclined  bool
	InputDeclined   bool
	Method          string
}

// ClassifyServerCall is how a request ended on its receiver.
func ClassifyServerCall(f ServerEnd) Verdict {
	switch {
	case f.PeerCancelled:
		return Cancelled(semconv.CancelClient)
	case f.IsCancellation && f.TransportClosed:
		return Cancelled(semconv.CancelDisconnect)
	case f.IsCancellation:
		return Failed(semconv.ErrorShutdown, "server shut down with the call in flight", nil)
	}
	answerIsError := f.Answer != nil && f.Answer.IsError
	if f.AnswerDeclined || (f.InputDeclined && (f.RPC != nil || answerIsError)) {
		return declined
	}
	if f.RPC != nil {
		if u := NotDone(f.Method, f.RPC.Code); u != nil {
			return u
		}
		if semconv.CallerFaultCodes.Has(f.RPC.Code) {
			return CallerFault(f.RPC.Code)
		}
		return rpcFailure(*f.RPC, f.KeepMessage)
	}
	if f.Answer == nil {
		return OK
	}
	return ClassifyAnswer(*f.Answer)
}

// ClassifyClientResult is a result on its sender's side: a person's no (the answer to an input
// request it sent), a tool error unless the person declined an input request of the call, or ok.
func ClassifyClientResult(a Answer, answerDeclined, inputDeclined bool) Verdict {
	if answerDeclined {
		return declined
	}
	verdict := ClassifyAnswer(a)
	if verdict == toolError && inputDeclined {
		return declined
	}
	return verdict
}
