package metrics

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/aiperf/toolkit/lib/result"
)

// genSource yields n records of 16-chunk streams without keeping any: the
// same records on every pass (seeded afresh per open), one record and one
// chunk slice reused. Every sampleEvery records it samples the heap.
type genSource struct {
	n, i        int
	rng         *rand.Rand
	chunks      []int64
	usage       result.Usage
	sampleEvery int
	peak        *uint64
}

func genOpen(n int, peak *uint64) func() (Source, io.Closer, error) {
	return func() (Source, io.Closer, error) {
		return &genSource{n: n, rng: rand.New(rand.NewPCG(42, 43)), chunks: make([]int64, 16), sampleEvery: 50_000, peak: peak}, nopCloser{}, nil
	}
}

func (g *genSource) Next(r *result.Record) error {
	if g.i >= g.n {
		return io.EOF
	}
	if g.peak != nil && g.i%g.sampleEvery == 0 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		*g.peak = max(*g.peak, ms.HeapAlloc)
	}
	i := g.i
	g.i++
	t0 := int64(1_760_000_000_000_000_000) + int64(i)*1_000_000
	ttft := 15*ms + g.rng.Int64N(20*ms)
	at := ttft
	for j := range g.chunks {
		if j > 0 {
			at += 2*ms + g.rng.Int64N(3*ms)
		}
		g.chunks[j] = at
	}
	isl := 200 + g.rng.Int64N(1800)
	g.usage = result.Usage{PromptTokens: isl, CompletionTokens: 16, TotalTokens: isl + 16}
	*r = result.Record{Record: i, IntendedNS: t0, SentNS: t0 + g.rng.Int64N(300_000), Status: 200,
		ChunkOffsetsNS: g.chunks, InputTokens: isl, MaxTokens: 16, OutputTokens: 16, OutputSource: result.SourceUsage, Usage: &g.usage}
	r.FirstTokenNS = r.SentNS + ttft
	r.FirstOutputNS = r.FirstTokenNS
	r.EndNS = r.SentNS + at + 50_000
	if i%97 == 0 {
		r.ChunkOffsetsNS, r.Usage, r.OutputSource = nil, nil, ""
		r.Err = &result.Error{Code: 500, Type: "HTTPError", Message: "Internal Server Error"}
	}
	return nil
}

// peakHeap runs Summarize over n generated records and returns the highest
// heap in use it saw above the heap before the run.
func peakHeap(t testing.TB, n, budget int) (*Summary, uint64) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak uint64
	s, err := Summarize(genOpen(n, &peak), Options{Streaming: true, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	if peak < before.HeapAlloc {
		return s, 0
	}
	return s, peak - before.HeapAlloc
}

// TestSummarizeBoundedMemory: the heap Summarize holds does not grow with
// the number of records past its budget of held values: with a budget of
// 256 Ki values (2 MiB), a million records (15 million chunk gaps) take
// more passes than a tenth as many, but no more than 3 MiB more heap.
func TestSummarizeBoundedMemory(t *testing.T) {
	n := 1_000_000
	if testing.Short() || raceEnabled {
		n = 100_000
	}
	const budget = 1 << 18
	small1, small := peakHeap(t, n/10, budget)
	s, big := peakHeap(t, n, budget)
	t.Logf("peak heap above baseline, budget %d values: %d records %.1f MiB (%d passes), %d records %.1f MiB (%d passes)",
		budget, n/10, float64(small)/(1<<20), small1.Passes, n, float64(big)/(1<<20), s.Passes)
	if big > small+3<<20 || big > 16<<20 {
		t.Errorf("heap grows with the records: %.1f MiB for %d, %.1f MiB for %d", float64(small)/(1<<20), n/10, float64(big)/(1<<20), n)
	}
	if got := s.Requests + s.ErrorRequests; got != int64(n) {
		t.Fatalf("summarized %d records, want %d", got, n)
	}
	// Exact at this size too: request latency and ICL against sorting.
	src, _, _ := genOpen(n, nil)()
	var r result.Record
	var lat, icl []float64
	for src.Next(&r) == nil {
		if r.Err != nil {
			continue
		}
		c := r.ChunkOffsetsNS
		lat = append(lat, float64(c[len(c)-1]))
		for j := 1; j < len(c); j++ {
			icl = append(icl, float64(c[j]-c[j-1]))
		}
	}
	for _, m := range []struct {
		tag  string
		vals []float64
	}{{"request_latency", lat}, {"inter_chunk_latency", icl}} {
		got := s.Get(m.tag)
		sortedVals := sorted(m.vals)
		for i, p := range Percentiles {
			if want := PercentileSorted(sortedVals, p) * 1e-6; got.P[i] != want {
				t.Errorf("%s p%g = %v, want %v", m.tag, p, got.P[i], want)
			}
		}
		if got.Count != int64(len(m.vals)) {
			t.Errorf("%s count %d, want %d", m.tag, got.Count, len(m.vals))
		}
	}
}

// BenchmarkSummarize measures Summarize over a million records: generated in
// memory (the metrics alone) and decoded from a records file (what
// `aiperf-replay report` does), with the peak heap above the baseline.
func BenchmarkSummarize(b *testing.B) {
	const n = 1_000_000
	b.Run("generated", func(b *testing.B) {
		var peakMiB float64
		for i := 0; i < b.N; i++ {
			_, p := peakHeap(b, n, 0)
			peakMiB = max(peakMiB, float64(p)/(1<<20))
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		b.ReportMetric(peakMiB, "peak-heap-MiB")
	})
	b.Run("file", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "records.jsonl")
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		e := result.NewEncoder(f)
		src, _, _ := genOpen(n, nil)()
		var r result.Record
		for src.Next(&r) == nil {
			if err := e.Encode(&r); err != nil {
				b.Fatal(err)
			}
		}
		if err := e.Flush(); err != nil {
			b.Fatal(err)
		}
		st, _ := f.Stat()
		f.Close()
		b.ResetTimer()
		var peak uint64
		var passes int
		for i := 0; i < b.N; i++ {
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			open := OpenFiles(path)
			sampled := func() (Source, io.Closer, error) {
				s, c, err := open()
				return &sampling{Source: s, peak: &peak}, c, err
			}
			s, err := Summarize(sampled, Options{Streaming: true})
			if err != nil {
				b.Fatal(err)
			}
			passes = s.Passes
			peak -= min(peak, before.HeapAlloc)
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		b.ReportMetric(float64(st.Size())*float64(passes)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s-read")
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(passes), "passes")
	})
}

type sampling struct {
	Source
	n    int
	peak *uint64
}

func (s *sampling) Next(r *result.Record) error {
	if s.n%50_000 == 0 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		*s.peak = max(*s.peak, ms.HeapAlloc)
	}
	s.n++
	return s.Source.Next(r)
}
