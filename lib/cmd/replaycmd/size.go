package replaycmd

import (
	"errors"

	"github.com/aiperf/toolkit/lib/internal/units"
)

// parseSize reads a positive byte count by the one rule of every binary
// (k, M, G decimal; KiB, MiB, GiB binary: lib/internal/units).
func parseSize(s string) (int64, error) {
	n, err := units.ParseSize(s)
	if err != nil || n <= 0 {
		return 0, errors.New("want a positive byte count such as 67108864 or 64MiB")
	}
	return n, nil
}
