//go:build !race

package tokenizer

// raceSlowdown scales time limits in tests: the race detector slows code
// down several times.
const raceSlowdown = 1
