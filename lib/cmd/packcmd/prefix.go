package packcmd

import (
	"fmt"
	"io"

	"github.com/aiperf/toolkit/lib/prefix"
	"github.com/aiperf/toolkit/lib/store"
)

// prefixStat is what stat says of the prefix reuse a store's trace offers
// (from its hash_ids), in record order: the trace's order.
type prefixStat struct {
	BlockSize     int     `json:"block_size"`
	HashedRecords int64   `json:"hashed_records"`
	PromptTokens  int64   `json:"prompt_tokens"`
	IdealHit      int64   `json:"ideal_hit_tokens"`
	IdealRate     float64 `json:"ideal_hit_rate"`
	BlockMean     float64 `json:"block_mean_hit_rate"`
	Blocks        int     `json:"distinct_blocks"`
}

// storePrefix computes the ideal prefix hit rate of every record of r, or
// nil for a store without hash_ids.
func storePrefix(r *store.Reader) *prefixStat {
	if r.BlockSize() == 0 {
		return nil
	}
	c := prefix.NewIdeal(r.BlockSize())
	var ids []uint64
	for i := range r.Len() {
		ids = r.AppendHashIDs(ids[:0], i)
		c.Add(int64(r.Entry(i).InputTokens), ids)
	}
	s := c.Stats()
	return &prefixStat{
		BlockSize: r.BlockSize(), HashedRecords: s.Hashed, PromptTokens: s.Tokens,
		IdealHit: s.HitTokens, IdealRate: s.Rate(), BlockMean: s.BlockMean(), Blocks: c.Blocks(),
	}
}

// print writes stat's lines for p.
func (p *prefixStat) print(w io.Writer, records int) {
	fmt.Fprintf(w, "hash_ids:       %d of %d records, %d-token blocks, %d distinct\n", p.HashedRecords, records, p.BlockSize, p.Blocks)
	fmt.Fprintf(w, "prefix reuse:   ideal hit rate %.2f%% (%d of %d prompt tokens an infinite prefix cache serves, in record order)\n",
		100*p.IdealRate, p.IdealHit, p.PromptTokens)
	fmt.Fprintf(w, "                analyze-trace's cache_hit_rate %.2f%% (mean over records of the share of their blocks served)\n", 100*p.BlockMean)
}
