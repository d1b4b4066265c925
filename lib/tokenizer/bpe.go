package tokenizer

import (
	"hash/maphash"
	"strings"
	"sync"
	"unicode/utf8"
)

// bpe is a byte-pair-encoding model. It turns one pre-tokenized piece into
// token ids by merging adjacent symbols in rank order, like Hugging Face's
// BPE model: a min-heap keyed by (rank, position) over a linked list of
// symbols, O(n log n) in the piece length.
//
// When byteDomain is set the vocabulary keys are raw bytes instead of
// GPT-2's byte-level alphabet, so the ByteLevel pre-tokenizer's character
// mapping never has to be materialised: each byte of a piece is one
// initial symbol.
type bpe struct {
	vocab  map[string]int32
	merges map[uint64]mergeRule

	byteDomain bool
	// byteIDs holds the id of every single byte in byte-domain models
	// (-1 when absent), so building the initial symbols needs no lookups.
	byteIDs [256]int32
	// concatRanks selects tiktoken semantics: the priority of a pair is
	// the rank (= id) of the concatenated bytes, and there is no merge
	// table.
	concatRanks bool

	unk          int32 // -1 when the model has no unknown token
	fuseUnk      bool
	byteFallback bool
	fallbackIDs  [256]int32 // ids of <0xNN> tokens, -1 when absent
	ignoreMerges bool
	prefix       string // continuing_subword_prefix
	suffix       string // end_of_word_suffix

	// chunkSep, when set, is a separator that merges cannot cross:
	// SentencePiece-style vocabularies have "▁" almost only at the start
	// of a token (or inside a run of "▁"). Tokenizers without a
	// pre-tokenizer (Llama-2, Gemma) hand the model the whole text as one
	// piece; cutting it before each "▁" that follows a character c gives
	// word-sized chunks that merge independently and hit the cache, with
	// the same result, as long as no vocabulary token holds c followed by
	// "▁" (then no merge can make a symbol that spans the cut).
	// chunkBlock holds those characters c (Gemma 3 has one such token,
	// ">▁</").
	chunkSep   string
	chunkBlock map[rune]bool

	cache pieceCache
	work  sync.Pool // *bpeWork
}

type mergeRule struct {
	rank int32
	id   int32 // the merged token
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

type symbol struct {
	id         int32
	prev, next int32 // indexes into the symbol slice, -1 at the ends
	start, end int32 // byte span in the piece; end == start marks a removed symbol
}

// heapItem orders merges by rank, then by position: key = rank<<32 | pos.
type heapItem struct {
	key uint64
	id  int32
}

type bpeWork struct {
	syms []symbol
	heap []heapItem
}

// maxCachedLen bounds the pieces kept in the cache, as Hugging Face does
// (its MAX_LENGTH): long pieces are rare and would crowd out short ones.
const maxCachedLen = 256

// chunks calls fn for each chunk of piece (see chunkSep).
func (m *bpe) chunks(piece string, fn func(string)) {
	sep := m.chunkSep
	if sep == "" {
		fn(piece)
		return
	}
	start := 0
	for i := 1; i < len(piece); {
		k := strings.Index(piece[i:], sep)
		if k < 0 {
			break
		}
		k += i
		if m.chunkBefore(piece[:k]) {
			fn(piece[start:k])
			start = k
		}
		i = k + len(sep)
	}
	fn(piece[start:])
}

// chunkBefore reports whether a chunk may end after head, before a sep.
func (m *bpe) chunkBefore(head string) bool {
	if strings.HasSuffix(head, m.chunkSep) {
		return false
	}
	if m.chunkBlock == nil {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(head)
	return !m.chunkBlock[r]
}

// chunkBlockers returns the characters that some token of vocab holds
// right before sep (other than sep itself), and whether there are few
// enough of them for chunking to pay: merges cannot cross a sep that
// follows any other character.
func chunkBlockers(vocab map[string]int, sep string) (map[rune]bool, bool) {
	var block map[rune]bool
	for tok := range vocab {
		for i := 1; i < len(tok); {
			k := strings.Index(tok[i:], sep)
			if k < 0 {
				break
			}
			k += i
			if head := tok[:k]; !strings.HasSuffix(head, sep) {
				r, _ := utf8.DecodeLastRuneInString(head)
				if block == nil {
					block = make(map[rune]bool)
				}
				block[r] = true
			}
			i = k + len(sep)
		}
	}
	return block, len(block) <= 64
}

// encode appends the ids for one piece to dst. The piece must not need
// chunking (see chunks).
func (m *bpe) encode(dst []int, piece string) []int {
	if piece == "" {
		return dst
	}
	if m.ignoreMerges {
		if id, ok := m.vocab[piece]; ok {
			return append(dst, int(id))
		}
	}
	if len(piece) == 1 && m.byteDomain && m.suffix == "" && m.byteIDs[piece[0]] >= 0 {
		return append(dst, int(m.byteIDs[piece[0]]))
	}
	cacheable := len(piece) < maxCachedLen
	if cacheable {
		if ids, ok := m.cache.get(piece); ok {
			return append(dst, ids...)
		}
	}
	w, _ := m.work.Get().(*bpeWork)
	if w == nil {
		w = new(bpeWork)
	}
	n := len(dst)
	dst = m.mergeWord(w, dst, piece)
	m.work.Put(w)
	if cacheable {
		m.cache.put(piece, dst[n:])
	}
	return dst
}

// mergeWord splits piece into initial symbols (with unknown-token and
// byte-fallback handling as in Hugging Face's BPE::merge_word), merges them
// and appends the result to dst.
func (m *bpe) mergeWord(w *bpeWork, dst []int, piece string) []int {
	syms := w.syms[:0]
	add := func(id int32, start, end int) {
		syms = append(syms, symbol{id: id, prev: int32(len(syms)) - 1, next: int32(len(syms)) + 1, start: int32(start), end: int32(end)})
	}
	fast := m.byteDomain && m.prefix == "" && m.suffix == ""
	if fast {
		for i := 0; i < len(piece); i++ {
			id := m.byteIDs[piece[i]]
			if id < 0 {
				fast = false
				syms = syms[:0]
				break
			}
			add(id, i, i+1)
		}
	}
	if !fast {
		unkID, unkStart, unkEnd := int32(-1), 0, 0
		flushUnk := func() {
			if unkID >= 0 {
				add(unkID, unkStart, unkEnd)
				unkID = -1
			}
		}
		for i := 0; i < len(piece); {
			size := 1
			if !m.byteDomain {
				size = runeLen(piece[i:])
			}
			e := i + size
			s := piece[i:e]
			if m.prefix != "" && i > 0 {
				s = m.prefix + s
			}
			if m.suffix != "" && e == len(piece) {
				s += m.suffix
			}
			if id, ok := m.vocab[s]; ok {
				flushUnk()
				add(id, i, e)
				i = e
				continue
			}
			if m.byteFallback {
				all := true
				for k := 0; k < len(s); k++ {
					if m.fallbackIDs[s[k]] < 0 {
						all = false
						break
					}
				}
				if all {
					// Hugging Face leaves a pending unknown token pending
					// here; keep the same order.
					for k := 0; k < len(s); k++ {
						p := min(i+k, e-1)
						add(m.fallbackIDs[s[k]], p, p+1)
					}
					i = e
					continue
				}
			}
			if m.unk >= 0 {
				if unkID >= 0 && m.fuseUnk {
					unkEnd = e
				} else {
					flushUnk()
					unkID, unkStart, unkEnd = m.unk, i, e
				}
			}
			i = e
		}
		flushUnk()
	}
	if len(syms) == 0 {
		w.syms = syms
		return dst
	}
	syms[len(syms)-1].next = -1
	syms = m.mergeAll(w, syms, piece)
	for i := int32(0); i >= 0; i = syms[i].next {
		dst = append(dst, int(syms[i].id))
	}
	w.syms = syms
	return dst
}

// lookup returns the merge for the adjacent symbols a and b.
func (m *bpe) lookup(piece string, a, b *symbol) (mergeRule, bool) {
	if m.concatRanks {
		id, ok := m.vocab[piece[a.start:b.end]]
		return mergeRule{rank: id, id: id}, ok
	}
	r, ok := m.merges[pairKey(a.id, b.id)]
	return r, ok
}

func (m *bpe) mergeAll(w *bpeWork, syms []symbol, piece string) []symbol {
	h := w.heap[:0]
	for i := 0; i+1 < len(syms); i++ {
		if r, ok := m.lookup(piece, &syms[i], &syms[i+1]); ok {
			h = append(h, heapItem{key: uint64(uint32(r.rank))<<32 | uint64(i), id: r.id})
		}
	}
	heapify(h)
	for len(h) > 0 {
		var top heapItem
		h, top = heapPop(h)
		pos := int32(uint32(top.key))
		cur := &syms[pos]
		if cur.end == cur.start || cur.next < 0 {
			continue
		}
		right := &syms[cur.next]
		// Skip entries made stale by earlier merges, exactly as
		// Hugging Face does: only the resulting id is compared.
		if r, ok := m.lookup(piece, cur, right); !ok || r.id != top.id {
			continue
		}
		cur.id = top.id
		cur.end = right.end
		cur.next = right.next
		right.end = right.start
		if cur.next >= 0 {
			syms[cur.next].prev = pos
		}
		if cur.prev >= 0 {
			if r, ok := m.lookup(piece, &syms[cur.prev], cur); ok {
				h = heapPush(h, heapItem{key: uint64(uint32(r.rank))<<32 | uint64(uint32(cur.prev)), id: r.id})
			}
		}
		if cur.next >= 0 {
			if r, ok := m.lookup(piece, cur, &syms[cur.next]); ok {
				h = heapPush(h, heapItem{key: uint64(uint32(r.rank))<<32 | uint64(pos), id: r.id})
			}
		}
	}
	w.heap = h
	return syms
}

// The heap is 4-ary, like Hugging Face's: half as deep as a binary heap,
// and the four children share a cache line or two.

func heapPush(h []heapItem, it heapItem) []heapItem {
	h = append(h, it)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if h[p].key <= it.key {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = it
	return h
}

func heapPop(h []heapItem) ([]heapItem, heapItem) {
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	if n > 0 {
		siftDown(h, 0, last)
	}
	return h, top
}

// siftDown puts it at i and moves it down to its place.
func siftDown(h []heapItem, i int, it heapItem) {
	n := len(h)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if h[k].key < h[m].key {
				m = k
			}
		}
		if it.key <= h[m].key {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = it
}

// heapify orders h as a heap in linear time.
func heapify(h []heapItem) {
	if len(h) < 2 {
		return
	}
	for i := (len(h) - 2) / 4; i >= 0; i-- {
		siftDown(h, i, h[i])
	}
}

// runeLen is the byte length of the first UTF-8 sequence in s, treating
// each invalid byte as a sequence of its own.
func runeLen(s string) int {
	c := s[0]
	switch {
	case c < 0xC0:
		return 1
	case c < 0xE0:
		return validLen(s, 2)
	case c < 0xF0:
		return validLen(s, 3)
	default:
		return validLen(s, 4)
	}
}

func validLen(s string, n int) int {
	if len(s) < n {
		return 1
	}
	for k := 1; k < n; k++ {
		if s[k]&0xC0 != 0x80 {
			return 1
		}
	}
	return n
}

// pieceCache maps pieces to their ids. It is sharded to keep lock
// contention low when many goroutines encode with one Tokenizer; a shard
// that fills up is cleared, which bounds memory without tracking recency.
type pieceCache struct {
	seed   maphash.Seed
	once   sync.Once
	shards [cacheShards]cacheShard
}

const (
	cacheShards   = 16
	cacheShardCap = 8192 // 131,072 pieces in all, a few MB for English text
)

type cacheShard struct {
	mu sync.RWMutex
	m  map[string][]int
}

func (c *pieceCache) shard(s string) *cacheShard {
	c.once.Do(func() { c.seed = maphash.MakeSeed() })
	return &c.shards[maphash.String(c.seed, s)%cacheShards]
}

func (c *pieceCache) get(s string) ([]int, bool) {
	sh := c.shard(s)
	sh.mu.RLock()
	ids, ok := sh.m[s]
	sh.mu.RUnlock()
	return ids, ok
}

func (c *pieceCache) put(s string, ids []int) {
	sh := c.shard(s)
	v := append([]int(nil), ids...)
	k := strings.Clone(s) // s may point into a large input
	sh.mu.Lock()
	if sh.m == nil || len(sh.m) >= cacheShardCap {
		sh.m = make(map[string][]int, 256)
	}
	sh.m[k] = v
	sh.mu.Unlock()
}
