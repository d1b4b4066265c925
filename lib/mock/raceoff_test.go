//go:build !race

package mock

const raceEnabled = false
