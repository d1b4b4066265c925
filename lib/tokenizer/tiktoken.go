package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// tiktokenEncoding is what a .tiktoken rank file does not say: the split
// pattern and the special tokens. Patterns are written in the form Hugging
// Face's converted tokenizer.json files use, which split identically.
type tiktokenEncoding struct {
	pattern  string
	specials map[string]int
}

const (
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	o200kPattern  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// tiktokenEncodings are OpenAI's encodings, keyed by the rank file's name
// without ".tiktoken" (values from the tiktoken package).
var tiktokenEncodings = map[string]tiktokenEncoding{
	"r50k_base": {gpt2Pattern, map[string]int{"<|endoftext|>": 50256}},
	"p50k_base": {gpt2Pattern, map[string]int{"<|endoftext|>": 50256}},
	"cl100k_base": {cl100kPattern, map[string]int{
		"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
		"<|fim_suffix|>": 100260, "<|endofprompt|>": 100276,
	}},
	"o200k_base": {o200kPattern, map[string]int{"<|endoftext|>": 199999, "<|endofprompt|>": 200018}},
}

// LoadTiktoken reads a tiktoken rank file: one "base64(token) rank" pair
// per line, where the rank is also the token id. pattern is the
// pre-tokenizer split pattern and specials the special tokens; when
// pattern is "", both come from the file name, which must be one of
// r50k_base, p50k_base, cl100k_base or o200k_base (.tiktoken). Special
// tokens in the text are matched, as Hugging Face does and unlike
// tiktoken's encode_ordinary.
func LoadTiktoken(path, pattern string, specials map[string]int) (*Tokenizer, error) {
	name := strings.TrimSuffix(filepath.Base(path), ".tiktoken")
	if pattern == "" {
		enc, ok := tiktokenEncodings[name]
		if !ok {
			return nil, fmt.Errorf("tokenizer: %s: unknown tiktoken encoding %q; give its split pattern", path, name)
		}
		pattern = enc.pattern
		if specials == nil {
			specials = enc.specials
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := parseTiktoken(data, pattern, specials)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	t.identity = Identity{Name: name, SHA256: digest(map[string][]byte{filepath.Base(path): data})}
	return t, nil
}

func parseTiktoken(data []byte, pattern string, specials map[string]int) (*Tokenizer, error) {
	m, err := compilePattern(pattern)
	if err != nil {
		return nil, err
	}
	model := &bpe{vocab: make(map[string]int32), unk: -1, byteDomain: true, concatRanks: true}
	vocab := make(map[string]int)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		tok, rank, ok := strings.Cut(text, " ")
		if !ok {
			return nil, fmt.Errorf("line %d: want \"token rank\"", line)
		}
		b, err := base64.StdEncoding.DecodeString(tok)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		id, err := strconv.Atoi(rank)
		if err != nil || id < 0 || id >= maxID {
			return nil, fmt.Errorf("line %d: bad rank %q", line, rank)
		}
		model.vocab[string(b)] = int32(id)
		vocab[byteLevelEncode(b)] = id
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for b := range model.byteIDs {
		id, ok := model.vocab[string([]byte{byte(b)})]
		if !ok {
			return nil, fmt.Errorf("byte 0x%02X has no rank", b)
		}
		model.byteIDs[b] = id
	}
	for b := range model.fallbackIDs {
		model.fallbackIDs[b] = -1
	}
	added := make([]addedToken, 0, len(specials))
	for s, id := range specials {
		added = append(added, addedToken{ID: id, Content: s, Special: true})
	}
	t := &Tokenizer{
		pre:   splitPT{m: m, b: isolated},
		model: model,
		dec:   byteLevelDec{},
	}
	if err := t.build(vocab, added, false); err != nil {
		return nil, err
	}
	t.guessSpecials()
	return t, nil
}
