package metrics

import (
	"testing"

	"github.com/aiperf/toolkit/lib/result"
)

// The run's prefix-cache hit rate from the answers: Σ cached_tokens over Σ
// prompt_tokens of the answers that report cached_tokens; an answer
// without it counts in neither.
func TestCachedTokensHitRate(t *testing.T) {
	rec := func(i int, prompt, cached int64, has bool) result.Record {
		return result.Record{Record: i, SentNS: int64(1000 * (i + 1)), FirstTokenNS: int64(1000*(i+1) + 10), EndNS: int64(1000*(i+1) + 100),
			ChunkOffsetsNS: []int64{10, 100}, Status: 200, Streamed: true, InputTokens: prompt, OutputTokens: 2, OutputSource: result.SourceUsage,
			Usage: &result.Usage{PromptTokens: prompt, CompletionTokens: 2, TotalTokens: prompt + 2, CachedTokens: cached, HasCached: has}}
	}
	recs := []result.Record{rec(0, 1000, 0, true), rec(1, 1000, 512, true), rec(2, 2000, 1536, true), rec(3, 5000, 0, false)}
	s, err := Summarize(FromRecords(recs), Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Get("cached_tokens"); r == nil || r.Count != 3 || r.Sum != 2048 || r.Max != 1536 {
		t.Errorf("cached_tokens %+v, want 3 values summing to 2048, max 1536", r)
	}
	if r := s.Get("total_cached_tokens"); r == nil || r.Avg != 2048 {
		t.Errorf("total_cached_tokens %+v, want 2048", r)
	}
	if r := s.Get("prefix_cache_hit_rate"); r == nil || r.Avg != 100*2048.0/4000 {
		t.Errorf("prefix_cache_hit_rate %+v, want %v", r, 100*2048.0/4000)
	}
	if s.Get("cached_prompt_tokens") != nil {
		t.Errorf("the internal denominator is exported")
	}
	none, err := Summarize(FromRecords(recs[3:]), Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	if none.Get("prefix_cache_hit_rate") != nil || none.Get("cached_tokens") != nil {
		t.Errorf("a run without cached_tokens reports cache figures")
	}
}
