package servermetrics

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestLoadJSONLErrors(t *testing.T) {
	good := `{"v":1,"endpoint_url":"http://a/metrics","timestamp_ns":1,"endpoint_latency_ns":0,"metrics":{"g":[{"value":1}]}}` + "\n"
	for _, c := range []struct{ in, want string }{
		{good + `{"v":1,"timestamp_ns":2}` + "\n", "f:2: endpoint_url: missing"},
		{good + `{"v":1,"endpoint_url":"http://a/metrics"}` + "\n", "f:2: timestamp_ns: missing"},
		{good + `{"v":1,"endpoint_url":"http://a/metrics","timestamp_ns":"x"}` + "\n", "f:2: timestamp_ns: want int64"},
		{good + `{"v":1,"endpoint_url":"u","timestamp_ns":2,"metrics":{"h":[{"histogram":{"x":1}}]}}` + "\n", `f:2: metrics.h.histogram: bound "x" is not a number`},
		{good + `{"v":1,"endpoint_url":"u","timestamp_ns":2,"metrics":{"g":[{}]}}` + "\n", "f:2: metrics.g: a series with neither value nor buckets"},
		{"{nope\n" + good, "f:1: "},
	} {
		_, _, err := LoadJSONL(strings.NewReader(c.in), "f", DefaultLimits)
		var le *LineError
		if !errors.As(err, &le) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q…", c.in, err, c.want)
		}
	}
	// A last line cut short is left out, and counted.
	c, cut, err := LoadJSONL(strings.NewReader(good+`{"v":1,"endpoint_u`), "f", DefaultLimits)
	if err != nil || cut != 1 || c.targets[0].fetches != 1 {
		t.Errorf("cut line: %v, %d cut", err, cut)
	}
}

// Shards that scraped the same target: the scrapes of the one that covers
// the window alone (a: 1 to 3; b scraped it at 2 only), in either order,
// and a note; another target of the second shard is kept.
func TestMergeLoaded(t *testing.T) {
	line := func(u string, ts, v int) string {
		return `{"v":1,"endpoint_url":"` + u + `","timestamp_ns":` + itoa(ts) + `,"endpoint_latency_ns":0,"types":{"c_total":"counter"},"metrics":{"c_total":[{"value":` + itoa(v) + `}]}}` + "\n"
	}
	a, _, err := LoadJSONL(strings.NewReader(line("http://e/metrics", 1, 0)+line("http://e/metrics", 3, 10)), "a", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := LoadJSONL(strings.NewReader(line("http://e/metrics", 2, 4)+line("http://r/metrics", 2, 1)+line("http://r/metrics", 4, 5)), "b", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	m, notes := MergeLoaded([]string{"a", "b"}, []*Collector{a, b}, Window{Start: 1, End: 3})
	if len(notes) != 1 || !strings.Contains(notes[0], "http://e/metrics: scraped by several shards; the exports use a's scrapes alone") {
		t.Errorf("notes %q", notes)
	}
	// both bracket [1, 3]: the tighter bracket (c: 1 and 3) wins over d (0 and 4), in either order
	line2 := func(ts, v int) string { return line("http://e/metrics", ts, v) }
	cc, _, _ := LoadJSONL(strings.NewReader(line2(1, 2)+line2(3, 8)), "c", DefaultLimits)
	dd, _, _ := LoadJSONL(strings.NewReader(line2(0, 0)+line2(4, 12)), "d", DefaultLimits)
	for _, order := range [][]*Collector{{cc, dd}, {dd, cc}} {
		names := []string{"c", "d"}
		if order[0] == dd {
			names = []string{"d", "c"}
		}
		if _, notes := MergeLoaded(names, order, Window{Start: 1, End: 3}); len(notes) != 1 || !strings.Contains(notes[0], "use c's scrapes") {
			t.Errorf("%v: notes %q, want c's scrapes", names, notes)
		}
	}
	// whatever the order the shards are given in: the one covering the window
	if m2, notes := MergeLoaded([]string{"b", "a"}, []*Collector{b, a}, Window{Start: 1, End: 3}); len(notes) != 1 || !strings.Contains(notes[0], "use a's scrapes") ||
		m2.Report(Window{Start: 1, End: 3}).Targets[0].Families[0].Series[0].Counter.Total != 10 {
		t.Errorf("b first: notes %q", notes)
	}
	r := m.Report(Window{Start: 0, End: 10})
	got := map[string]float64{}
	for _, tr := range r.Targets {
		got[tr.URL] = tr.Families[0].Series[0].Counter.Total
	}
	if len(got) != 2 || got["http://e/metrics"] != 10 || got["http://r/metrics"] != 4 {
		t.Errorf("deltas %v, want e 10 (a's alone) and r 4", got)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// A line past the bound is refused, naming it, before it is all in memory.
func TestLoadJSONLLongLine(t *testing.T) {
	in := `{"v":1,"endpoint_url":"http://a/metrics","timestamp_ns":1,"metrics":{"g":[{"value":1}]}}` + "\n" + strings.Repeat("x", 5000) + "\n"
	_, _, err := LoadJSONL(strings.NewReader(in), "f", Limits{MaxBody: 1000})
	if err == nil || !strings.HasPrefix(err.Error(), "f:2: line longer than any scrape") {
		t.Errorf("error %v", err)
	}
}

// TestLoadJSONLLines: the stream is read as every JSONL input is
// (lib/internal/jsonl): a UTF-8 BOM is skipped, CRLF ends a line, and a
// line past the limits is a *LineError naming it.
func TestLoadJSONLLines(t *testing.T) {
	good := `{"v":1,"endpoint_url":"http://a/metrics","timestamp_ns":1,"endpoint_latency_ns":0,"metrics":{"g":[{"value":1}]}}`
	c, cut, err := LoadJSONL(strings.NewReader("\uFEFF"+good+"\r\n\r\n"+good+"\n"), "f", DefaultLimits)
	if err != nil || cut != 0 || c.targets[0].fetches != 2 {
		t.Fatalf("BOM and CRLF: %v, %d cut", err, cut)
	}
	lim := DefaultLimits
	lim.MaxBody = 64
	_, _, err = LoadJSONL(strings.NewReader(good+"\n"+strings.Repeat(" ", 300)+good+"\n"), "f", lim)
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 || !errors.Is(err, errLongLine) {
		t.Errorf("long line: %v, want f:2: %v", err, errLongLine)
	}
}
