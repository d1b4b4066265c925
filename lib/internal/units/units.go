// Package units reads the sizes and durations that every binary's flags
// take, with one rule each, so that "64M" or "20" means the same thing in
// aiperf-pack, aiperf-replay, aiperf-mock and aiperf-cache.
//
// Sizes: a number (decimal point allowed) with an optional unit. The SI
// units are decimal and the IEC units binary, as ccache, systemd and the
// IEC 80000-13 standard have it; a trailing B is optional and case does not
// matter:
//
//	k, kB = 10^3   M, MB = 10^6   G, GB = 10^9   T, TB = 10^12
//	Ki, KiB = 2^10 Mi, MiB = 2^20 Gi, GiB = 2^30 Ti, TiB = 2^40
//
// Durations: a Go duration ("20ms", "1.5s", "1m30s") or a plain number of
// milliseconds ("20", "0.5"), the unit the Python aiperf's flags use.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// sizeUnits maps a lower-cased unit to its multiplier.
var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
	"ki": 1 << 10, "kib": 1 << 10, "mi": 1 << 20, "mib": 1 << 20,
	"gi": 1 << 30, "gib": 1 << 30, "ti": 1 << 40, "tib": 1 << 40,
}

// ParseSize reads a byte count ("4096", "500M", "64MiB", "1.5GB"). A
// fraction of a byte is dropped. Negative sizes, NaN and sizes of 2^63
// bytes or more are refused.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("size %q: want a number with an optional unit (4096, 500M, 64MiB)", s)
	}
	mult, ok := sizeUnits[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (k, M, G, T are powers of 1000; Ki, Mi, Gi, Ti of 1024; B optional)", s, unit)
	}
	v := f * mult
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(v), nil
}

// ParseMS reads a duration: a Go duration or a plain number of
// milliseconds. Negative durations are refused.
func ParseMS(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > float64(math.MaxInt64)/float64(time.Millisecond) {
			return 0, fmt.Errorf("%q is not a duration (20ms, 1.5s) or a number of milliseconds", s)
		}
		d = time.Duration(f * float64(time.Millisecond))
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("%q is not a duration (20ms, 1.5s) or a number of milliseconds", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return d, nil
}
