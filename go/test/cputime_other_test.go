//go:build !unix

package mcpotel_test

import "time"

// processCPU: no getrusage here, so no CPU figure.
func processCPU() (time.Duration, bool) { return 0, false }
