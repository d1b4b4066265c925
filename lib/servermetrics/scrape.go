package servermetrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf/toolkit/lib/internal/baseurl"
	"github.com/aiperf/toolkit/lib/internal/redact"
)

// Options configure a Collector.
type Options struct {
	// Targets are the /metrics URLs scraped, in the order given.
	Targets []string
	// Interval between scrapes (default 1 s).
	Interval time.Duration
	// Timeout of one scrape (default the interval, but at least 1 s and at
	// most 5 s): a slower answer is a failed scrape, a gap in the series.
	// A scrape outlasting the interval is no harm (the ticks it overlaps
	// are skipped), and the scrapes before the first send and after the
	// last answer, which bound every delta, must not fail on a busy
	// machine for want of a few milliseconds.
	Timeout time.Duration
	// Limits bound each scrape (zero fields: DefaultLimits').
	Limits Limits
	// JSONL, when set, receives a line per scrape of every target (see
	// WriteLine), in the order they complete. Write errors stop the
	// writing and are reported by Stop.
	JSONL io.Writer
	// Client fetches the pages (default: a client of its own, so that
	// scraping never shares a connection with the load).
	Client *http.Client
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Discard keeps no series in memory: the JSONL stream is the only
	// record (the scrape agent's way; LoadJSONL rebuilds the series).
	Discard bool
}

func (o *Options) defaults() {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = min(max(o.Interval, time.Second), 5*time.Second)
	}
	d := DefaultLimits
	if o.Limits.MaxBody <= 0 {
		o.Limits.MaxBody = d.MaxBody
	}
	if o.Limits.MaxLine <= 0 {
		o.Limits.MaxLine = d.MaxLine
	}
	if o.Limits.MaxSeries <= 0 {
		o.Limits.MaxSeries = d.MaxSeries
	}
	if o.Limits.MaxSamples <= 0 {
		o.Limits.MaxSamples = d.MaxSamples
	}
	if o.Client == nil {
		o.Client = &http.Client{Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConnsPerHost: 1,
			DisableCompression:  false,
			IdleConnTimeout:     30 * time.Second,
		}}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Collector scrapes its targets on a goroutine of its own. Its methods are
// safe for concurrent use.
type Collector struct {
	o       Options
	targets []*target
	stop    chan struct{}
	done    chan struct{}

	wmu  sync.Mutex // JSONL
	werr error
	line []byte

	// parseMu makes the targets' parses take turns: the parser holds a
	// whole page's samples (see Limits.MaxSamples), and one page at a time
	// bounds what the scrapes of many targets hold together.
	parseMu sync.Mutex
}

// target is one scraped URL and what it served.
type target struct {
	url   string      // as written out: without credentials (redact.URL)
	fetch string      // as given: what is fetched
	busy  atomic.Bool // a scrape is in flight: a tick that finds it so is skipped
	body  []byte      // the last page's buffer, reused by the next (busy guards it)

	mu        sync.Mutex
	s         *series
	fetches   int   // attempts
	failures  int   // failed attempts
	skipped   int   // ticks skipped while a slow scrape was in flight
	throttled int   // ticks skipped to keep parsing within maxDuty
	nextNS    int64 // no periodic scrape before this (see maxDuty)
	workNS    int64 // the last parse and store, for the warning
	latencyNS int64 // sum over successful fetches
	firstNS   int64 // first attempt
	lastNS    int64 // last attempt
	errs      map[string]int
	firstErr  string
	dropped   int                // series past the limit, summed over scrapes
	known     map[string]famInfo // what its JSONL lines said of its families (Collector.wmu)
	said      ticks              // the skipped and throttled ticks its lines counted (Collector.wmu)
}

// Start scrapes every target once (before it returns: call it before the
// first send), then every interval until Stop. A failed scrape is counted
// and leaves a gap; it never stops the collector.
func Start(ctx context.Context, o Options) *Collector {
	o.defaults()
	c := &Collector{o: o, stop: make(chan struct{}), done: make(chan struct{})}
	for _, u := range o.Targets {
		c.targets = append(c.targets, newTarget(u))
	}
	c.scrapeAll(ctx, true)
	go c.loop(ctx)
	return c
}

func (c *Collector) loop(ctx context.Context) {
	defer close(c.done)
	t := time.NewTicker(c.o.Interval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			c.scrapeAll(ctx, false)
		}
	}
}

// Stop ends the periodic scrapes, waits for those in flight, and scrapes
// every target a last time (call it after the last answer). It returns the
// first error writing the JSONL stream.
func (c *Collector) Stop(ctx context.Context) error {
	close(c.stop)
	<-c.done
	c.scrapeAll(context.WithoutCancel(ctx), true)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.werr
}

// scrapeAll scrapes the targets concurrently; wait makes it return when
// they are done (and makes a target still busy wait for its turn).
func (c *Collector) scrapeAll(ctx context.Context, wait bool) {
	var wg sync.WaitGroup
	for _, t := range c.targets {
		if wait {
			for !t.busy.CompareAndSwap(false, true) {
				time.Sleep(time.Millisecond)
			}
		} else if !t.busy.CompareAndSwap(false, true) {
			t.mu.Lock()
			t.skipped++
			t.mu.Unlock()
			continue
		} else {
			t.mu.Lock()
			throttle := c.o.Now().UnixNano() < t.nextNS
			if throttle {
				t.throttled++
			}
			t.mu.Unlock()
			if throttle {
				t.busy.Store(false)
				continue
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer t.busy.Store(false)
			c.scrapeOne(ctx, t)
		}()
	}
	if wait {
		wg.Wait()
	}
}

// maxDuty bounds the share of one core that parsing and storing one
// target's pages may take: after a scrape whose parse and store took w, the
// periodic scrapes of that target pause for (1/maxDuty - 1)·w. Go cannot
// lower a goroutine's priority, so this is what keeps a huge page from
// taking the CPU (and the garbage collector's time) the sends need.
const maxDuty = 0.2

func (c *Collector) scrapeOne(ctx context.Context, t *target) {
	start := c.o.Now()
	body, ctype, err := fetch(ctx, c.o.Client, t.fetch, c.o.Timeout, c.o.Limits, t.body)
	t.body = body[:0]
	lat := c.o.Now().Sub(start).Nanoseconds()
	ts := start.UnixNano()
	var p *Page
	work := start.Add(time.Duration(lat)) // the parse's start, once its turn came
	if err == nil {
		c.parseMu.Lock()
		work = c.o.Now()
		p, err = Parse(body, ctype, c.o.Limits)
		c.parseMu.Unlock()
	}
	t.mu.Lock()
	t.fetches++
	if t.firstNS == 0 {
		t.firstNS = ts
	}
	t.lastNS = ts
	if err != nil {
		t.failures++
		msg := err.Error()
		if t.firstErr == "" {
			t.firstErr = msg
		}
		if len(t.errs) < 20 {
			t.errs[msg]++
		}
	} else {
		t.latencyNS += lat
		t.dropped += p.Dropped
		if !c.o.Discard {
			t.dropped += t.s.add(ts, lat, p, c.o.Limits.MaxSeries)
		}
	}
	end := c.o.Now()
	w := end.Sub(work).Nanoseconds() // parse and store
	t.workNS = w
	t.nextNS = end.UnixNano() + int64(float64(w)*(1/maxDuty-1))
	t.mu.Unlock()
	if c.o.JSONL != nil {
		c.writeLine(t, ts, lat, p, err)
	}
}

func newTarget(u string) *target {
	return &target{url: redact.URL(u), fetch: u, s: newSeries(), errs: map[string]int{}, known: map[string]famInfo{}}
}

func (c *Collector) writeLine(t *target, ts, lat int64, p *Page, err error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.werr != nil {
		return
	}
	t.mu.Lock()
	tk := ticks{t.skipped - t.said.skipped, t.throttled - t.said.throttled}
	t.said = ticks{t.skipped, t.throttled}
	t.mu.Unlock()
	c.line = appendLine(c.line[:0], t.url, ts, lat, p, err, t.known, tk)
	_, c.werr = c.o.JSONL.Write(c.line)
}

// fetch GETs one page: its body (read into buf when it has room) and
// Content-Type.
func fetch(ctx context.Context, client *http.Client, u string, timeout time.Duration, lim Limits, buf []byte) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", err
	}
	// Text first: every engine serves it; OpenMetrics 1.0 next.
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1")
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, "", fmt.Errorf("no answer within %v", timeout)
		}
		return nil, "", shortErr(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, "", fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	body, err := readBody(resp.Body, buf[:0], resp.ContentLength, lim.MaxBody+1)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return nil, "", fmt.Errorf("body not complete within %v", timeout)
		}
		return nil, "", shortErr(err)
	}
	if int64(len(body)) > lim.MaxBody {
		return nil, "", fmt.Errorf("body larger than the limit of %d bytes", lim.MaxBody)
	}
	return body, resp.Header.Get("Content-Type"), nil
}

// readBody reads r into buf, at most most bytes: into one buffer of the
// declared length when there is one, else one that doubles, once a read
// into a small probe says more is coming (io.ReadAll's growth by a
// quarter allocated about five times a big page).
func readBody(r io.Reader, buf []byte, declared, most int64) ([]byte, error) {
	m := int(most)
	if declared > int64(cap(buf)) && declared < most {
		buf = make([]byte, 0, declared+1) // +1: the read that finds the end
	}
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= m {
				return buf, nil
			}
			var probe [512]byte
			n, err := r.Read(probe[:])
			if n == 0 {
				if err == io.EOF {
					return buf, nil
				}
				if err != nil {
					return buf, err
				}
				continue
			}
			nb := make([]byte, len(buf), min(max(2*cap(buf), 64<<10), m))
			copy(nb, buf)
			buf = append(nb, probe[:min(n, m-len(nb))]...)
			if err == io.EOF {
				return buf, nil
			}
			if err != nil {
				return buf, err
			}
			continue
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), m)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// shortErr drops the URL net/http puts in front of its errors (the
// warnings name the target already).
func shortErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Probe reports whether u answers a GET within timeout with a page in the
// Prometheus text or OpenMetrics format holding at least one family.
func Probe(ctx context.Context, client *http.Client, u string, timeout time.Duration) bool {
	if client == nil {
		o := Options{}
		o.defaults()
		client = o.Client
	}
	body, ctype, err := fetch(ctx, client, u, timeout, DefaultLimits, nil)
	if err != nil {
		return false
	}
	p, err := Parse(body, ctype, DefaultLimits)
	return err == nil && len(p.Families) > 0
}

// Target takes a --server-metrics URL as --url is taken: http when it
// names no scheme ("127.0.0.1:8000/metrics"), and /metrics when it names
// no path. "" when it is not an http(s) URL with a host.
func Target(s string) string {
	u, err := baseurl.Parse(s)
	if err != nil {
		return ""
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	return u.String()
}

// DefaultTarget is the /metrics URL of the server at base (its origin +
// /metrics), or "" when base is not an http(s) URL.
func DefaultTarget(base string) string {
	u, err := baseurl.Parse(base)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + "/metrics"
}
