package cache

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/internal/units"
)

// Config holds the settings of a root's optional config file: one
// "name = value" per line, '#' starts a comment.
//
//	max-size = 50GiB   every populate trims the cache to 80% of it (least recently used first)
//	max-age  = 30d     the age cap gc uses when it is given none
type Config struct {
	MaxSize int64
	MaxAge  time.Duration
}

const configName = "config"

// ParseConfig reads a config file's bytes; name is used in messages.
func ParseConfig(name string, b []byte) (Config, error) {
	var c Config
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return c, fmt.Errorf("%s line %d: want name = value, got %q", name, n, line)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		var err error
		switch k {
		case "max-size":
			c.MaxSize, err = ParseSize(v)
		case "max-age":
			c.MaxAge, err = ParseAge(v)
		default:
			err = fmt.Errorf("unknown setting %q (known: max-size, max-age)", k)
		}
		if err != nil {
			return c, fmt.Errorf("%s line %d: %s: %w", name, n, k, err)
		}
	}
	if err := sc.Err(); err != nil {
		return c, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// ParseSize reads a size as every binary's flags do ("500M" is 500*10^6
// bytes as in ccache, "20GiB" 20*2^30, "4096"): lib/internal/units.
func ParseSize(s string) (int64, error) { return units.ParseSize(s) }

// ParseAge reads a duration as time.ParseDuration does, plus a "d" (day) unit:
// "30d", "12h", "1d12h".
func ParseAge(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	var days float64
	if i := strings.IndexByte(t, 'd'); i >= 0 {
		d, err := strconv.ParseFloat(t[:i], 64)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("age %q: want a duration like 30d, 12h or 90m", s)
		}
		days, t = d, t[i+1:]
	}
	var rest time.Duration
	if t != "" {
		var err error
		if rest, err = time.ParseDuration(t); err != nil || rest < 0 {
			return 0, fmt.Errorf("age %q: want a duration like 30d, 12h or 90m", s)
		}
	}
	return time.Duration(days*24*float64(time.Hour)) + rest, nil
}

// FormatSize prints n bytes with a binary unit: "1.5 GiB", "812 B".
func FormatSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
