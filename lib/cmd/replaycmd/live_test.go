package replaycmd

import (
	"bytes"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// On a terminal the live line shows sent, done, errors, in flight, the
// rate and the lateness, redrawn in place, and is cleared at the end.
func TestLiveLine(t *testing.T) {
	var out syncBuffer
	l, err := newLive(&out, true, metrics.Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	l.every = 20 * time.Millisecond
	l.start()
	for i := range 5 {
		l.counters.Sent.Add(1)
		rec := result.Record{Phase: result.PhaseProfiling, IntendedNS: 1e9, SentNS: 1e9 + 2e6, FirstByteNS: 1.01e9, FirstTokenNS: 1.014e9,
			EndNS: 1.05e9, Status: 200, OutputTokens: 4, ChunkOffsetsNS: []int64{12e6, 20e6, 30e6, 48e6}}
		if i == 4 {
			rec.Err = &result.Error{Code: 500, Type: "HTTPError", Message: "x"}
			l.counters.Errors.Add(1)
		}
		l.observe(&rec)
		l.counters.Done.Add(1)
	}
	l.counters.Sent.Add(1)
	l.counters.InFlight.Store(1)
	deadline := time.Now().Add(60 * time.Second) // redrawn every 20 ms: only a line that never comes waits this long
	re := regexp.MustCompile(`\r\x1b\[Ksent 6  done 5  errors 1  in flight 1  [0-9]+ req/s  lateness p99 2\.00 ms  TTFT p50 12\.0 ms`)
	for !re.MatchString(out.String()) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	l.stop()
	s := out.String()
	if !re.MatchString(s) {
		t.Fatalf("live line %q", s)
	}
	if !bytes.HasSuffix([]byte(s), []byte("\r\x1b[K")) {
		t.Errorf("the line is not cleared at the end: %q", s)
	}

	// Not a terminal: nothing at all.
	var quiet syncBuffer
	q, _ := newLive(&quiet, false, metrics.Options{})
	q.start()
	q.observe(&result.Record{})
	q.stop()
	if quiet.String() != "" {
		t.Errorf("off the terminal: %q", quiet.String())
	}
}
