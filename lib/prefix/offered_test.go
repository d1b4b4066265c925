package prefix

import (
	"math"
	"strings"
	"testing"
)

// prompts are hash ids by record, each block full.
type prompts [][]uint64

func (p prompts) BlockSize() int { return 2 }

func (p prompts) AppendHashIDs(dst []uint64, record int) []uint64 { return append(dst, p[record]...) }

func (p prompts) PromptTokens(record int) int64 { return 0 }

// TestOffered: send order, not the slice's; warmup fills the caches
// uncounted; a measured rate is set against the ideal and the LRU, a NaN
// one left out; the box fits its longest line.
func TestOffered(t *testing.T) {
	p := prompts{{1, 2}, {1, 3}, {1, 2, 4}}
	reqs := []Sent{{SentNS: 30, Record: 2, Profiling: true}, {SentNS: 10, Record: 0}, {SentNS: 20, Record: 1, Profiling: true}}
	s := Offered(p, reqs, 2)
	// Record 0 (warmup) holds 1 2. Record 1: block 1 hit (2 of 4 tokens).
	// Record 2: 1 2 hit (4 of 6). Ideal 6 of 10. LRU of 2 blocks: after
	// record 1 (a hit on 1) it holds 1 3, so record 2 hits 1 only: 4 of 10.
	if s.Requests != 2 || s.HashedRequests != 2 || s.PromptTokens != 10 || s.IdealHitTokens != 6 || s.IdealHitRate != 0.6 {
		t.Errorf("got %+v, want 2 requests, 6 of 10 tokens", *s)
	}
	if s.LRU == nil || s.LRU.HitTokens != 4 || s.LRU.HitRate != 0.4 {
		t.Errorf("LRU %+v, want 4 hit tokens", s.LRU)
	}
	s.AddMeasured("server a", 0.3)
	s.AddMeasured("answers", math.NaN())
	if len(s.Measured) != 1 || *s.Measured[0].OfIdeal != 0.5 || math.Abs(*s.Measured[0].OfLRU-0.75) > 1e-9 {
		t.Fatalf("measured %+v, want one at half the ideal", s.Measured)
	}
	var b strings.Builder
	if err := s.WriteBox(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 6 || !strings.Contains(lines[4], "server a: 30.00%, 50% of the reuse the trace offers (75% of the LRU's)") {
		t.Fatalf("box:\n%s", b.String())
	}
	for _, l := range lines[1:] {
		if len([]rune(l)) != len([]rune(lines[0])) {
			t.Errorf("line %q is not as wide as the box", l)
		}
	}
	// above the ideal (a cache warm before the run): said, not left as 2128 %
	s.AddMeasured("server b", 0.9)
	b.Reset()
	s.WriteBox(&b)
	if !strings.Contains(b.String(), "150% of the reuse the trace offers") || !strings.Contains(b.String(), "above the trace's ideal: the cache held these prefixes before the run") {
		t.Errorf("box:\n%s", b.String())
	}
}
