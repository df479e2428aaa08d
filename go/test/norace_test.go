//go:build !race

package mcpotel_test

// raceEnabled: built with -race.
const raceEnabled = false
