package tokenizer

import (
	"slices"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// FuzzRoundTrip checks decode(encode(x)) == x on the byte-level
// tokenizers, where it must hold exactly (Qwen3 normalizes to NFC first),
// and that EncodeWithBoundaries agrees with Encode.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range scanSamples {
		f.Add(s)
	}
	qwen, gpt2 := builtinT(f), loadGPT2(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("Hugging Face encodes only valid UTF-8")
		}
		if got := gpt2.Decode(gpt2.Encode(s)); got != s {
			t.Errorf("gpt2: Decode(Encode(%q)) = %q", s, got)
		}
		ids := qwen.Encode(s)
		if got, want := qwen.Decode(ids), norm.NFC.String(s); got != want {
			t.Errorf("qwen3: Decode(Encode(%q)) = %q, want %q", s, got, want)
		}
		ids2, starts := qwen.EncodeWithBoundaries(s)
		if !slices.Equal(ids, ids2) || len(starts) != len(ids) || (len(ids) > 0 && !starts[0]) {
			t.Errorf("qwen3: EncodeWithBoundaries(%q) = %v %v, Encode = %v", s, ids2, starts, ids)
		}
	})
}

// FuzzLoad feeds arbitrary bytes to the tokenizer.json and .tiktoken
// parsers. They must return an error or a tokenizer that can encode and
// decode without panicking.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		tinyByteLevelJSON, tinySentencePieceJSON, "{}", "null", "[]", `{"model": null}`,
		`{"model": {"type": "WordPiece"}}`, `{"model": {"type": "BPE", "vocab": {}, "merges": []}}`,
	} {
		f.Add([]byte(s))
	}
	f.Add(tinyTiktoken())
	f.Add([]byte("YQ== 0\nYg== 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if tk, err := Parse(data, nil, "fuzz"); err == nil {
			exercise(tk)
		}
		if tk, err := parseTiktoken(data, gpt2Pattern, map[string]int{"<|x|>": 3}); err == nil {
			exercise(tk)
		}
	})
}

func exercise(tk *Tokenizer) {
	for _, s := range []string{"", "Hello, wörld! <s> 123\n\n", "  <|x|>ab\u2581c", "\xff"} {
		ids := tk.Encode(s)
		tk.Decode(ids)
		tk.EncodeWithBoundaries(s)
	}
	tk.Decode([]int{-1, 0, 1, 2, 3, 1 << 30})
	tk.TokenBytes(0)
	tk.TokenID("a")
	tk.BlockSeparator()
}

// Small hand-written tokenizers: byte-level, and SentencePiece-style
// with byte fallback.
const (
	tinyByteLevelJSON = `{"version": "1.0", "added_tokens": [
  {"id": 6, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
 "normalizer": {"type": "NFC"},
 "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
 "decoder": {"type": "ByteLevel"},
 "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "Ġ": 3, "Ġab": 4, "c": 5},
  "merges": ["a b", ["Ġ", "ab"]]}}`
	tinySentencePieceJSON = `{"version": "1.0", "added_tokens": [
  {"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
 "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
 "pre_tokenizer": null,
 "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
  {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
 "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": true, "fuse_unk": true,
  "vocab": {"<unk>": 0, "<0x41>": 1, "<0xC3>": 2, "<0xB6>": 3, "▁": 4, "a": 5, "▁a": 6},
  "merges": ["▁ a"]}}`
)
