// Package model is the outcome model and its pure classifier, the same rules as the Python
// package's outcome.py and classify.py (docs/outcomes.md is their table): facts in, one Outcome out.
// No OpenTelemetry and no MCP SDK in here; verdicts_test.go runs the classifier on the cases of
// spec/verdicts.json, which the Python and TypeScript tests run too.
package model

import (
	"strconv"
	"unicode/utf8"

	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

// MaxDescriptionLength bounds status descriptions, which come from peers.
const MaxDescriptionLength = 512

// Pair is one attribute of a span and its point.
type Pair struct{ Key, Value string }

// Verdict is how a request ended: an *Outcome, or an *Unfinished answer (no result yet).
type Verdict interface{ verdict() }

// Outcome is a classified outcome. Build it with OK, Failed, CallerFault or Cancelled.
type Outcome struct {
	Outcome      string
	ErrorType    string // "" when none
	RPCCode      string // a peer's wire code only; "" when none
	Description  string
	CancelReason string
	// CallerFault: on a receiver, the request was wrong (no error.type, status UNSET).
	CallerFault bool
	pairs       [2][]Pair // [other requests, tool calls]
}

func (*Outcome) verdict() {}

// IsError reports whether the span status is ERROR: a cancel is not, nor on a server a caller's fault.
func (o *Outcome) IsError() bool { return o.Outcome == semconv.OutcomeFailed && !o.CallerFault }

// Pairs are the outcome's attributes on a span and its point (shared: not to be changed).
func (o *Outcome) Pairs(toolCall bool) []Pair {
	if toolCall {
		return o.pairs[1]
	}
	return o.pairs[0]
}

func newOutcome(o Outcome) *Outcome {
	for i, tool := range []bool{false, true} {
		pairs := []Pair{{semconv.MCPRequestOutcome, o.Outcome}}
		if tool {
			pairs = append(pairs, Pair{semconv.ToolOutcome, o.Outcome})
		}
		if o.ErrorType != "" {
			pairs = append(pairs, Pair{semconv.ErrorType, o.ErrorType})
		}
		if o.RPCCode != "" {
			pairs = append(pairs, Pair{semconv.RPCResponseStatusCode, o.RPCCode})
		}
		if o.CancelReason != "" {
			pairs = append(pairs, Pair{semconv.MCPRequestCancelReason, o.CancelReason})
			if tool {
				pairs = append(pairs, Pair{semconv.ToolCancelReason, o.CancelReason})
			}
		}
		o.pairs[i] = pairs
	}
	return &o
}

// OK is the outcome of most requests: one value, shared.
var OK = newOutcome(Outcome{Outcome: semconv.OutcomeOK})

// Failed is a failure of type errorType; rpcCode is a peer's wire code, or nil.
func Failed(errorType, description string, rpcCode *int) *Outcome {
	o := Outcome{Outcome: semconv.OutcomeFailed, ErrorType: errorType, Description: Bounded(description, MaxDescriptionLength)}
	if rpcCode != nil {
		o.RPCCode = strconv.Itoa(*rpcCode)
	}
	return newOutcome(o)
}

// CallerFault is a receiver's JSON-RPC answer that blames the request: no error.type, UNSET.
func CallerFault(code int) *Outcome {
	return newOutcome(Outcome{Outcome: semconv.OutcomeFailed, RPCCode: strconv.Itoa(code), CallerFault: true})
}

// Cancelled is a cancel, for reason.
func Cancelled(reason string) *Outcome {
	return newOutcome(Outcome{Outcome: semconv.OutcomeCancelled, CancelReason: reason})
}

// Unfinished is a request answered with no result yet: its result type, and the code that said so.
type Unfinished struct {
	ResultType string
	RPCCode    string
}

func (*Unfinished) verdict() {}

// Bounded is text cut to limit characters, marking the cut.
func Bounded(text string, limit int) string {
	// No more bytes than limit: no more characters either (most names), without counting them.
	if len(text) <= limit || utf8.RuneCountInString(text) <= limit {
		return text
	}
	runes := []rune(text)
	return string(runes[:max(limit-1, 0)]) + "…"
}
