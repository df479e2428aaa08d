package testserver

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"sync"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Span is a finished span as the built server writes it, one JSON object a line: what the tests
// assert of a span, whichever process made it.
type Span struct {
	Name        string            `json:"name"`
	Kind        string            `json:"kind"`
	TraceID     string            `json:"traceId"`
	SpanID      string            `json:"spanId"`
	Parent      string            `json:"parentSpanId,omitempty"` // "" for a root
	Status      string            `json:"status"`                 // Unset, Error, Ok
	Description string            `json:"description,omitempty"`  // the status description
	Attributes  map[string]string `json:"attributes"`
	Links       []string          `json:"links,omitempty"` // linked span ids
}

// SpanOf is a finished span in the file's form (every attribute value as its string).
func SpanOf(s sdktrace.ReadOnlySpan) Span {
	out := Span{
		Name:        s.Name(),
		Kind:        s.SpanKind().String(),
		TraceID:     s.SpanContext().TraceID().String(),
		SpanID:      s.SpanContext().SpanID().String(),
		Status:      s.Status().Code.String(),
		Description: s.Status().Description,
		Attributes:  map[string]string{},
	}
	if s.Parent().IsValid() {
		out.Parent = s.Parent().SpanID().String()
	}
	for _, kv := range s.Attributes() {
		out.Attributes[string(kv.Key)] = kv.Value.String()
	}
	for _, link := range s.Links() {
		out.Links = append(out.Links, link.SpanContext.SpanID().String())
	}
	return out
}

// FileExporter writes each span it is given as one line of JSON, at once (a simple processor's
// export is synchronous: a span is on disk when End returns, even if the process then dies).
type FileExporter struct {
	mu   sync.Mutex
	file *os.File
}

// NewFileExporter appends to path.
func NewFileExporter(path string) (*FileExporter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	return &FileExporter{file: f}, nil
}

// ExportSpans implements sdktrace.SpanExporter.
func (e *FileExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range spans {
		line, err := json.Marshal(SpanOf(s))
		if err != nil {
			return err
		}
		if _, err := e.file.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// Shutdown implements sdktrace.SpanExporter.
func (e *FileExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.file.Close()
}

// ReadSpans reads a span file (missing: none yet).
func ReadSpans(path string) ([]Span, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var spans []Span
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		var s Span
		if err := json.Unmarshal(scanner.Bytes(), &s); err != nil {
			return spans, err // a line being written: the caller reads again
		}
		spans = append(spans, s)
	}
	return spans, scanner.Err()
}
