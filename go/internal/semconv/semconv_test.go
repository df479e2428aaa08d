package semconv

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestGeneratedFromTheSpecAsItIsNow: semconv.go carries the sha256 of the spec it was generated from
// (spec/generate.py); a spec changed since fails here, with no other language's toolchain.
func TestGeneratedFromTheSpecAsItIsNow(t *testing.T) {
	generated, err := os.ReadFile("semconv.go")
	if err != nil {
		t.Fatal(err)
	}
	stamp := regexp.MustCompile(`spec/names\.yaml sha256 ([0-9a-f]{64})`).FindSubmatch(generated)
	if stamp == nil {
		t.Fatal("go/internal/semconv/semconv.go has no spec hash: run python spec/generate.py")
	}
	// testdata/names.yaml links to spec/names.yaml: go test caches a result by the files it read only
	// inside the module, so the spec is read through a path in it (a spec changed since reruns this).
	spec, err := os.ReadFile(filepath.Join("testdata", "names.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(spec)
	if got := hex.EncodeToString(sum[:]); string(stamp[1]) != got {
		t.Fatalf("go/internal/semconv/semconv.go is stale (spec sha256 %s, generated from %s): run python spec/generate.py", got, stamp[1])
	}
}
