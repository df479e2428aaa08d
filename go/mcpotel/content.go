package mcpotel

import (
	"encoding/json"
	"regexp"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcp-otel/mcp-otel/go/internal/model"
	"github.com/mcp-otel/mcp-otel/go/internal/semconv"
)

// Opt-in capture of tool arguments and results (gen_ai.tool.call.arguments / .result), as the
// Python package's content.py does it: off unless WithContentCapture; written as JSON, values under
// secret-looking keys replaced by [REDACTED] at any depth, cut to the configured length. The text is
// the same in every language (spec/content.json): no spaces, object keys sorted.

var secretKey = regexp.MustCompile("(?i)" + semconv.SecretKeyPattern)

// captured is {key: JSON of value} when capture is on; nothing when it is off or value is none.
func captured(key string, value any, c *config) []attribute.KeyValue {
	if !c.captureContent || value == nil {
		return nil
	}
	raw, ok := value.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(value); err != nil {
			reportOnce("could not capture tool content", err)
			return nil
		}
	}
	var decoded any
	if err := json.Unmarshal(raw, &decoded); err != nil {
		return nil
	}
	text, err := sortedJSON(redact(decoded, 0))
	if err != nil {
		return nil
	}
	return []attribute.KeyValue{attribute.String(key, model.Bounded(text, c.maxContentLength))}
}

// sortedJSON is value as the text every language writes (spec/content.json): encoding/json sorts a
// map's keys already; markup characters and the line and paragraph separators are written as they
// are, not escaped for HTML or JavaScript.
func sortedJSON(value any) (string, error) {
	var out strings.Builder
	encoder := json.NewEncoder(&out)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(value); err != nil {
		return "", err
	}
	return unescapeSeparators(strings.TrimSuffix(out.String(), "\n")), nil
}

// unescapeSeparators writes encoding/json's \u2028 and \u2029 as the characters (it escapes them
// always); a backslash of the text itself is escaped as two, so an escape starts at an odd one.
func unescapeSeparators(text string) string {
	if !strings.Contains(text, `\u202`) {
		return text
	}
	var out strings.Builder
	for i := 0; i < len(text); i++ {
		if text[i] != '\\' || i+1 == len(text) {
			out.WriteByte(text[i])
			continue
		}
		switch escape := text[i : i+min(6, len(text)-i)]; escape {
		case `\u2028`:
			out.WriteRune('\u2028')
			i += 5
		case `\u2029`:
			out.WriteRune('\u2029')
			i += 5
		default: // any other escape, a backslash's among them, as it is
			out.WriteString(text[i : i+2])
			i++
		}
	}
	return out.String()
}

func redact(value any, depth int) any {
	if depth > semconv.MaxContentDepth {
		return semconv.TooDeep
	}
	switch v := value.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for key, item := range v {
			if secretKey.MatchString(key) {
				out[key] = semconv.Redacted
			} else {
				out[key] = redact(item, depth+1)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = redact(item, depth+1)
		}
		return out
	}
	return value
}
