package servermetrics

import (
	"regexp"
	"strings"
)

// inferUnit names a family's unit as aiperf's infer_unit does
// (src/aiperf/server_metrics/units.py at ai-dynamo/aiperf 1cdae727, the
// rules in its words): a range the HELP text states first ("(0-1)",
// "1 means 100 percent": ratio; "(0-100)", "0-100%": percent), then a
// unit it names ("(in MiB)", "in seconds", "(ms)", "tokens/s"), then the
// name's suffix, the longest that matches ("_seconds", "_total", ...),
// and a name holding "num_requests_" counts requests. "" for none.
func inferUnit(name, help string) string {
	if u := unitOfRange(help); u != "" {
		return u
	}
	if u := unitOfHelp(help); u != "" {
		return u
	}
	lower := strings.ToLower(name)
	best := ""
	for _, u := range unitSuffixes {
		if strings.HasSuffix(lower, u.suffix) && len(u.suffix) > len(best) {
			best = u.suffix
		}
	}
	if best != "" {
		return unitBySuffix[best]
	}
	if strings.Contains(lower, "num_requests_") {
		return "requests"
	}
	return ""
}

// A stated range: its bounds ("0" or "0.0"; "1", "100" or with ".0")
// apart by dashes or "to", in parentheses, alone as words, or after
// "range"; or "1 means (is, =) 100 percent (%)".
const rangeSep = `\s*(?:[-–—]+|to)\s*`

var (
	ratioRange = regexp.MustCompile(`(?i)\b0(?:\.0)?` + rangeSep + `1(?:\.0)?\b` +
		`|(?:\b|\()1(?:\.0)?\s*(?:means|is|equals?|==?)\s*100\s*(?:%|percent)`)
	percentRange = regexp.MustCompile(`(?i)\(0(?:\.0)?` + rangeSep + `100(?:\.0)?\)` +
		`|\brange\s+0` + rangeSep + `100\b|\b0` + rangeSep + `100\s*%`)
	inUnit = regexp.MustCompile(`\(in\s+([^\s)]+)\)`)
)

func unitOfRange(help string) string {
	switch {
	case help == "":
		return ""
	case ratioRange.MatchString(help):
		return "ratio"
	case percentRange.MatchString(help):
		return "percent"
	}
	return ""
}

// helpUnits are the units a HELP text names, in the order they are
// tried: "in X" or "(X" followed by a word end or ")".
var helpUnits = []struct {
	re   *regexp.Regexp
	unit string
}{
	{named(`seconds?`), "seconds"},
	{named(`(?:milliseconds?|ms)`), "milliseconds"},
	{named(`(?:nanoseconds?|ns)`), "nanoseconds"},
	{named(`bytes?`), "bytes"},
	{named(`GB/s`), "gb/s"},
	{named(`MB/s`), "mb/s"},
	{named(`tokens?/s(?:ec(?:ond)?)?`), "tokens/s"},
	{named(`requests?/s(?:ec(?:ond)?)?`), "requests/s"},
	{regexp.MustCompile(`(?i)\bin\s+tokens?\b`), "tokens"},
}

func named(unit string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:\bin\s+|\()` + unit + `(?:\b|\))`)
}

// unitTags are the units of "(in TAG)" (DCGM's HELP texts), case-sensitive.
var unitTags = map[string]string{
	"MiB": "megabytes", "GiB": "gigabytes", "KiB": "kilobytes", "B": "bytes",
	"MB": "megabytes", "GB": "gigabytes", "KB": "kilobytes", "TB": "terabytes",
	"C": "celsius", "°C": "celsius", "F": "fahrenheit", "°F": "fahrenheit", "K": "kelvin",
	"Hz": "hertz", "MHz": "megahertz", "GHz": "gigahertz",
	"W": "watt", "mW": "milliwatt", "J": "joule", "mJ": "millijoule", "MJ": "megajoule",
	"s": "seconds", "sec": "seconds", "ms": "milliseconds", "ns": "nanoseconds", "us": "microseconds", "µs": "microseconds",
	"GB/s": "gb/s", "MB/s": "mb/s", "%": "percent", "percent": "percent",
}

func unitOfHelp(help string) string {
	if help == "" {
		return ""
	}
	if m := inUnit.FindStringSubmatch(help); m != nil {
		if u, ok := unitTags[strings.TrimSpace(m[1])]; ok {
			return u
		}
	}
	for _, h := range helpUnits {
		if h.re.MatchString(help) {
			return h.unit
		}
	}
	return ""
}

var unitSuffixes = []struct{ suffix, unit string }{
	{"_seconds_total", "seconds"}, {"_seconds", "seconds"},
	{"_milliseconds", "milliseconds"}, {"_ms_total", "milliseconds"}, {"_ms", "milliseconds"},
	{"_nanoseconds", "nanoseconds"}, {"_ns_total", "nanoseconds"}, {"_ns", "nanoseconds"},
	{"_bytes_total", "bytes"}, {"_bytes", "bytes"},
	{"_kilobytes", "kilobytes"}, {"_megabytes", "megabytes"}, {"_gigabytes", "gigabytes"},
	{"_tokens_total", "tokens"}, {"_tokens", "tokens"},
	{"_requests_total", "requests"}, {"_requests", "requests"}, {"_reqs", "requests"}, {"request_success", "requests"},
	{"_errors_total", "errors"}, {"_errors", "errors"}, {"_error_count_total", "errors"}, {"_error_count", "errors"},
	{"_blocks_total", "blocks"}, {"_blocks", "blocks"}, {"_block_count", "blocks"},
	{"_gb_s", "gb/s"},
	{"_ratio", "ratio"}, {"_percent", "percent"}, {"_perc", "percent"},
	{"_celsius", "celsius"}, {"_joules", "joule"}, {"_watts", "watt"},
	{"_total", "count"}, {"_count", "count"},
}

var unitBySuffix = func() map[string]string {
	m := map[string]string{}
	for _, u := range unitSuffixes {
		m[u.suffix] = u.unit
	}
	return m
}()
