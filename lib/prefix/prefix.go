// Package prefix measures the prefix-cache reuse a trace offers: from each
// request's KV block ids (Mooncake's hash_ids) and prompt length, the hit
// rate in tokens of an infinite prefix cache (the trace's ideal) and of an
// LRU cache of a given number of blocks.
//
// A block's id names its content and, as in Mooncake's traces and in
// vLLM's prefix cache, everything before it: a cache serves a request's
// leading blocks up to the first one it does not hold, and none after. Block
// j of a request of T tokens holds tokens [jB, min((j+1)B, T)), so a last,
// partial block counts for the tokens it holds (one hash_id has one size in
// a trace: lib/synth refuses a trace that says otherwise).
//
// The Python aiperf's analyze-trace reports a different average: the mean
// over requests of the fraction of each request's blocks served (every
// block weighs the same, and so does every request, whatever its length).
// [Stats.BlockMean] gives that figure for comparison; the rates here weigh
// tokens, as a server's prefix-cache counters do (vLLM's
// prefix_cache_hits / prefix_cache_queries).
package prefix

import "container/list"

// Stats are the hit figures of a sequence of requests.
type Stats struct {
	Requests  int64 // requests added
	Hashed    int64 // of them, requests with block ids
	Tokens    int64 // prompt tokens of all requests
	HitTokens int64 // tokens the cache served
	// blockFrac sums, over hashed requests, the fraction of the request's
	// blocks served (analyze-trace's per-request hit rate).
	blockFrac float64
}

// Rate is HitTokens/Tokens (0 without tokens).
func (s Stats) Rate() float64 {
	if s.Tokens == 0 {
		return 0
	}
	return float64(s.HitTokens) / float64(s.Tokens)
}

// BlockMean is the Python aiperf analyze-trace's cache_hit_rate: the mean,
// over requests with block ids, of the fraction of their blocks served.
func (s Stats) BlockMean() float64 {
	if s.Hashed == 0 {
		return 0
	}
	return s.blockFrac / float64(s.Hashed)
}

// add accounts one request of tokens prompt tokens and n blocks, of which
// the leading served ones held hit tokens.
func (s *Stats) add(tokens, hit int64, served, n int) {
	s.Requests++
	s.Tokens += tokens
	s.HitTokens += hit
	if n > 0 {
		s.Hashed++
		s.blockFrac += float64(served) / float64(n)
	}
}

// blockTokens is the number of tokens block j of a request of tokens tokens
// holds, with blocks of size b.
func blockTokens(j int, tokens int64, b int) int64 {
	return min(max(tokens-int64(j)*int64(b), 0), int64(b))
}

// promptTokens is a request's prompt length: its token count, or when that
// is unknown (0), as many full blocks as it has ids.
func promptTokens(tokens int64, ids []uint64, b int) int64 {
	if tokens <= 0 {
		return int64(len(ids)) * int64(b)
	}
	return tokens
}

// Ideal is an infinite prefix cache: a block once seen is always served.
// The zero value is not usable; call NewIdeal. Not safe for concurrent use.
type Ideal struct {
	b     int
	seen  map[uint64]struct{}
	stats Stats
}

// NewIdeal returns an empty infinite cache of blocks of blockSize tokens.
func NewIdeal(blockSize int) *Ideal {
	return &Ideal{b: max(blockSize, 1), seen: map[uint64]struct{}{}}
}

// Add accounts the next request (tokens prompt tokens, block ids ids; 0 ids
// for a request the trace says nothing about, which is all miss) and returns
// the tokens the cache served it.
func (c *Ideal) Add(tokens int64, ids []uint64) int64 {
	tokens = promptTokens(tokens, ids, c.b)
	var hit int64
	served := 0
	for j, id := range ids {
		if _, ok := c.seen[id]; !ok {
			break
		}
		hit += blockTokens(j, tokens, c.b)
		served++
	}
	for _, id := range ids[served:] {
		c.seen[id] = struct{}{}
	}
	c.stats.add(tokens, hit, served, len(ids))
	return hit
}

// Stats returns the figures so far.
func (c *Ideal) Stats() Stats { return c.stats }

// Blocks returns the number of distinct blocks seen.
func (c *Ideal) Blocks() int { return len(c.seen) }

// LRU is a prefix cache of a fixed number of blocks that evicts the least
// recently used: a request's blocks are looked up in order up to the first
// miss, then all of them are used in order (the served ones refreshed, the
// others inserted), so a request's first blocks are evicted before its
// last. Not safe for concurrent use.
type LRU struct {
	b     int
	cap   int
	order *list.List // front: most recently used; values are block ids
	where map[uint64]*list.Element
	stats Stats
}

// NewLRU returns an empty cache of capacity blocks of blockSize tokens.
// A capacity below 1 holds nothing.
func NewLRU(capacity, blockSize int) *LRU {
	return &LRU{b: max(blockSize, 1), cap: capacity, order: list.New(), where: map[uint64]*list.Element{}}
}

// Lookup returns how many of ids' leading blocks the cache holds, without
// changing it.
func (c *LRU) Lookup(ids []uint64) int {
	for j, id := range ids {
		if _, ok := c.where[id]; !ok {
			return j
		}
	}
	return len(ids)
}

// Insert uses every block of ids in order: held ones become the most
// recently used, the others are inserted, evicting the least recently used
// beyond the capacity.
func (c *LRU) Insert(ids []uint64) {
	if c.cap < 1 {
		return
	}
	for _, id := range ids {
		if e, ok := c.where[id]; ok {
			c.order.MoveToFront(e)
			continue
		}
		if c.order.Len() >= c.cap {
			old := c.order.Back()
			delete(c.where, old.Value.(uint64))
			c.order.Remove(old)
		}
		c.where[id] = c.order.PushFront(id)
	}
}

// Add accounts the next request, as Ideal.Add does, and returns the tokens
// the cache served it.
func (c *LRU) Add(tokens int64, ids []uint64) int64 {
	tokens = promptTokens(tokens, ids, c.b)
	served := c.Lookup(ids)
	var hit int64
	for j := range served {
		hit += blockTokens(j, tokens, c.b)
	}
	c.Insert(ids)
	c.stats.add(tokens, hit, served, len(ids))
	return hit
}

// Stats returns the figures so far.
func (c *LRU) Stats() Stats { return c.stats }

// Len returns the number of blocks held.
func (c *LRU) Len() int { return c.order.Len() }
