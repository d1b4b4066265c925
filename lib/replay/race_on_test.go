//go:build race

package replay

// The race detector slows everything down several times: timing tests keep
// their checks of order and exactness, with wider tolerances.
const raceEnabled = true
