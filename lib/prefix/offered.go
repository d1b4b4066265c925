package prefix

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Prompts are a trace's prompts by record: their block ids and prompt
// tokens (0 when unknown). A *store.Reader adapted gives them.
type Prompts interface {
	BlockSize() int
	AppendHashIDs(dst []uint64, record int) []uint64
	PromptTokens(record int) int64
}

// Sent is a request a run sent: when, which record, and whether it was a
// profiling request (not warmup).
type Sent struct {
	SentNS    int64
	Record    int
	Profiling bool
}

// Summary is the prefix reuse the trace offers for the requests a run
// sent (the "prefix_cache" member of profile_export_aiperf.json). The
// requests are taken in the order they were sent, warmup included (it
// warms a server's cache too), and counted when they are profiling
// requests. Prompt tokens are the stored turn's (a conversation's history
// that replay splices in is not in the trace's hash_ids).
type Summary struct {
	BlockSize      int     `json:"block_size"`
	Requests       int64   `json:"requests"`
	HashedRequests int64   `json:"hashed_requests"`
	PromptTokens   int64   `json:"prompt_tokens"`
	IdealHitTokens int64   `json:"ideal_hit_tokens"`
	IdealHitRate   float64 `json:"ideal_hit_rate"`
	// LRU is the simulation of an LRU cache of a given capacity; nil
	// without one.
	LRU *LRUSummary `json:"lru,omitempty"`
	// Measured are the hit rates the run measured (the server's counters,
	// the answers' cached_tokens), each set against the ideal.
	Measured []Measured `json:"measured,omitempty"`
}

// Measured is a measured prefix-cache hit rate and its share of the reuse
// the trace offers: OfIdeal = HitRate / IdealHitRate (OfLRU the same
// against the LRU simulation).
type Measured struct {
	Source  string   `json:"source"`
	HitRate float64  `json:"hit_rate"`
	OfIdeal *float64 `json:"of_ideal,omitempty"`
	OfLRU   *float64 `json:"of_lru,omitempty"`
}

// LRUSummary is the hit figures of an LRU cache of CapacityBlocks blocks.
type LRUSummary struct {
	CapacityBlocks int     `json:"capacity_blocks"`
	HitTokens      int64   `json:"hit_tokens"`
	HitRate        float64 `json:"hit_rate"`
}

// Offered computes the prefix reuse p offers the requests reqs, taken in
// send order (reqs is sorted so, stably). capacity > 0 adds the LRU
// simulation of that many blocks. A request of unknown prompt length counts
// its blocks, full.
func Offered(p Prompts, reqs []Sent, capacity int) *Summary {
	slices.SortStableFunc(reqs, func(a, b Sent) int { return cmp.Compare(a.SentNS, b.SentNS) })
	b := p.BlockSize()
	ideal := NewIdeal(b)
	var lru *LRU
	s := &Summary{BlockSize: b}
	if capacity > 0 {
		lru = NewLRU(capacity, b)
		s.LRU = &LRUSummary{CapacityBlocks: capacity}
	}
	var ids []uint64
	for _, r := range reqs {
		ids = p.AppendHashIDs(ids[:0], r.Record)
		tokens := p.PromptTokens(r.Record)
		if tokens == 0 {
			tokens = int64(len(ids) * b)
		}
		hit := ideal.Add(tokens, ids)
		var lruHit int64
		if lru != nil {
			lruHit = lru.Add(tokens, ids)
		}
		if !r.Profiling {
			continue
		}
		s.Requests++
		if len(ids) > 0 {
			s.HashedRequests++
		}
		s.PromptTokens += tokens
		s.IdealHitTokens += hit
		if lru != nil {
			s.LRU.HitTokens += lruHit
		}
	}
	if s.PromptTokens > 0 {
		s.IdealHitRate = float64(s.IdealHitTokens) / float64(s.PromptTokens)
		if lru != nil {
			s.LRU.HitRate = float64(s.LRU.HitTokens) / float64(s.PromptTokens)
		}
	}
	return s
}

// AddMeasured sets a measured hit rate (e.g. a server's
// Δhits/Δqueries) against the trace's; a NaN rate (none measured) is left
// out.
func (s *Summary) AddMeasured(source string, rate float64) {
	if math.IsNaN(rate) {
		return
	}
	share := func(of float64) *float64 {
		if of <= 0 {
			return nil
		}
		v := rate / of
		return &v
	}
	m := Measured{Source: source, HitRate: rate, OfIdeal: share(s.IdealHitRate)}
	if s.LRU != nil {
		m.OfLRU = share(s.LRU.HitRate)
	}
	s.Measured = append(s.Measured, m)
}

// WriteBox draws the figures in a short rounded box.
func (s *Summary) WriteBox(w io.Writer) error {
	lines := []string{fmt.Sprintf("ideal hit rate  %6.2f%%  %s of %s prompt tokens (an infinite cache)",
		100*s.IdealHitRate, groupInt(s.IdealHitTokens), groupInt(s.PromptTokens))}
	if l := s.LRU; l != nil {
		lines = append(lines, fmt.Sprintf("LRU hit rate    %6.2f%%  %s tokens (a cache of %s blocks)",
			100*l.HitRate, groupInt(l.HitTokens), groupInt(int64(l.CapacityBlocks))))
	}
	lines = append(lines, fmt.Sprintf("%s of %s requests with hash_ids, %d-token blocks, in send order",
		groupInt(s.HashedRequests), groupInt(s.Requests), s.BlockSize))
	for _, m := range s.Measured {
		l := fmt.Sprintf("%s: %.2f%%", m.Source, 100*m.HitRate)
		if m.OfIdeal != nil {
			l += fmt.Sprintf(", %.0f%% of the reuse the trace offers", 100**m.OfIdeal)
		}
		if m.OfLRU != nil {
			l += fmt.Sprintf(" (%.0f%% of the LRU's)", 100**m.OfLRU)
		}
		lines = append(lines, l)
		if m.OfIdeal != nil && *m.OfIdeal > 1 {
			// the ideal starts from an empty cache and counts only these requests
			lines = append(lines, "  above the trace's ideal: the cache held these prefixes before the run",
				"  (an earlier run, warmup requests) or serves requests of others")
		}
	}
	title := " Prefix reuse the trace offers "
	width := len(title) + 4
	for _, l := range lines {
		width = max(width, len(l)+4)
	}
	left := (width - len(title)) / 2
	var b strings.Builder
	fmt.Fprintf(&b, "╭%s%s%s╮\n", strings.Repeat("─", left), title, strings.Repeat("─", width-left-len(title)))
	for _, l := range lines {
		fmt.Fprintf(&b, "│  %-*s  │\n", width-4, l)
	}
	fmt.Fprintf(&b, "╰%s╯\n", strings.Repeat("─", width))
	_, err := io.WriteString(w, b.String())
	return err
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
