package mock

import (
	"hash/maphash"
	"strings"
	"sync"
	"unicode"

	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/tokenizer"
)

// corpus is the text replies are cut from (written for this package). A
// reply of n tokens is n consecutive tokens of it (see newText), starting
// at an offset drawn per request, wrapping around at the end.
const corpus = `The harbour master kept a ledger of every ship that came in, and the ledger kept him. ` +
	`Each morning he walked the length of the quay, counted the masts against the grey water, ` +
	`and wrote the number down beside the weather and the tide. Nobody had asked him to do it. ` +
	`The port had a clerk for arrivals and another for cargo, and both of them were younger and faster ` +
	`than he was, but the old man believed that a place is only known by someone who looks at it ` +
	`every day in the same way. When the storm of that winter broke the sea wall, it was his ledger ` +
	`that showed which berths had flooded before and which had held, and the engineers who came ` +
	`from the capital read it for three nights by lamplight. They found patterns in it that no survey ` +
	`had caught: the slow drift of sand toward the northern pier, the way the eastern basin silted ` +
	`after every dry summer, the small and steady rise of the highest tides over forty years. ` +
	`He did not think of himself as a scientist. He thought of himself as a man who paid attention, ` +
	`and he said so when they asked him how he had known. Attention, he told them, is cheap to give ` +
	`and expensive to replace. A measurement taken carelessly is worse than none, because it is believed. ` +
	`The engineers rebuilt the wall two metres higher and a little further out, where the ledger said ` +
	`the ground was firm, and in the spring they sent him a copy of their report with his name in it. ` +
	`He read it once, put it in the drawer with the tide tables, and went back out to count the masts.`

// text is the reply text cut into tokens, each kept as the escaped bytes
// that go inside a JSON string.
type text struct {
	pieces [][]byte
}

// newText cuts the corpus into the reply's tokens. With a tokenizer the
// tokens are the corpus's words, each with its leading space, that the
// tokenizer encodes as one token: the pre-tokenizers of byte-level BPE
// vocabularies (GPT-2, Llama 3, Qwen) split text before every " word", so
// any run of n such pieces encodes back to exactly n tokens, and a client
// that counts the reply itself (no usage) finds the max_tokens it asked
// for. A tokenizer for which that does not hold (checked here on two
// rounds of the corpus) gets the corpus's own tokens instead, whose
// concatenation may merge at the seams.
func newText(t *tokenizer.Tokenizer) *text {
	var pieces [][]byte
	if t != nil {
		var words []string
		for _, w := range strings.FieldsFunc(corpus, func(r rune) bool { return !unicode.IsLetter(r) }) {
			if len(t.Encode(" "+w)) == 1 {
				words = append(words, " "+w)
			}
		}
		round := strings.Join(words, "")
		if len(words) >= 64 && len(t.Encode(round+round)) == 2*len(words) {
			for _, w := range words {
				pieces = append(pieces, escapeInner(w))
			}
		} else {
			for _, id := range t.Encode(corpus) {
				pieces = append(pieces, escapeInner(string(t.TokenBytes(id))))
			}
		}
	} else {
		for i, w := range strings.Fields(corpus) {
			if i > 0 {
				w = " " + w
			}
			pieces = append(pieces, escapeInner(w))
		}
	}
	return &text{pieces: pieces}
}

// escapeInner returns s as escaped JSON string content, without the quotes.
func escapeInner(s string) []byte {
	b := jsonx.AppendString(nil, s)
	return b[1 : len(b)-1]
}

// piece returns token i of a reply that starts at offset off.
func (t *text) piece(off uint64, i int) []byte {
	return t.pieces[(off+uint64(i))%uint64(len(t.pieces))]
}

// countCache counts prompt tokens and remembers the counts of recent
// prompts, keyed by a hash of their raw JSON, so that a benchmark that sends
// the same bodies again does not tokenize them again. It holds at most
// maxCounts entries and starts over when full.
type countCache struct {
	tok  *tokenizer.Tokenizer
	seed maphash.Seed
	mu   sync.Mutex
	m    map[uint64]int64
}

const maxCounts = 1 << 16

func newCountCache(t *tokenizer.Tokenizer) *countCache {
	return &countCache{tok: t, seed: maphash.MakeSeed(), m: make(map[uint64]int64)}
}

// count returns the number of prompt tokens of the texts found in raw (a
// messages array, or a prompt string or array); texts is called to list
// them only on a cache miss.
func (c *countCache) count(raw []byte, texts func(fn func(string))) int64 {
	h := maphash.Bytes(c.seed, raw)
	c.mu.Lock()
	n, ok := c.m[h]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = 0
	texts(func(s string) {
		if c.tok == nil {
			n += int64((len(s) + 3) / 4)
		} else {
			n += int64(len(c.tok.Encode(s)))
		}
	})
	c.mu.Lock()
	if len(c.m) >= maxCounts {
		clear(c.m)
	}
	c.m[h] = n
	c.mu.Unlock()
	return n
}
