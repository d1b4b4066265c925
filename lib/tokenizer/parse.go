package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// fileJSON is the part of tokenizer.json that encoding and decoding use.
// truncation, padding and post_processor only matter for
// add_special_tokens=true and batching, which this package does not do.
type fileJSON struct {
	Version      string
	AddedTokens  []addedToken
	Normalizer   json.RawMessage
	PreTokenizer json.RawMessage
	Decoder      json.RawMessage
	Model        *bpeJSON
}

type bpeJSON struct {
	Type                    string
	Vocab                   map[string]int
	vocabIsMap              bool
	hasMerges               bool
	Merges                  []mergeJSON
	UnkToken                *string
	ContinuingSubwordPrefix *string
	EndOfWordSuffix         *string
	FuseUnk                 bool
	ByteFallback            bool
	IgnoreMerges            bool
	Dropout                 *float64
}

// mergeJSON is one merge, written either as "a b" (older files) or as
// ["a", "b"].
type mergeJSON struct{ a, b string }

// readFileJSON reads tokenizer.json with jsonScanner, handing the small
// values to encoding/json.
func readFileJSON(data []byte) (*fileJSON, error) {
	var f fileJSON
	s := &jsonScanner{b: data}
	small := func(dst any) error {
		raw, err := s.raw()
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, dst)
	}
	err := s.object(func(key string) error {
		switch key {
		case "version":
			return small(&f.Version)
		case "added_tokens":
			return small(&f.AddedTokens)
		case "normalizer":
			return small(&f.Normalizer)
		case "pre_tokenizer":
			return small(&f.PreTokenizer)
		case "decoder":
			return small(&f.Decoder)
		case "model":
			if s.peek() == 'n' {
				return s.skip()
			}
			f.Model = new(bpeJSON)
			return readModelJSON(s, f.Model, small)
		}
		return s.skip()
	})
	if err == nil && s.peek() != 0 {
		err = s.errorf("data after the top-level object")
	}
	if err != nil {
		return nil, err
	}
	return &f, nil
}

func readModelJSON(s *jsonScanner, m *bpeJSON, small func(any) error) error {
	return s.object(func(key string) error {
		switch key {
		case "type":
			return small(&m.Type)
		case "vocab":
			if s.peek() != '{' {
				return s.skip() // Unigram's list; rejected by type
			}
			m.vocabIsMap = true
			m.Vocab = make(map[string]int, min(len(s.b)/64, 1<<18))
			return s.object(func(tok string) error {
				id, err := s.integer()
				m.Vocab[tok] = id
				return err
			})
		case "merges":
			m.hasMerges = true
			return s.array(func() error {
				switch s.peek() {
				case '"':
					line, err := s.str()
					if err != nil {
						return err
					}
					if strings.HasPrefix(line, "#version") {
						return nil
					}
					// Like Hugging Face: exactly one space.
					a, b, ok := strings.Cut(line, " ")
					if !ok || strings.Contains(b, " ") {
						return fmt.Errorf("bad merge %q", line)
					}
					m.Merges = append(m.Merges, mergeJSON{a, b})
					return nil
				case '[':
					var pair []string
					err := s.array(func() error {
						p, err := s.str()
						pair = append(pair, p)
						return err
					})
					if err != nil {
						return err
					}
					if len(pair) != 2 {
						return fmt.Errorf("bad merge %q", pair)
					}
					m.Merges = append(m.Merges, mergeJSON{pair[0], pair[1]})
					return nil
				}
				return s.errorf("bad merge")
			})
		case "unk_token":
			return small(&m.UnkToken)
		case "continuing_subword_prefix":
			return small(&m.ContinuingSubwordPrefix)
		case "end_of_word_suffix":
			return small(&m.EndOfWordSuffix)
		case "fuse_unk":
			return small(&m.FuseUnk)
		case "byte_fallback":
			return small(&m.ByteFallback)
		case "ignore_merges":
			return small(&m.IgnoreMerges)
		case "dropout":
			return small(&m.Dropout)
		}
		return s.skip()
	})
}

// parseTokenizerJSON builds a Tokenizer from the bytes of a tokenizer.json
// file.
func parseTokenizerJSON(data []byte) (*Tokenizer, error) {
	f, err := readFileJSON(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	if f.Version != "" && f.Version != "1.0" {
		return nil, fmt.Errorf("tokenizer.json: unknown version %q", f.Version)
	}
	mj := f.Model
	if mj == nil {
		return nil, errors.New("tokenizer.json: no model")
	}
	switch mj.Type {
	case "BPE":
	case "":
		if !mj.hasMerges {
			return nil, errors.New("tokenizer.json: model has no type and no merges; only BPE models are supported")
		}
	default:
		return nil, fmt.Errorf("tokenizer.json: unsupported model type %q (only BPE is supported)", mj.Type)
	}
	if !mj.vocabIsMap {
		return nil, errors.New("tokenizer.json: BPE model: vocab is not an object")
	}
	if mj.Dropout != nil && *mj.Dropout > 0 {
		return nil, errors.New("tokenizer.json: BPE dropout is not supported (it makes encoding random)")
	}
	norm, err := parseNormalizer(f.Normalizer)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	pre, byteLevel, err := parsePreTokenizer(f.PreTokenizer)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	dec, err := parseDecoder(f.Decoder)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	m, strays, err := buildBPE(mj, byteLevel)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	t := &Tokenizer{norm: norm, pre: pre, model: m, dec: dec, strays: strays}
	if err := t.build(mj.Vocab, f.AddedTokens, true); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	return t, nil
}

func buildBPE(mj *bpeJSON, byteLevel bool) (*bpe, map[string]int, error) {
	m := &bpe{
		merges:       make(map[uint64]mergeRule, len(mj.Merges)),
		unk:          -1,
		fuseUnk:      mj.FuseUnk,
		byteFallback: mj.ByteFallback,
		ignoreMerges: mj.IgnoreMerges,
		byteDomain:   byteLevel,
	}
	if mj.ContinuingSubwordPrefix != nil {
		m.prefix = *mj.ContinuingSubwordPrefix
	}
	if mj.EndOfWordSuffix != nil {
		m.suffix = *mj.EndOfWordSuffix
	}
	vocab := mj.Vocab
	for i, mg := range mj.Merges {
		a, ok1 := vocab[mg.a]
		b, ok2 := vocab[mg.b]
		if !ok1 || !ok2 {
			return nil, nil, fmt.Errorf("merge %d (%q %q) uses a token missing from the vocab", i, mg.a, mg.b)
		}
		// Hugging Face drops len(prefix) bytes of b without checking
		// that they are the prefix.
		joined := mg.a + mg.b
		if len(mg.b) >= len(m.prefix) {
			joined = mg.a + mg.b[len(m.prefix):]
		}
		id, ok := vocab[joined]
		if !ok {
			return nil, nil, fmt.Errorf("merge %d (%q %q) makes %q, which is missing from the vocab", i, mg.a, mg.b, joined)
		}
		m.merges[pairKey(int32(a), int32(b))] = mergeRule{rank: int32(i), id: int32(id)}
	}
	for b := range m.fallbackIDs {
		m.fallbackIDs[b] = -1
		if id, ok := vocab[fmt.Sprintf("<0x%02X>", b)]; ok && m.byteFallback {
			m.fallbackIDs[b] = int32(id)
		}
	}
	if mj.UnkToken != nil {
		if id, ok := vocab[*mj.UnkToken]; ok {
			m.unk = int32(id)
		}
	}
	if _, ok := vocab["▁"]; ok && !byteLevel && !m.ignoreMerges && m.prefix == "" && m.suffix == "" && chunkSafe(vocab, "▁") {
		m.chunkSep = "▁"
	}
	var strays map[string]int
	if byteLevel {
		m.vocab = make(map[string]int32, len(vocab))
		for tok, id := range vocab {
			if b, ok := byteLevelDecode(tok); ok {
				m.vocab[string(b)] = int32(id)
			} else {
				if strays == nil {
					strays = make(map[string]int)
				}
				strays[tok] = id
			}
		}
		for _, s := range []*string{&m.prefix, &m.suffix} {
			if b, ok := byteLevelDecode(*s); ok {
				*s = string(b)
			} else {
				return nil, nil, fmt.Errorf("continuing_subword_prefix or end_of_word_suffix %q is outside the byte-level alphabet", *s)
			}
		}
	} else {
		m.vocab = make(map[string]int32, len(vocab))
		for tok, id := range vocab {
			m.vocab[tok] = int32(id)
		}
	}
	for b := range m.byteIDs {
		m.byteIDs[b] = -1
		if id, ok := m.vocab[string([]byte{byte(b)})]; ok && m.byteDomain {
			m.byteIDs[b] = id
		}
	}
	return m, strays, nil
}

// build fills the id tables and the added-token tries. vocab is the model
// vocabulary as written in the file. With hfIDs, added tokens get their
// ids the way Hugging Face assigns them when it loads a file (the "id"
// fields are only checked there): an earlier added token with the same
// content keeps its id, content found in the model vocabulary takes the
// model's id, and other tokens are numbered from the vocabulary size on.
func (t *Tokenizer) build(vocab map[string]int, added []addedToken, hfIDs bool) error {
	for tok, id := range vocab {
		if id < 0 || id >= maxID {
			return fmt.Errorf("token %q has id %d, outside [0, %d)", tok, id, maxID)
		}
	}
	t.added = make(map[string]int, len(added))
	byID := make(map[int]addedToken, len(added))
	next := len(vocab)
	for _, a := range added {
		if a.Content == "" {
			continue
		}
		if hfIDs {
			if id, ok := t.added[a.Content]; ok {
				a.ID = id
			} else if id, ok := vocab[a.Content]; ok {
				a.ID = id
			} else {
				a.ID = next
				next++
			}
		}
		if a.ID < 0 || a.ID >= maxID {
			return fmt.Errorf("added token %q has id %d, outside [0, %d)", a.Content, a.ID, maxID)
		}
		t.added[a.Content] = a.ID
		byID[a.ID] = a
	}
	n := 0
	for _, id := range vocab {
		n = max(n, id+1)
	}
	for id := range byID {
		n = max(n, id+1)
	}
	t.tokens = make([]string, n)
	for tok, id := range vocab {
		t.tokens[id] = tok
	}
	t.special = make([]bool, n)
	var raw, normed []addedToken
	for _, a := range byID {
		if a.Normalized {
			// Matched in the normalized text, after the raw-text tokens,
			// even when there is no normalizer. Decoding gives the
			// normalized form too, as in Hugging Face.
			if t.norm != nil {
				a.Content = t.norm.normalize(a.Content)
			}
			normed = append(normed, a)
		} else {
			raw = append(raw, a)
		}
		t.tokens[a.ID] = a.Content
		t.special[a.ID] = a.Special
	}
	// Map iteration order must not decide which of two tokens with the
	// same pattern wins.
	byIDOrder := func(a, b addedToken) int { return a.ID - b.ID }
	slices.SortFunc(raw, byIDOrder)
	slices.SortFunc(normed, byIDOrder)
	content := func(a addedToken) string { return a.Content }
	t.raw = newAddedTrie(raw, content)
	t.normTrie = newAddedTrie(normed, content)
	// All token bytes live in one array: one allocation instead of one
	// per token.
	_, t.byteLevel = t.dec.(byteLevelDec)
	t.bytesOff = make([]uint32, n+1)
	arena := make([]byte, 0, 8*n)
	for id, tok := range t.tokens {
		t.bytesOff[id] = uint32(len(arena))
		switch {
		case tok == "":
		case t.byteLevel:
			arena = appendByteLevelToken(arena, tok)
		case t.dec == nil:
			arena = append(arena, tok...)
		default:
			arena = append(arena, t.dec.tokenBytes(tok)...)
		}
	}
	t.bytesOff[n] = uint32(len(arena))
	t.bytes = arena
	t.bos, t.eos = -1, -1
	return nil
}

// maxID bounds token ids, so that a corrupt file cannot make the id
// tables huge. The largest real vocabularies have about 262K tokens.
const maxID = 1 << 24
