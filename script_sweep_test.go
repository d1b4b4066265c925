package aiperf_test

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/mock"
	"github.com/rogpeppe/go-internal/testscript"
)

// capmock VAR SLOTS TOKEN-RATE TTFT starts an aiperf-mock with a capacity
// (--slots, --token-rate, --ttft; no tokenizer) on a free loopback port for
// the rest of the script and sets $VAR to its URL.
func cmdCapMock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: capmock VAR SLOTS TOKEN-RATE TTFT")
	}
	slots, err := strconv.Atoi(args[1])
	ts.Check(err)
	rate, err := strconv.ParseFloat(args[2], 64)
	ts.Check(err)
	ttft, err := time.ParseDuration(args[3])
	ts.Check(err)
	url, stop, err := startMock(mock.Config{Slots: slots, TokenRate: rate, TTFT: ttft})
	ts.Check(err)
	ts.Defer(stop)
	ts.Setenv(args[0], url)
}

// jsonnear FILE PATH WANT PCT asserts that the number at PATH (dot-separated
// keys) of the JSON object in FILE lies within PCT percent of WANT: a timing
// figure (a sweep's capacity), so only where load is controlled, under make
// test-soak (AIPERF_SOAK=1). In the default suite it checks that the number
// is there and logs it: a capacity measured on a machine loaded many times
// over its cores failed the suite once (issue 33).
func cmdJSONNear(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: jsonnear FILE PATH WANT PCT")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	var v any
	ts.Check(json.Unmarshal(b, &v))
	for _, k := range strings.Split(args[1], ".") {
		m, ok := v.(map[string]any)
		if !ok {
			ts.Fatalf("%s: %s: not an object at %q", args[0], args[1], k)
		}
		v = m[k]
	}
	got, ok := v.(float64)
	if !ok {
		ts.Fatalf("%s: %s is %v, not a number", args[0], args[1], v)
	}
	want, err := strconv.ParseFloat(args[2], 64)
	ts.Check(err)
	pct, err := strconv.ParseFloat(args[3], 64)
	ts.Check(err)
	if os.Getenv("AIPERF_SOAK") == "" {
		ts.Logf("%s: %s = %g (want %g ± %g%%, asserted under make test-soak)", args[0], args[1], got, want, pct)
		return
	}
	if math.Abs(got-want) > pct/100*math.Abs(want) {
		ts.Fatalf("%s: %s = %g, want %g ± %g%%", args[0], args[1], got, want, pct)
	}
	ts.Logf("%s: %s = %g (want %g ± %g%%)", args[0], args[1], got, want, pct)
}
