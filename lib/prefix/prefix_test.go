package prefix

import (
	"math/rand/v2"
	"testing"
)

type req struct {
	tokens int64
	ids    []uint64
}

// seq is worked by hand in the comments, with blocks of 4 tokens.
var seq = []req{
	{10, []uint64{1, 2, 3}}, // blocks of 4, 4, 2 tokens; all new: 0
	{10, []uint64{1, 2, 4}}, // 1, 2 seen, 4 new: 8
	{6, []uint64{1, 5}},     // 1 seen: 4
	{10, []uint64{1, 2, 3}}, // all seen, the partial last block too: 4+4+2 = 10
	{5, nil},                // no ids: 0 of 5
	{8, []uint64{9, 1}},     // 9 new: nothing after it counts: 0
}

func TestIdeal(t *testing.T) {
	c := NewIdeal(4)
	want := []int64{0, 8, 4, 10, 0, 0}
	for i, r := range seq {
		if got := c.Add(r.tokens, r.ids); got != want[i] {
			t.Errorf("request %d: got %d hit tokens, want %d", i, got, want[i])
		}
	}
	s := c.Stats()
	if s.Tokens != 49 || s.HitTokens != 22 || s.Requests != 6 || s.Hashed != 5 {
		t.Errorf("stats: got %+v, want 49 tokens, 22 hit, 6 requests, 5 hashed", s)
	}
	if got, want := s.Rate(), 22.0/49; got != want {
		t.Errorf("Rate: got %v, want %v", got, want)
	}
	// analyze-trace's figure: (0 + 2/3 + 1/2 + 1 + 0) / 5.
	if got, want := s.BlockMean(), (2.0/3+1.0/2+1)/5; got-want > 1e-12 || want-got > 1e-12 {
		t.Errorf("BlockMean: got %v, want %v", got, want)
	}
	if got := c.Blocks(); got != 6 {
		t.Errorf("Blocks: got %d, want 6", got)
	}
}

func TestLRU(t *testing.T) {
	// Capacity 3, most recent first after each request:
	// r0: miss; 3 2 1.  r1: 1 2 hit (8); 4 2 1 (3 evicted).
	// r2: 1 hit (4); 5 1 4.  r3: 1 hit, 2 evicted earlier (4); 3 2 1.
	// r4: nothing.  r5: 9 misses (0); 1 9 3.
	c := NewLRU(3, 4)
	want := []int64{0, 8, 4, 4, 0, 0}
	for i, r := range seq {
		if got := c.Add(r.tokens, r.ids); got != want[i] {
			t.Errorf("request %d: got %d hit tokens, want %d", i, got, want[i])
		}
	}
	if s := c.Stats(); s.HitTokens != 16 || s.Tokens != 49 {
		t.Errorf("stats: got %+v, want 16 of 49 tokens", s)
	}
	if got := c.Len(); got != 3 {
		t.Errorf("Len: got %d, want 3", got)
	}
	if got := c.Lookup([]uint64{1, 9, 3, 2}); got != 3 {
		t.Errorf("Lookup(1 9 3 2): got %d, want 3", got)
	}

	none := NewLRU(0, 4)
	for _, r := range seq {
		none.Add(r.tokens, r.ids)
	}
	if s := none.Stats(); s.HitTokens != 0 || none.Len() != 0 {
		t.Errorf("capacity 0: got %d hit tokens, %d blocks, want 0, 0", s.HitTokens, none.Len())
	}
}

// TestLRULargeIsIdeal: an LRU cache that never evicts serves what the
// infinite cache serves, request by request, on random traces with shared
// prefixes.
func TestLRULargeIsIdeal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ideal, lru := NewIdeal(16), NewLRU(1<<20, 16)
	small := NewLRU(8, 16)
	next := uint64(1000)
	var roots [][]uint64
	for i := range 3000 {
		var ids []uint64
		if len(roots) > 0 && rng.IntN(3) > 0 {
			r := roots[rng.IntN(len(roots))]
			ids = append(ids, r[:1+rng.IntN(len(r))]...)
		}
		for range rng.IntN(5) {
			ids = append(ids, next)
			next++
		}
		if len(ids) == 0 {
			continue
		}
		roots = append(roots, ids)
		tokens := int64(len(ids)-1)*16 + 1 + rng.Int64N(16)
		a, b := ideal.Add(tokens, ids), lru.Add(tokens, ids)
		if a != b {
			t.Fatalf("request %d: ideal %d, large LRU %d", i, a, b)
		}
		if s := small.Add(tokens, ids); s > a {
			t.Fatalf("request %d: a small LRU served %d tokens, more than the ideal %d", i, s, a)
		}
	}
	if small.Stats().HitTokens >= ideal.Stats().HitTokens {
		t.Errorf("a cache of 8 blocks served %d tokens, want fewer than the ideal %d", small.Stats().HitTokens, ideal.Stats().HitTokens)
	}
}

func TestUnknownLength(t *testing.T) {
	c := NewIdeal(4)
	c.Add(0, []uint64{1, 2})
	if got := c.Add(0, []uint64{1, 2}); got != 8 {
		t.Errorf("unknown length, two seen blocks: got %d, want 8", got)
	}
}
