package mock

import (
	"encoding/binary"
	"hash/maphash"
	"sync"

	"github.com/aiperf/toolkit/lib/prefix"
)

// The simulated prefix cache (Config.PrefixCacheBlocks): an LRU cache of
// blocks of Config.BlockBytes bytes of the prompt's text (the texts of the
// messages, or the prompt, back to back). Block j is named by a hash of
// blocks 0..j, as vLLM names its KV blocks, so a request is served its
// leading blocks up to the first one the cache does not hold; then all its
// full blocks are used (refreshed or inserted, the least recently used
// evicted). The cached share of the prompt's bytes, applied to its token
// count, is usage.prompt_tokens_details.cached_tokens, the
// vllm:prefix_cache_hits counter, and the part of the prompt that
// Config.PrefillPerToken does not charge for.
//
// Why bytes and not tokens: the mock need not tokenize at all (--tokenizer
// none), the same text hashes the same whatever tokenizer a client used,
// and blocks of 64 bytes (about 16 tokens of English text, vLLM's default
// block size) lose at most one small block per request against the
// trace's ideal, which counts whole 512-token hash_id blocks: with a cache
// large enough to never evict, the measured hit rate stays within a
// fraction of a percentage point of it (lib/mock's TestPrefixMooncake).

// DefaultBlockBytes is the prefix cache's block size when Config.BlockBytes
// is 0.
const DefaultBlockBytes = 64

// prefixCache is the simulation; nil when the cache is off. Safe for
// concurrent use.
type prefixCache struct {
	blockBytes int
	capacity   int
	seed       maphash.Seed
	mu         sync.Mutex
	lru        *prefix.LRU
}

func newPrefixCache(blocks, blockBytes int) *prefixCache {
	if blocks <= 0 {
		return nil
	}
	if blockBytes <= 0 {
		blockBytes = DefaultBlockBytes
	}
	return &prefixCache{blockBytes: blockBytes, capacity: blocks, seed: maphash.MakeSeed(), lru: prefix.NewLRU(blocks, 1)}
}

// blockHashes appends the chained hashes of text's full blocks to dst.
func (c *prefixCache) blockHashes(dst []uint64, text []byte) []uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var prev [8]byte
	for off := 0; off+c.blockBytes <= len(text); off += c.blockBytes {
		h.Reset()
		h.Write(prev[:])
		h.Write(text[off : off+c.blockBytes])
		v := h.Sum64()
		binary.LittleEndian.PutUint64(prev[:], v)
		dst = append(dst, v)
	}
	return dst
}

// serve looks the prompt up, then uses its blocks, and returns the bytes of
// text the cache served.
func (c *prefixCache) serve(text []byte) int {
	ids := c.blockHashes(nil, text)
	c.mu.Lock()
	defer c.mu.Unlock()
	served := c.lru.Lookup(ids)
	c.lru.Insert(ids)
	return served * c.blockBytes
}

// usage is the cache's fill, 0 to 1 (0 without a cache).
func (c *prefixCache) usage() float64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return float64(c.lru.Len()) / float64(c.capacity)
}

// cachePrompt runs the prefix cache on the request's prompt and sets the
// reply's cached tokens: the served share of the text's bytes times its
// tokens, rounded down. The counters count every prompt looked up.
func (s *Server) cachePrompt(p *replyPlan, q *request) {
	if s.prefix == nil {
		return
	}
	var text []byte
	inputTexts(q.input, func(t string) { text = append(text, t...) })
	if len(text) > 0 {
		p.cached = int64(float64(p.prompt) * float64(s.prefix.serve(text)) / float64(len(text)))
	}
	p.cacheOn = true
	s.metrics.queries.Add(p.prompt)
	s.metrics.hits.Add(p.cached)
}
