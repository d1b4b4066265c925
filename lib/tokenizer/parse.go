package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aiperf/toolkit/lib/jsonx"
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

	strs    strArena // Vocab's keys and Merges' strings
	scratch []byte
}

// arenaString reads the JSON string at data[i] into m's arena and returns
// it and the index past it.
func (m *bpeJSON) arenaString(data []byte, i int) (string, int, error) {
	if data[i] != '"' {
		return "", i, &jsonx.SyntaxError{Offset: i, Msg: "expected a string"}
	}
	end, err := jsonx.SkipString(data, i)
	if err != nil {
		return "", end, err
	}
	m.scratch, err = jsonx.AppendUnquote(m.scratch[:0], data[i:end])
	return m.strs.str(m.scratch), end, err
}

// mergeJSON is one merge, written either as "a b" (older files) or as
// ["a", "b"].
type mergeJSON struct{ a, b string }

// readFileJSON reads tokenizer.json. encoding/json validates and scans the
// input several times over for RawMessage fields and custom unmarshalers,
// which made loading Qwen3 take about 0.6 s; so the large parts (the
// vocabulary and the merges, hundreds of thousands of entries) are read
// here with jsonx in one pass, and only the small values are cut out and
// handed to encoding/json.
func readFileJSON(data []byte) (*fileJSON, error) {
	var f fileJSON
	small := map[string]any{
		"version": &f.Version, "added_tokens": &f.AddedTokens, "normalizer": &f.Normalizer,
		"pre_tokenizer": &f.PreTokenizer, "decoder": &f.Decoder,
	}
	end, err := readObject(data, jsonx.SkipSpace(data, 0), small, func(key string, i int) (int, error) {
		if key != "model" || data[i] == 'n' {
			return jsonx.Skip(data, i)
		}
		f.Model = new(bpeJSON)
		return readModelJSON(data, i, f.Model)
	})
	if end = jsonx.SkipSpace(data, end); err == nil && end != len(data) {
		err = &jsonx.SyntaxError{Offset: end, Msg: "data after the top-level object"}
	}
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// readObject reads the JSON object at data[i] and returns the index past
// it. The value of a key in small is decoded into small[key] with
// encoding/json; other reads (or skips) the others.
func readObject(data []byte, i int, small map[string]any, other func(key string, i int) (int, error)) (int, error) {
	return jsonx.WalkFields(data, i, func(key []byte, i int) (int, error) {
		k, err := jsonx.Unquote(key)
		if err != nil {
			return i, err
		}
		dst, ok := small[k]
		if !ok {
			return other(k, i)
		}
		end, err := jsonx.Skip(data, i)
		if err != nil {
			return end, err
		}
		return end, json.Unmarshal(data[i:end], dst)
	})
}

// readModelJSON reads the model object at data[i] into m and returns the
// index past it.
func readModelJSON(data []byte, i int, m *bpeJSON) (int, error) {
	small := map[string]any{
		"type": &m.Type, "unk_token": &m.UnkToken, "continuing_subword_prefix": &m.ContinuingSubwordPrefix,
		"end_of_word_suffix": &m.EndOfWordSuffix, "fuse_unk": &m.FuseUnk, "byte_fallback": &m.ByteFallback,
		"ignore_merges": &m.IgnoreMerges, "dropout": &m.Dropout,
	}
	return readObject(data, i, small, func(key string, i int) (int, error) {
		switch key {
		case "vocab":
			if data[i] != '{' {
				return jsonx.Skip(data, i) // Unigram's list; rejected by type
			}
			m.vocabIsMap = true
			m.Vocab = make(map[string]int, min(len(data)/64, 1<<18))
			return jsonx.WalkFields(data, i, func(key []byte, i int) (int, error) {
				var err error
				if m.scratch, err = jsonx.AppendUnquote(m.scratch[:0], key); err != nil {
					return i, err
				}
				id, end, err := jsonInt(data, i)
				m.Vocab[m.strs.str(m.scratch)] = id
				return end, err
			})
		case "merges":
			m.hasMerges = true
			if m.Merges == nil {
				// Files list the vocab first, and there are about as many
				// merges: this spares copying a large slice of strings.
				m.Merges = make([]mergeJSON, 0, len(m.Vocab))
			}
			return jsonx.WalkElements(data, i, func(_, i int) (int, error) {
				switch data[i] {
				case '"':
					line, end, err := m.arenaString(data, i)
					if err != nil || strings.HasPrefix(line, "#version") {
						return end, err
					}
					// Like Hugging Face: exactly one space.
					a, b, ok := strings.Cut(line, " ")
					if !ok || strings.Contains(b, " ") {
						return end, fmt.Errorf("bad merge %q", line)
					}
					m.Merges = append(m.Merges, mergeJSON{a, b})
					return end, nil
				case '[':
					var buf [2]string // no allocation for the usual pair
					pair := buf[:0]
					end, err := jsonx.WalkElements(data, i, func(_, i int) (int, error) {
						p, end, err := m.arenaString(data, i)
						pair = append(pair, p)
						return end, err
					})
					if err != nil {
						return end, err
					}
					if len(pair) != 2 {
						return end, fmt.Errorf("bad merge %q", slices.Clone(pair))
					}
					m.Merges = append(m.Merges, mergeJSON{pair[0], pair[1]})
					return end, nil
				}
				return i, &jsonx.SyntaxError{Offset: i, Msg: "bad merge"}
			})
		}
		return jsonx.Skip(data, i)
	})
}

// jsonInt reads the JSON integer at data[i] (negative ones too: the caller
// reports those as out of range) and returns it and the index past it.
func jsonInt(data []byte, i int) (int, int, error) {
	end, err := jsonx.SkipNumber(data, i)
	if err == nil {
		lit, neg := data[i:end], data[i] == '-'
		if neg {
			lit = lit[1:]
		}
		if u, ok := jsonx.ParseUint(lit); ok && (u <= math.MaxInt || neg && u == -math.MinInt) {
			if neg {
				return -int(u), end, nil
			}
			return int(u), end, nil
		}
	}
	return 0, i, &jsonx.SyntaxError{Offset: i, Msg: "expected an integer"}
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
	var joined []byte // scratch: a map lookup of string(joined) does not allocate
	for i, mg := range mj.Merges {
		a, ok1 := vocab[mg.a]
		b, ok2 := vocab[mg.b]
		if !ok1 || !ok2 {
			return nil, nil, fmt.Errorf("merge %d (%q %q) uses a token missing from the vocab", i, mg.a, mg.b)
		}
		// Hugging Face drops len(prefix) bytes of b without checking
		// that they are the prefix.
		joined = append(joined[:0], mg.a...)
		if len(mg.b) >= len(m.prefix) {
			joined = append(joined, mg.b[len(m.prefix):]...)
		} else {
			joined = append(joined, mg.b...)
		}
		id, ok := vocab[string(joined)]
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
	if _, ok := vocab["▁"]; ok && !byteLevel && !m.ignoreMerges && m.prefix == "" && m.suffix == "" {
		if block, ok := chunkBlockers(vocab, "▁"); ok {
			m.chunkSep, m.chunkBlock = "▁", block
		}
	}
	var strays map[string]int
	if byteLevel {
		m.vocab = make(map[string]int32, len(vocab))
		var strs strArena
		var b []byte
		for tok, id := range vocab {
			var ok bool
			if b, ok = appendByteLevelDecode(b[:0], tok); ok {
				m.vocab[strs.str(b)] = int32(id)
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
