package model

// The classifier's cases (spec/verdicts.json, the same file the Python and TypeScript tests read)
// through the Go classifier: every case's facts give exactly its verdict.

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"testing"
)

type verdictCase struct {
	Rows      []string        `json:"rows"`
	Side      string          `json:"side"`
	Facts     json.RawMessage `json:"facts"`
	Verdict   json.RawMessage `json:"verdict"`
	Languages []string        `json:"languages"`
}

// caseFacts are a case's facts, in the file's words.
type caseFacts struct {
	Method string `json:"method"`
	Answer *struct {
		ResultType string `json:"resultType"`
		IsError    bool   `json:"isError"`
		Action     string `json:"action"`
	} `json:"answer"`
	RPCError        *RPCError `json:"rpcError"`
	KeepMessage     bool      `json:"keepMessage"`
	AnswerDeclined  bool      `json:"answerDeclined"`
	InputDeclined   bool      `json:"inputDeclined"`
	CallerCancelled bool      `json:"callerCancelled"`
	TimedOut        bool      `json:"timedOut"`
	TransportClosed bool      `json:"transportClosed"`
	ErrorName       string    `json:"errorName"`
	PeerCancelled   bool      `json:"peerCancelled"`
	IsCancellation  bool      `json:"isCancellation"`
}

var sharedFacts = []string{"method", "answer", "rpcError", "keepMessage", "answerDeclined", "inputDeclined"}

// The facts the Go front ends hand the classifier, by side: a case with another is refused.
var factsOf = map[string][]string{
	"sender":   append(slices.Clone(sharedFacts), "callerCancelled", "timedOut", "transportClosed", "errorName"),
	"receiver": append(slices.Clone(sharedFacts), "peerCancelled", "isCancellation", "transportClosed"),
}

// classifyCase is the Go classifier's verdict on a case's facts, through the function its front
// ends call.
func classifyCase(t *testing.T, side string, raw json.RawMessage) Verdict {
	var names map[string]json.RawMessage
	var facts caseFacts
	if err := json.Unmarshal(raw, &names); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &facts); err != nil {
		t.Fatal(err)
	}
	var unknown []string
	for name := range names {
		if !slices.Contains(factsOf[side], name) {
			unknown = append(unknown, name)
		}
	}
	if sort.Strings(unknown); len(unknown) > 0 {
		t.Fatalf("facts the Go classifier does not take on the %s: %v", side, unknown)
	}
	var answer *Answer
	if facts.Answer != nil {
		answer = &Answer{ResultType: facts.Answer.ResultType, IsError: facts.Answer.IsError, Action: facts.Answer.Action}
	}
	switch {
	case side == "receiver":
		return ClassifyServerCall(ServerEnd{
			Answer: answer, RPC: facts.RPCError, PeerCancelled: facts.PeerCancelled, IsCancellation: facts.IsCancellation,
			TransportClosed: facts.TransportClosed, KeepMessage: facts.KeepMessage, AnswerDeclined: facts.AnswerDeclined,
			InputDeclined: facts.InputDeclined, Method: facts.Method,
		})
	case answer != nil:
		return ClassifyClientResult(*answer, facts.AnswerDeclined, facts.InputDeclined)
	}
	name := facts.ErrorName
	if name == "" {
		name = "Error" // the file's default
	}
	return ClassifyClientFailure(ClientFailure{
		CallerCancelled: facts.CallerCancelled, TimedOut: facts.TimedOut, ConnectionClosed: facts.TransportClosed,
		RPC: facts.RPCError, ErrorName: name, KeepMessage: facts.KeepMessage, AnswerDeclined: facts.AnswerDeclined,
		InputDeclined: facts.InputDeclined, Method: facts.Method,
	})
}

// verdictOf is a verdict in the file's words (a key only when the verdict has it).
func verdictOf(v Verdict) map[string]any {
	out := map[string]any{"status": "UNSET"}
	switch found := v.(type) {
	case *Unfinished:
		out["resultType"] = found.ResultType
		if found.RPCCode != "" {
			out["rpcCode"] = found.RPCCode
		}
	case *Outcome:
		out["outcome"] = found.Outcome
		if found.IsError() {
			out["status"] = "ERROR"
		}
		fields := map[string]string{
			"errorType": found.ErrorType, "rpcCode": found.RPCCode, "cancelReason": found.CancelReason, "description": found.Description,
		}
		for key, value := range fields {
			if value != "" {
				out[key] = value
			}
		}
	}
	return out
}

func TestTheGoClassifierGivesTheCaseVerdicts(t *testing.T) {
	text, err := os.ReadFile("../../../spec/verdicts.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Cases []verdictCase `json:"cases"`
	}
	if err := json.Unmarshal(text, &spec); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for index, c := range spec.Cases {
		if c.Languages != nil && !slices.Contains(c.Languages, "go") {
			continue
		}
		ran++
		var method struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(c.Facts, &method)
		t.Run(fmt.Sprintf("%d-%s-%s", index, c.Side, method.Method), func(t *testing.T) {
			var want map[string]any
			if err := json.Unmarshal(c.Verdict, &want); err != nil {
				t.Fatal(err)
			}
			if got := verdictOf(classifyCase(t, c.Side, c.Facts)); !reflect.DeepEqual(got, want) {
				t.Errorf("facts %s (%v): got %v, want %v", c.Facts, c.Rows, got, want)
			}
		})
	}
	if ran < 100 {
		t.Fatalf("%d cases ran", ran)
	}
}
