package metrics

import (
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/result"
)

// embeddingRecords are an embeddings run's records: the first a warmup
// request carrying the run info, then two answers with usage.
func embeddingRecords(endpoint string) []result.Record {
	run := &result.RunInfo{ID: "r", Endpoint: endpoint}
	recs := []result.Record{{Run: run, Phase: result.PhaseWarmup, SentNS: 1, EndNS: 2, ChunkOffsetsNS: []int64{1}}}
	for i := int64(0); i < 2; i++ {
		recs = append(recs, result.Record{SentNS: 1000 + i*1000, EndNS: 1500 + i*1000, ChunkOffsetsNS: []int64{500},
			InputTokens: 3, OutputSource: result.SourceUsage, Usage: &result.Usage{PromptTokens: 3, TotalTokens: 3}})
	}
	return recs
}

// TestEmbeddingsProduceNoTokens: for a run of an endpoint that produces no
// tokens (the run info of its first record says embeddings, even when that
// record is a warmup one), the summary, its time slices and the
// per-request export leave out every metric aiperf flags
// PRODUCES_TOKENS_ONLY, and keep the input's; a chat run keeps them.
func TestEmbeddingsProduceNoTokens(t *testing.T) {
	gone := []string{"output_sequence_length", "output_token_throughput", "total_osl", "total_token_throughput",
		"usage_completion_tokens", "usage_total_tokens", "total_usage_completion_tokens", "total_usage_total_tokens", "usage_discrepancy_count"}
	kept := []string{"input_sequence_length", "total_isl", "usage_prompt_tokens", "total_usage_prompt_tokens", "request_latency", "request_throughput"}
	for _, endpoint := range []string{"embeddings", "chat"} {
		open := FromRecords(embeddingRecords(endpoint))
		s, err := Summarize(open, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sl, err := SummarizeSlices(open, Options{}, time.Second)
		if err != nil || len(sl.Slices) == 0 {
			t.Fatalf("slices: %v, %d windows", err, len(sl.Slices))
		}
		for _, tag := range gone {
			has := s.Get(tag) != nil
			if endpoint == "embeddings" && has {
				t.Errorf("embeddings: %s is in the summary", tag)
			}
			if endpoint == "embeddings" && sl.Slices[0].Summary.Get(tag) != nil {
				t.Errorf("embeddings: %s is in the time slice", tag)
			}
		}
		for _, tag := range kept {
			if s.Get(tag) == nil {
				t.Errorf("%s: %s is missing", endpoint, tag)
			}
		}
		if endpoint == "chat" && s.Get("output_sequence_length") == nil {
			t.Errorf("chat: output_sequence_length is missing")
		}
	}
}
