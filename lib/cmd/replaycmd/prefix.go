package replaycmd

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/aiperf/toolkit/lib/prefix"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/servermetrics"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/urfave/cli/v2"
)

// kvCapacityFlag is --kv-capacity-blocks: the LRU simulation beside the
// trace's ideal prefix hit rate.
func kvCapacityFlag(dst *int) cli.Flag {
	return &cli.IntFlag{Name: "kv-capacity-blocks", Usage: "beside the trace's ideal prefix-cache hit rate, give the hit rate of an LRU cache of `N` of the trace's KV blocks (a store packed from hash_ids)", Destination: dst}
}

// prefixSummary is the "prefix_cache" member of profile_export_aiperf.json:
// the prefix reuse the trace offers for the requests the run sent, from the
// store's hash_ids. The requests are taken in the order they were sent,
// warmup included (it warms a server's cache too), and counted when they
// are profiling requests. Prompt tokens are the stored turn's (a
// conversation's history that replay splices in is not in the trace's
// hash_ids).
type prefixSummary struct {
	BlockSize      int     `json:"block_size"`
	Requests       int64   `json:"requests"`
	HashedRequests int64   `json:"hashed_requests"`
	PromptTokens   int64   `json:"prompt_tokens"`
	IdealHitTokens int64   `json:"ideal_hit_tokens"`
	IdealHitRate   float64 `json:"ideal_hit_rate"`
	// LRU is the simulation of --kv-capacity-blocks; nil without it.
	LRU *lruSummary `json:"lru,omitempty"`
	// Measured are the hit rates the run measured (the server's counters,
	// the answers' cached_tokens), each set against the ideal.
	Measured []measuredHit `json:"measured,omitempty"`
}

// measuredHit is a measured prefix-cache hit rate and its share of the
// reuse the trace offers: OfIdeal = HitRate / IdealHitRate (OfLRU the
// same against the LRU simulation, with --kv-capacity-blocks).
type measuredHit struct {
	Source  string   `json:"source"`
	HitRate float64  `json:"hit_rate"`
	OfIdeal *float64 `json:"of_ideal,omitempty"`
	OfLRU   *float64 `json:"of_lru,omitempty"`
}

// lruSummary is the hit figures of an LRU cache of CapacityBlocks blocks.
type lruSummary struct {
	CapacityBlocks int     `json:"capacity_blocks"`
	HitTokens      int64   `json:"hit_tokens"`
	HitRate        float64 `json:"hit_rate"`
}

// sentRequest is one request of the run, for the prefix figures.
type sentRequest struct {
	sent      int64
	record    int
	profiling bool
}

// tracePrefix computes the prefix figures of the run recorded in files
// against store st, or nil when the store has no hash_ids. capacity > 0
// adds the LRU simulation of that many blocks.
func tracePrefix(st *store.Reader, files []string, capacity int) (*prefixSummary, error) {
	if st.BlockSize() == 0 {
		return nil, nil
	}
	src, c, err := openRecords(files)()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var reqs []sentRequest
	var rec result.Record
	for {
		err := src.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if rec.Record < 0 || rec.Record >= st.Len() {
			continue // not this store's (report refuses such runs)
		}
		reqs = append(reqs, sentRequest{sent: rec.SentNS, record: rec.Record, profiling: !rec.Warmup()})
	}
	slices.SortStableFunc(reqs, func(a, b sentRequest) int { return cmp.Compare(a.sent, b.sent) })

	b := st.BlockSize()
	ideal := prefix.NewIdeal(b)
	var lru *prefix.LRU
	if capacity > 0 {
		lru = prefix.NewLRU(capacity, b)
	}
	ps := &prefixSummary{BlockSize: b}
	if lru != nil {
		ps.LRU = &lruSummary{CapacityBlocks: capacity}
	}
	var ids []uint64
	for _, r := range reqs {
		ids = st.AppendHashIDs(ids[:0], r.record)
		tokens := int64(st.Entry(r.record).InputTokens)
		if tokens == 0 {
			tokens = int64(len(ids) * b) // unknown length: its blocks, full
		}
		hit := ideal.Add(tokens, ids)
		var lruHit int64
		if lru != nil {
			lruHit = lru.Add(tokens, ids)
		}
		if !r.profiling {
			continue
		}
		ps.Requests++
		if len(ids) > 0 {
			ps.HashedRequests++
		}
		ps.PromptTokens += tokens
		ps.IdealHitTokens += hit
		if lru != nil {
			ps.LRU.HitTokens += lruHit
		}
	}
	if ps.PromptTokens > 0 {
		ps.IdealHitRate = float64(ps.IdealHitTokens) / float64(ps.PromptTokens)
		if lru != nil {
			ps.LRU.HitRate = float64(ps.LRU.HitTokens) / float64(ps.PromptTokens)
		}
	}
	return ps, nil
}

// measure sets the run's measured hit rates against the trace's: each
// scraped engine's (Δhits/Δqueries over the profiling window) and the
// answers' cached_tokens over their prompt tokens (hitRate, NaN when no
// answer reported it).
func (ps *prefixSummary) measure(rep *servermetrics.Report, hitRate float64) {
	share := func(rate, of float64) *float64 {
		if of <= 0 || math.IsNaN(rate) {
			return nil
		}
		v := rate / of
		return &v
	}
	add := func(source string, rate float64) {
		m := measuredHit{Source: source, HitRate: rate, OfIdeal: share(rate, ps.IdealHitRate)}
		if ps.LRU != nil {
			m.OfLRU = share(rate, ps.LRU.HitRate)
		}
		ps.Measured = append(ps.Measured, m)
	}
	if rep != nil {
		for _, t := range rep.Targets {
			if e := t.Engine; e != nil && !math.IsNaN(e.HitRate) {
				add("server "+t.URL, e.HitRate)
			}
		}
	}
	if !math.IsNaN(hitRate) {
		add("answers' cached_tokens", hitRate)
	}
}

// section is ps as a member of the summary file.
func (ps *prefixSummary) section() (json.RawMessage, error) {
	return json.Marshal(ps)
}

// writeBox draws the figures in a short rounded box.
func (ps *prefixSummary) writeBox(w io.Writer) {
	lines := []string{fmt.Sprintf("ideal hit rate  %6.2f%%  %s of %s prompt tokens (an infinite cache)",
		100*ps.IdealHitRate, groupInt(ps.IdealHitTokens), groupInt(ps.PromptTokens))}
	if l := ps.LRU; l != nil {
		lines = append(lines, fmt.Sprintf("LRU hit rate    %6.2f%%  %s tokens (a cache of %s blocks)",
			100*l.HitRate, groupInt(l.HitTokens), groupInt(int64(l.CapacityBlocks))))
	}
	lines = append(lines, fmt.Sprintf("%s of %s requests with hash_ids, %d-token blocks, in send order",
		groupInt(ps.HashedRequests), groupInt(ps.Requests), ps.BlockSize))
	for _, m := range ps.Measured {
		l := fmt.Sprintf("%s: %.2f%%", m.Source, 100*m.HitRate)
		if m.OfIdeal != nil {
			l += fmt.Sprintf(", %.0f%% of the reuse the trace offers", 100**m.OfIdeal)
		}
		if m.OfLRU != nil {
			l += fmt.Sprintf(" (%.0f%% of the LRU's)", 100**m.OfLRU)
		}
		lines = append(lines, l)
	}
	title := " Prefix reuse the trace offers "
	width := len(title) + 4
	for _, l := range lines {
		width = max(width, len(l)+4)
	}
	left := (width - len(title)) / 2
	fmt.Fprintf(w, "╭%s%s%s╮\n", strings.Repeat("─", left), title, strings.Repeat("─", width-left-len(title)))
	for _, l := range lines {
		fmt.Fprintf(w, "│  %-*s  │\n", width-4, l)
	}
	fmt.Fprintf(w, "╰%s╯\n", strings.Repeat("─", width))
}

// groupInt writes n with thousands separators.
func groupInt(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
