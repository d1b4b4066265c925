//go:build race

package synth

// raceEnabled trims the slow full-size checks under -race; `make test` runs
// them again at full size without the race detector.
const raceEnabled = true
