package servermetrics

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// allocated returns the bytes f allocates (deterministic for code that
// allocates on the calling goroutine alone).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A page of more samples than Limits.MaxSamples fails before it is parsed
// (the parser held every sample, ~300 bytes each: four targets of 1 M
// series took the scrape agent to 2 GB); one within it is parsed, and
// MaxSeries picks the series kept, as before.
func TestMaxSamples(t *testing.T) {
	var page strings.Builder
	page.WriteString("# HELP s many\n# TYPE s gauge\n\n")
	for i := range 1_000_000 {
		fmt.Fprintf(&page, "s{i=\"%d\"} 1\n", i)
	}
	body := []byte(page.String())
	var err error
	n := allocated(func() { _, err = Parse(body, "text/plain", DefaultLimits) })
	if err == nil || !strings.Contains(err.Error(), "1000000 samples, over the limit of 200000") {
		t.Errorf("a page of 1 M samples: %v", err)
	}
	if n > 1<<20 {
		t.Errorf("refusing it allocated %d bytes", n)
	}
	p, err := Parse(body[:bytes.Index(body, []byte(`s{i="150000"}`))], "", Limits{MaxSamples: 150000, MaxSeries: 10})
	if err != nil || p.Series != 10 || p.Dropped != 150000-10 {
		t.Errorf("150,000 samples at a limit of 150,000: %v, %d kept, %d dropped", err, p.Series, p.Dropped)
	}
}

// readBody reads a page of a declared length into one buffer of that
// length, one of unknown length into a doubling buffer (io.ReadAll's
// quarter growth allocated about five times the page), and reuses the
// buffer it is given.
func TestReadBody(t *testing.T) {
	page := bytes.Repeat([]byte("s 1\n"), 4<<20/4)
	var got []byte
	var err error
	n := allocated(func() { got, err = readBody(bytes.NewReader(page), nil, int64(len(page)), 16<<20+1) })
	if err != nil || !bytes.Equal(got, page) || n > uint64(len(page))+16<<10 {
		t.Errorf("declared length: %v, %d bytes allocated for %d", err, n, len(page))
	}
	n = allocated(func() { got, err = readBody(bytes.NewReader(page), nil, -1, 16<<20+1) })
	if err != nil || !bytes.Equal(got, page) || n > 2*uint64(len(page))+4096 {
		t.Errorf("unknown length: %v, %d bytes allocated for %d", err, n, len(page))
	}
	n = allocated(func() { got, err = readBody(bytes.NewReader(page), got[:0], -1, 16<<20+1) })
	if err != nil || !bytes.Equal(got, page) || n > 4096 {
		t.Errorf("into a buffer of its size: %v, %d bytes allocated", err, n)
	}
	if got, _ := readBody(bytes.NewReader(page), nil, -1, 1000); len(got) != 1000 {
		t.Errorf("read %d bytes at a limit of 1000", len(got))
	}
}
