package replaycmd

import (
	"errors"
	"strconv"
	"strings"
)

// parseSize reads a byte count with an optional KiB, MiB or GiB suffix
// (K, M, G alike). (aiperf-pack reads --max-line the same; each binary
// keeps its own copy so that neither imports the other.)
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = t[:len(t)-len(u.suffix)], u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n <= 0 {
		return 0, errors.New("want a positive byte count such as 67108864 or 64MiB")
	}
	if n > (1<<62)/mult {
		return 0, errors.New("too large")
	}
	return n * mult, nil
}
