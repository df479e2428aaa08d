//go:build unix

package mcpotel_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used so far, all its threads, user and system: a
// benchmark's CPU per call, whatever else the machine runs (wall time counts the waits too).
func processCPU() (time.Duration, bool) {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0, false
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano()), true
}
