// Package tokenizer encodes and decodes text with Hugging Face BPE
// tokenizers (tokenizer.json) and tiktoken rank files, producing exactly
// the ids of Hugging Face's Rust tokenizers library.
package tokenizer

import (
	"strings"
	"sync"
)

// Tokenizer is a loaded tokenizer. It is safe for concurrent use by
// multiple goroutines.
type Tokenizer struct {
	identity Identity

	raw       *addedTrie // added tokens matched in the raw text
	normTrie  *addedTrie // added tokens with normalized=true, matched after normalizing
	norm      normalizer
	pre       preTokenizer
	model     *bpe
	dec       decoder
	byteLevel bool // the decoder is exactly ByteLevel: Decode concatenates tokenBytes

	tokens   []string // id → token string, "" when the id is unused
	bytes    []byte   // TokenBytes of every id, back to back
	bytesOff []uint32 // TokenBytes(id) is bytes[bytesOff[id]:bytesOff[id+1]]
	special  []bool
	added    map[string]int
	// strays holds vocab entries a byte-domain model cannot hold (their
	// text is outside the byte-level alphabet), for TokenID.
	strays map[string]int

	bos, eos int // -1 when unknown

	bufs sync.Pool // *encodeBuf
}

type encodeBuf struct {
	segs  []segment
	segs2 []segment
}

// Identity names a tokenizer and pins its content.
type Identity struct {
	// Name is the name the tokenizer was loaded under: "builtin:qwen3",
	// a Hugging Face repository ("org/name") or a folder or file name.
	Name string
	// Revision is the Hugging Face snapshot revision, a version for the
	// builtin tokenizer, or "".
	Revision string
	// SHA256 is the hex SHA-256 of the tokenizer file. When a
	// tokenizer_config.json was read too, it is the SHA-256 over
	// "name\x00bytes\x00" for each file, in name order.
	SHA256 string
}

// Identity returns the tokenizer's name, revision and content digest.
func (t *Tokenizer) Identity() Identity { return t.identity }

// VocabSize returns one more than the largest token id, counting added
// tokens: ids in [0, VocabSize()) are the ones Decode and TokenBytes know.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// TokenID returns the id of a token given as it is written in the
// tokenizer file (for byte-level tokenizers, in the byte-level alphabet,
// such as "Ġthe").
func (t *Tokenizer) TokenID(s string) (int, bool) {
	if id, ok := t.added[s]; ok {
		return id, true
	}
	if t.model.byteDomain {
		if b, ok := byteLevelDecode(s); ok {
			id, ok := t.model.vocab[string(b)]
			return int(id), ok
		}
		id, ok := t.strays[s]
		return id, ok
	}
	id, ok := t.model.vocab[s]
	return int(id), ok
}

// Token returns the token string of id as written in the tokenizer file.
func (t *Tokenizer) Token(id int) (string, bool) {
	if id < 0 || id >= len(t.tokens) || t.tokens[id] == "" {
		return "", false
	}
	return t.tokens[id], true
}

// IsSpecial reports whether id is an added token marked special.
func (t *Tokenizer) IsSpecial(id int) bool {
	return id >= 0 && id < len(t.special) && t.special[id]
}

// BlockSeparator returns the token aiperf puts at the start of each
// synthesized prompt block: the BOS token if the tokenizer has one, else
// the EOS token. ok is false when there is neither.
func (t *Tokenizer) BlockSeparator() (id int, ok bool) {
	if t.bos >= 0 {
		return t.bos, true
	}
	if t.eos >= 0 {
		return t.eos, true
	}
	return -1, false
}

// TokenBytes returns the bytes id contributes to a decoded text: for
// byte-level tokenizers the raw bytes behind the token, for
// SentencePiece-style ones the token with "▁" as a space and <0xNN> as
// the byte. Edge rules of the decoder (such as stripping the first
// space) are not applied, and bytes may be a partial UTF-8 sequence. The
// result must not be modified. It is nil for unknown ids.
func (t *Tokenizer) TokenBytes(id int) []byte {
	if id < 0 || id >= len(t.tokens) || t.tokens[id] == "" {
		return nil
	}
	lo, hi := t.bytesOff[id], t.bytesOff[id+1]
	return t.bytes[lo:hi:hi]
}

// Encode returns the token ids of text, without adding special tokens
// (Hugging Face's add_special_tokens=false). Added and special tokens
// written in the text, such as "<|im_start|>", are recognised and
// encoded as their single ids, which is Hugging Face's default. Text
// should be valid UTF-8, as Hugging Face requires; byte-level tokenizers
// encode invalid bytes as themselves.
func (t *Tokenizer) Encode(text string) []int {
	ids, _ := t.encode(text, false)
	return ids
}

// EncodeWithBoundaries is Encode that also reports, for each token,
// whether it starts a new piece: an added token, a piece made by the
// pre-tokenizer, or a word of a SentencePiece-style text (before a "▁"
// that follows another character). BPE never merges across pieces: the
// tokens of each piece depend on the piece's text alone.
func (t *Tokenizer) EncodeWithBoundaries(text string) (ids []int, pieceStart []bool) {
	return t.encode(text, true)
}

func (t *Tokenizer) encode(text string, wantStarts bool) ([]int, []bool) {
	b, _ := t.bufs.Get().(*encodeBuf)
	if b == nil {
		b = new(encodeBuf)
	}
	ids := make([]int, 0, len(text)/4+1)
	var starts []bool
	if wantStarts {
		starts = make([]bool, 0, cap(ids))
	}
	mark := func(n int) {
		if wantStarts && len(ids) > n {
			for len(starts) < len(ids) {
				starts = append(starts, len(starts) == n)
			}
		}
	}
	chunk := func(s string) {
		n := len(ids)
		ids = t.model.encode(ids, s)
		mark(n)
	}
	emit := func(p piece) {
		if t.model.chunkSep == "" {
			chunk(p.s)
			return
		}
		t.model.chunks(p.s, chunk)
	}
	encodeText := func(s string, first bool) {
		if s == "" {
			return
		}
		if t.pre == nil {
			emit(piece{s: s})
			return
		}
		t.pre.each(piece{s: s, first: first}, emit)
	}
	b.segs = t.raw.split(text, b.segs[:0])
	for _, sg := range b.segs {
		if sg.token >= 0 {
			ids = append(ids, sg.token)
			mark(len(ids) - 1)
			continue
		}
		s := text[sg.lo:sg.hi]
		first := sg.lo == 0
		if t.norm != nil {
			s = t.norm.normalize(s)
		}
		if t.normTrie == nil {
			encodeText(s, first)
			continue
		}
		b.segs2 = t.normTrie.split(s, b.segs2[:0])
		for _, sg2 := range b.segs2 {
			if sg2.token >= 0 {
				ids = append(ids, sg2.token)
				mark(len(ids) - 1)
				continue
			}
			encodeText(s[sg2.lo:sg2.hi], first && sg2.lo == 0)
		}
	}
	t.bufs.Put(b)
	return ids, starts
}

// Decode returns the text of ids, keeping special tokens (Hugging Face's
// skip_special_tokens=false). Unknown ids are skipped. Invalid UTF-8
// produced by byte-level tokens becomes U+FFFD, as in Hugging Face.
func (t *Tokenizer) Decode(ids []int) string {
	if t.byteLevel {
		var raw []byte
		for _, id := range ids {
			raw = append(raw, t.TokenBytes(id)...)
		}
		return string(appendLossyUTF8(make([]byte, 0, len(raw)), raw))
	}
	toks := make([]string, 0, len(ids))
	for _, id := range ids {
		if tok, ok := t.Token(id); ok {
			toks = append(toks, tok)
		}
	}
	if t.dec == nil {
		return strings.Join(toks, " ")
	}
	return strings.Join(t.dec.decodeChain(toks), "")
}
