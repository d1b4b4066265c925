//go:build race

package trace

// raceEnabled trims the decoder side of the long-line test: the race
// detector instruments every byte that encoding/json scans.
const raceEnabled = true
