//go:build race

package mock

// raceEnabled skips TestPrefixMooncake's 13.7M-token replay under the race
// detector (six times slower there, and sequential: nothing to race).
const raceEnabled = true
