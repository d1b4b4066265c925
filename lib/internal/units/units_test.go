package units

import (
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{
		"0": 0, "4096": 4096, "1k": 1000, "1K": 1000, "1kB": 1000, "1KiB": 1024, "1ki": 1024,
		"64M": 64e6, "64MB": 64e6, "64Mi": 64 << 20, "64MiB": 64 << 20, "64mib": 64 << 20,
		"1.5G": 1.5e9, "2GiB": 2 << 30, "1T": 1e12, "1TiB": 1 << 40, " 10 MiB ": 10 << 20, "7b": 7,
	} {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "M", "-1", "1X", "1 MiBs", "1e3", "NaN", "9999999999999999999999", "1..2M"} {
		if n, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q) = %d, accepted", s, n)
		}
	}
}

func TestParseMS(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"20": 20 * time.Millisecond, "0.5": 500 * time.Microsecond, "0": 0,
		"20ms": 20 * time.Millisecond, "1.5s": 1500 * time.Millisecond, "1m30s": 90 * time.Second, " 3 ": 3 * time.Millisecond,
	} {
		if got, err := ParseMS(s); err != nil || got != want {
			t.Errorf("ParseMS(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "-1", "-2s", "x", "NaN", "Inf", "1e300", "1d"} {
		if d, err := ParseMS(s); err == nil {
			t.Errorf("ParseMS(%q) = %v, accepted", s, d)
		}
	}
}
