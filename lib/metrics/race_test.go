//go:build race

package metrics

// raceEnabled trims the million-record tests: the race detector makes them
// take minutes; `go test ./lib/metrics` (no -race, no -short) runs them whole.
const raceEnabled = true
