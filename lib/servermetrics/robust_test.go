package servermetrics

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A target that dies mid-run, one that answers too slowly and ones that
// serve garbage give warnings and gaps, never a failed collection, and the
// stored series stay within the limits.
func TestBadTargets(t *testing.T) {
	t.Parallel()
	good := httptest.NewServer(&fakeVLLM{})
	defer good.Close()

	var dyingN atomic.Int64
	dying := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "up %d\n", dyingN.Add(1))
	}))

	hugeLine := "big_metric{l=\"" + strings.Repeat("x", 1<<20) + "\"} 1\n"
	garbage := map[string]string{
		"/hugeline": hugeLine,
		"/badnum":   "# TYPE g gauge\ng 1.2.3\n",
		"/binary":   "\x00\x01\x02{{{",
		"/html":     "<html><body>not metrics</body></html>",
	}
	junk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, garbage[r.URL.Path])
	}))
	defer junk.Close()

	targets := []string{good.URL + "/metrics", dying.URL + "/metrics"}
	for _, p := range []string{"/hugeline", "/badnum", "/binary", "/html"} {
		targets = append(targets, junk.URL+p)
	}
	c := manual(t, Options{Targets: targets, Timeout: 20 * time.Second})
	c.scrapeAll(context.Background(), true)
	dying.Close() // dies mid-run
	c.scrapeAll(context.Background(), true)
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := c.Report(Window{Start: 0, End: time.Now().UnixNano()})
	byURL := map[string]TargetReport{}
	for _, tr := range r.Targets {
		byURL[tr.URL] = tr
	}
	want := map[string]struct {
		ok, failed int
		errPart    string
	}{
		targets[0]: {4, 0, ""},
		targets[1]: {2, 2, "connect"},
		targets[2]: {0, 4, "over the limit"},
		targets[3]: {0, 4, "parse"},
		targets[4]: {0, 4, "parse"},
		targets[5]: {0, 4, "parse"},
	}
	for u, w := range want {
		tr := byURL[u]
		if tr.Scrapes != w.ok || tr.Failures != w.failed {
			t.Errorf("%s: %d ok, %d failed; want %d, %d (first error %q)", u, tr.Scrapes, tr.Failures, w.ok, w.failed, tr.FirstError)
		}
		if !strings.Contains(tr.FirstError, w.errPart) {
			t.Errorf("%s: first error %q, want it to name %q", u, tr.FirstError, w.errPart)
		}
	}
	ws := strings.Join(Warnings(r), "\n")
	for _, u := range targets[1:] {
		if !strings.Contains(ws, u) {
			t.Errorf("no warning names %s:\n%s", u, ws)
		}
	}
	if strings.Contains(ws, targets[0]) {
		t.Errorf("a warning names the good target:\n%s", ws)
	}
	if e := byURL[targets[0]].Engine; e == nil || e.HitRate != 0.7 {
		t.Errorf("good target beside the bad ones: engine %+v, want hit rate 0.7", e)
	}
}

// A target serving 100k series keeps the limit's worth of them, counts the
// rest and says so.
func TestManySeries(t *testing.T) {
	t.Parallel()
	var many strings.Builder
	many.WriteString("# TYPE s gauge\n")
	for i := range 100000 {
		fmt.Fprintf(&many, "s{i=\"%d\"} %d\n", i, i)
	}
	page := many.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, page) }))
	defer srv.Close()
	c := manual(t, Options{Targets: []string{srv.URL}, Timeout: 60 * time.Second, Limits: Limits{MaxSeries: 5000}})
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := c.Report(Window{})
	if tr := r.Targets[0]; tr.Scrapes != 2 || tr.Dropped != 2*95000 {
		t.Errorf("%d scrapes, %d series dropped; want 2 and %d", tr.Scrapes, tr.Dropped, 2*95000)
	}
	if n := len(c.targets[0].s.cols); n != 5000 {
		t.Errorf("%d columns stored, want the limit 5000", n)
	}
	if n := len(r.Targets[0].Families[0].Series); n != 5000 {
		t.Errorf("%d series reported, want 5000", n)
	}
	if ws := strings.Join(Warnings(r), "\n"); !strings.Contains(ws, "190000 series dropped") {
		t.Errorf("warnings %q, want one naming the dropped series", ws)
	}
}

// A target slower than the timeout is a failed scrape each time, and the
// others are not held up.
func TestSlowTarget(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer slow.Close()
	defer close(release)
	good := httptest.NewServer(&fakeVLLM{})
	defer good.Close()
	c := manual(t, Options{Targets: []string{slow.URL, good.URL}, Timeout: 50 * time.Millisecond})
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := c.Report(Window{})
	if s := r.Targets[0]; s.Failures != 2 || s.FirstError != "no answer within 50ms" {
		t.Errorf("slow target: %d failures, first %q; want 2, \"no answer within 50ms\"", s.Failures, s.FirstError)
	}
	if g := r.Targets[1]; g.Scrapes != 2 {
		t.Errorf("good target beside a slow one: %d scrapes, want 2", g.Scrapes)
	}
}

// The periodic loop runs on its own and Stop ends it.
func TestLoop(t *testing.T) {
	t.Parallel()
	fake := &fakeVLLM{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	c := Start(context.Background(), Options{Targets: []string{srv.URL}, Interval: 10 * time.Millisecond, Timeout: 5 * time.Second})
	for fake.n.Load() < 4 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := fake.n.Load()
	time.Sleep(30 * time.Millisecond)
	if m := fake.n.Load(); m != n {
		t.Errorf("%d scrapes after Stop returned", m-n)
	}
	if tr := c.Report(Window{}).Targets[0]; tr.Scrapes != int(n) {
		t.Errorf("%d scrapes stored, server saw %d", tr.Scrapes, n)
	}
}

func TestDefaultTarget(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8000/v1":      "http://127.0.0.1:8000/metrics",
		"127.0.0.1:8000":                "http://127.0.0.1:8000/metrics",
		"https://h.example/v1/chat?x=1": "https://h.example/metrics",
		"unix:///tmp/s":                 "",
	} {
		if got := DefaultTarget(in); got != want {
			t.Errorf("DefaultTarget(%q) = %q, want %q", in, got, want)
		}
	}
}

// A target whose pages take long to parse is scraped less often: the ticks
// before its pause ends are skipped and counted.
func TestThrottle(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&fakeVLLM{})
	defer srv.Close()
	clk := &setClock{t: time.Unix(1000, 0)}
	c := manual(t, Options{Targets: []string{srv.URL}, Now: clk.now})
	tg := c.targets[0]
	tg.mu.Lock()
	tg.nextNS = time.Unix(1001, 0).UnixNano() // as after a 250 ms parse at maxDuty 0.2
	tg.mu.Unlock()
	c.scrapeAll(context.Background(), false) // at 1000: paused
	clk.set(time.Unix(1001, 0))
	c.scrapeAll(context.Background(), false) // at 1001: scraped
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := c.Report(Window{}).Targets[0]
	if r.Throttled != 1 || r.Scrapes != 3 {
		t.Errorf("throttled %d, scrapes %d; want 1 and 3", r.Throttled, r.Scrapes)
	}
	if ws := strings.Join(Warnings(c.Report(Window{})), "\n"); !strings.Contains(ws, "1 scrapes skipped to keep parsing within 20% of a core") {
		t.Errorf("warnings %q", ws)
	}
}

// TestTarget: a --server-metrics URL is taken as --url is: no scheme is
// http, no path is /metrics; the path given is kept. Before, a target
// without a scheme passed the check and failed every scrape.
func TestTarget(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8000/metrics":           "http://127.0.0.1:8000/metrics",
		"127.0.0.1:8000":                   "http://127.0.0.1:8000/metrics",
		"http://127.0.0.1:8000/":           "http://127.0.0.1:8000/metrics",
		"https://h.example/engine/metrics": "https://h.example/engine/metrics",
		"unix:///tmp/s":                    "",
		"http://":                          "",
	} {
		if got := Target(in); got != want {
			t.Errorf("Target(%q) = %q, want %q", in, got, want)
		}
	}
}
