package synth

import (
	"encoding/json"
	"github.com/aiperf/toolkit/lib/internal/fixture"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/tokenizer"
	"github.com/klauspost/compress/zstd"
)

// verdict is what must become of a tokenizer built with a component.
type verdict int

const (
	// exact: synthesis accepts it and every prompt re-encodes to the
	// asked length.
	exact verdict = iota
	// refusedLoad: the tokenizer loader refuses it as unsupported.
	refusedLoad
	// refusedSynth: the tokenizer loads (it encodes like Hugging Face),
	// but synthesis refuses it, with a reason.
	refusedSynth
)

func (v verdict) String() string {
	return [...]string{"exact", "refused at load", "refused for synthesis"}[v]
}

// Every normalizer and pre-tokenizer type of Hugging Face's tokenizers, in
// the configurations that matter for synthesis, on a byte-level (GPT-2) or a
// SentencePiece-style base. Each must be either refused (by the tokenizer
// loader, as unsupported, or by synthesis, with a reason) or give prompts of
// exactly the asked length: never silently wrong. want is the verdict each
// case must get, so a component that moves from exact to refused (or the
// other way) fails the test until the table says so.
var componentCases = []struct {
	name, base, normalizer, preTokenizer, decoder string
	want                                          verdict
}{
	// Normalizers.
	{"NFC", "bl", `{"type":"NFC"}`, "", "", exact},
	{"NFD", "bl", `{"type":"NFD"}`, "", "", exact},
	{"NFKC", "bl", `{"type":"NFKC"}`, "", "", exact},
	{"NFKD", "bl", `{"type":"NFKD"}`, "", "", exact},
	{"Lowercase", "bl", `{"type":"Lowercase"}`, "", "", exact},
	{"Strip-both", "bl", `{"type":"Strip","strip_left":true,"strip_right":true}`, "", "", exact},
	{"Strip-left", "bl", `{"type":"Strip","strip_left":true,"strip_right":false}`, "", "", exact},
	{"Strip-right", "bl", `{"type":"Strip","strip_left":false,"strip_right":true}`, "", "", exact},
	{"Strip-llama3-style", "bl", `{"type":"Sequence","normalizers":[{"type":"Strip","strip_left":true,"strip_right":true},{"type":"NFC"}]}`, `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}]}`, "", exact},
	{"Replace-literal", "bl", `{"type":"Replace","pattern":{"String":"\n"},"content":" "}`, "", "", exact},
	{"Replace-regex", "bl", `{"type":"Replace","pattern":{"Regex":" {2,}"},"content":" "}`, "", "", exact},
	{"Replace-growing", "bl", `{"type":"Replace","pattern":{"String":"e"},"content":"ee"}`, "", "", refusedSynth},
	{"Prepend-space", "bl", `{"type":"Prepend","prepend":" "}`, "", "", refusedSynth},
	{"Prepend-sp", "sp", `{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]}`, "null", `{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]}`, exact},
	{"Replace-sp-gemma-style", "sp", `{"type":"Replace","pattern":{"String":" "},"content":"▁"}`, `{"type":"Split","pattern":{"String":" "},"behavior":"MergedWithPrevious","invert":false}`, `{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},{"type":"ByteFallback"},{"type":"Fuse"}]}`, exact},
	{"BertNormalizer", "bl", `{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true}`, "", "", refusedLoad},
	{"StripAccents", "bl", `{"type":"StripAccents"}`, "", "", refusedLoad},
	{"Nmt", "bl", `{"type":"Nmt"}`, "", "", refusedLoad},
	{"Precompiled", "bl", `{"type":"Precompiled","precompiled_charsmap":""}`, "", "", refusedLoad},
	{"ByteLevel-normalizer", "bl", `{"type":"ByteLevel"}`, "", "", refusedLoad},
	// Pre-tokenizers.
	{"ByteLevel", "bl", "", `{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true}`, "", exact},
	{"ByteLevel-prefix", "bl", "", `{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}`, "", exact},
	{"ByteLevel-noregex", "bl", "", `{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}`, "", refusedSynth},
	{"ByteLevel-prefix-after-split", "bl", "", `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":false}]}`, "", exact},
	{"Split-Isolated", "bl", "", `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\s+"},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]}`, "", exact},
	{"Split-Removed", "bl", "", `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\s+"},"behavior":"Removed","invert":false},{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]}`, "", refusedSynth},
	{"Split-Removed-invert", "bl", "", `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\S+"},"behavior":"Removed","invert":true},{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]}`, "", refusedSynth},
	{"Split-Contiguous", "bl", "", `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"[\\p{P}\\p{S}]"},"behavior":"Contiguous","invert":false},{"type":"ByteLevel","add_prefix_space":false,"use_regex":true}]}`, "", exact},
	{"Split-Contiguous-space", "bl", "", `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"String":" "},"behavior":"Contiguous","invert":false},{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]}`, "", exact},
	{"Split-MergedWithPrevious", "bl", "", `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"String":" "},"behavior":"MergedWithPrevious","invert":false},{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]}`, "", refusedSynth},
	{"Split-MergedWithNext", "bl", "", `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"String":" "},"behavior":"MergedWithNext","invert":false},{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]}`, "", exact},
	{"Split-fixed-width", "bl", "", `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":".{1,4}"},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]}`, "", exact},
	{"Digits", "bl", "", `{"type":"Sequence","pretokenizers":[{"type":"Digits","individual_digits":true},{"type":"ByteLevel","add_prefix_space":false,"use_regex":true}]}`, "", exact},
	{"Digits-contiguous", "bl", "", `{"type":"Sequence","pretokenizers":[{"type":"Digits","individual_digits":false},{"type":"ByteLevel","add_prefix_space":false,"use_regex":true}]}`, "", exact},
	{"Metaspace-always", "sp", "", `{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true}`, `{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true}`, exact},
	{"Metaspace-first", "sp", "", `{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true}`, `{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true}`, exact},
	{"Metaspace-never-nosplit", "sp", "", `{"type":"Metaspace","replacement":"▁","prepend_scheme":"never","split":false}`, `{"type":"Metaspace","replacement":"▁","prepend_scheme":"never","split":false}`, exact},
	{"BertPreTokenizer", "bl", "", `{"type":"BertPreTokenizer"}`, "", refusedLoad},
	{"Whitespace", "bl", "", `{"type":"Whitespace"}`, "", refusedLoad},
	{"WhitespaceSplit", "bl", "", `{"type":"WhitespaceSplit"}`, "", refusedLoad},
	{"Punctuation", "bl", "", `{"type":"Punctuation","behavior":"Isolated"}`, "", refusedLoad},
	{"CharDelimiterSplit", "bl", "", `{"type":"CharDelimiterSplit","delimiter":" "}`, "", refusedLoad},
	{"UnicodeScripts", "bl", "", `{"type":"UnicodeScripts"}`, "", refusedLoad},
	{"FixedLength", "bl", "", `{"type":"FixedLength","length":5}`, "", refusedLoad},
	{"no-decoder", "bl", "", "", "null", refusedSynth},
}

// baseJSON returns the decoded tokenizer.json of a base: "bl" is GPT-2,
// "sp" the SentencePiece-style synthetic tokenizer.
func baseJSON(t *testing.T, base string) map[string]json.RawMessage {
	t.Helper()
	path := filepath.Join("..", "tokenizer", "testdata", "gpt2", "tokenizer.json.zst")
	if base == "sp" {
		path = filepath.Join("..", "tokenizer", "testdata", "synthetic", "sp-metaspace.json.zst")
	}
	z, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	data, err := d.DecodeAll(z, nil)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestComponentsExactOrRefused(t *testing.T) {
	fixture.SkipChecked(t, raceEnabled)
	text, err := CorpusText()
	if err != nil {
		t.Fatal(err)
	}
	rows := mooncake(t)[:40]
	if testing.Short() || raceEnabled {
		rows = rows[:4]
	}
	bases := map[string]map[string]json.RawMessage{"bl": baseJSON(t, "bl"), "sp": baseJSON(t, "sp")}
	for i, cc := range componentCases {
		t.Run(cc.name, func(t *testing.T) {
			if raceEnabled && i%4 != 0 {
				// ~1 s each under -race; make test checks every one
				// without -race first.
				t.Skip("under -race every fourth component: make test checks all without -race")
			}
			t.Parallel()
			m := make(map[string]json.RawMessage)
			for k, v := range bases[cc.base] {
				m[k] = v
			}
			for k, v := range map[string]string{"normalizer": cc.normalizer, "pre_tokenizer": cc.preTokenizer, "decoder": cc.decoder} {
				if v != "" {
					m[k] = json.RawMessage(v)
				}
			}
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := tokenizer.Parse(data, nil, cc.name)
			if err != nil {
				if !strings.Contains(err.Error(), "unsupported") {
					t.Fatalf("refused at load without saying it is unsupported: %v", err)
				}
				if cc.want != refusedLoad {
					t.Fatalf("refused at load, want %v: %v", cc.want, err)
				}
				t.Logf("refused at load: %v", err)
				return
			}
			if cc.want == refusedLoad {
				t.Fatalf("loaded, want %v", cc.want)
			}
			c, err := NewCorpus(tok, text)
			if err == nil {
				_, err = New(c, Options{Seed: 7})
			}
			if err != nil {
				if !strings.HasPrefix(err.Error(), "synth: ") {
					t.Fatalf("refused without the synth prefix: %v", err)
				}
				if cc.want != refusedSynth {
					t.Fatalf("refused for synthesis, want %v: %v", cc.want, err)
				}
				t.Logf("refused for synthesis: %v", err)
				return
			}
			if cc.want != exact {
				t.Fatalf("accepted for synthesis, want %v", cc.want)
			}
			// A row synthesis rejects with an error is not wrong (a
			// tokenizer whose windows all hold two or more tokens cannot
			// make a one-token block); a prompt of the wrong length is.
			bad, n := exactLengthsOr(t, c, rows, true)
			if n < len(rows) {
				t.Errorf("only %d of %d rows and plain prompts made", n, len(rows)+5)
			}
			t.Logf("exact: %d prompts, %d mismatches; %d cuts, %d lead cuts, strip lead %v", n, bad, c.Cuts(), c.LeadCuts(), c.stripLead)
		})
	}
}
