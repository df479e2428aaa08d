// Command classify reads the cross-language test's cases (JSON on stdin: server ends and client
// errors) and prints the Go classifier's verdicts in the shape tests/test_languages.py compares.
package main

import (
	"encoding/json"
	"os"

	"github.com/mcp-otel/mcp-otel/go/internal/model"
)

type serverCase struct {
	model.ServerEnd
	Answer *struct {
		ResultType string `json:"resultType"`
		IsError    bool   `json:"isError"`
		Action     string `json:"action"`
	} `json:"answer"`
}

type clientCase struct {
	model.ClientErrorFacts
	Error model.RPCError `json:"error"`
}

type cases struct {
	Server []serverCase `json:"server"`
	Client []clientCase `json:"client"`
}

func verdict(v model.Verdict) map[string]any {
	switch found := v.(type) {
	case *model.Unfinished:
		var code any
		if found.RPCCode != "" {
			code = found.RPCCode
		}
		return map[string]any{"resultType": found.ResultType, "code": code}
	case *model.Outcome:
		attributes := map[string]string{}
		for _, pair := range found.Pairs(true) {
			attributes[pair.Key] = pair.Value
		}
		var description any
		if found.Description != "" {
			description = found.Description
		}
		return map[string]any{"attributes": attributes, "error": found.IsError(), "description": description}
	}
	return nil
}

func main() {
	var in cases
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		os.Exit(2)
	}
	server := make([]map[string]any, 0, len(in.Server))
	for _, c := range in.Server {
		end := c.ServerEnd
		if c.Answer != nil {
			end.Answer = &model.Answer{ResultType: c.Answer.ResultType, IsError: c.Answer.IsError, Action: c.Answer.Action}
		}
		server = append(server, verdict(model.ClassifyServerCall(end)))
	}
	client := make([]map[string]any, 0, len(in.Client))
	for _, c := range in.Client {
		client = append(client, verdict(model.ClassifyClientError(c.Error, c.ClientErrorFacts)))
	}
	if err := json.NewEncoder(os.Stdout).Encode([]any{server, client}); err != nil {
		os.Exit(1)
	}
}
