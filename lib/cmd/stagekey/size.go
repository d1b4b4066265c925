package stagekey

import (
	"errors"
	"fmt"

	"github.com/aiperf/toolkit/lib/internal/units"
)

// parseSize reads a positive byte count by the one rule of every binary
// (k, M, G decimal; KiB, MiB, GiB binary: lib/internal/units), at most the
// largest record a store holds.
func parseSize(s string) (int, error) {
	n, err := units.ParseSize(s)
	if err != nil || n <= 0 {
		return 0, errors.New("want a positive byte count such as 268435456 or 256MiB")
	}
	if uint64(n) > uint64(MaxRecordBytes) {
		return 0, fmt.Errorf("more than %d bytes, the largest record a store holds", uint64(MaxRecordBytes))
	}
	return int(n), nil
}
