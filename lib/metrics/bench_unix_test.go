//go:build unix

package metrics

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/result"
)

// The two tests below serve scripts/bench/metrics.sh and skip otherwise:
// one writes the benchmark's records file, the other times one Summarize
// of it and prints the figures the script collects.

func TestBenchWriteRecords(t *testing.T) {
	path := os.Getenv("AIPERF_BENCH_WRITE")
	if path == "" {
		t.Skip("AIPERF_BENCH_WRITE not set")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	e := result.NewEncoder(f)
	src, _, _ := genOpen(1_000_000, nil)()
	var r result.Record
	for src.Next(&r) == nil {
		if err := e.Encode(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestBenchSummarizeFile(t *testing.T) {
	path := os.Getenv("AIPERF_BENCH_RECORDS")
	if path == "" {
		t.Skip("AIPERF_BENCH_RECORDS not set")
	}
	var peak uint64
	open := OpenFiles(path)
	sampled := func() (Source, io.Closer, error) {
		s, c, err := open()
		return &sampling{Source: s, peak: &peak}, c, err
	}
	t0 := time.Now()
	s, err := Summarize(sampled, Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	sec := time.Since(t0).Seconds()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	fmt.Printf("seconds=%.3f cpu_seconds=%.3f records=%d passes=%d peak_heap_mb=%.1f max_rss_mb=%.1f p99_request_latency_ms=%.6f\n",
		sec, cpu, s.Requests+s.ErrorRequests, s.Passes, float64(peak)/(1<<20), float64(ru.Maxrss)/1024, s.Get("request_latency").P[8])
}
