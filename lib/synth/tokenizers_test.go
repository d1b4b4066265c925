package synth

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aiperf/toolkit/lib/tokenizer"
)

// TestExactLengthTokenizers runs the exact-length check with every other real
// tokenizer available: GPT-2 (committed) and, when scripts/golden/fetch.sh has
// put them in AIPERF_TOKENIZER_FIXTURES, Llama-3 (ignore_merges), Llama-2
// (SentencePiece-style, byte fallback), cl100k and o200k.
func TestExactLengthTokenizers(t *testing.T) {
	paths := map[string]string{"gpt2": filepath.Join("..", "tokenizer", "testdata", "gpt2", "tokenizer.json.zst")}
	if dir := os.Getenv("AIPERF_TOKENIZER_FIXTURES"); dir != "" {
		for _, name := range []string{"llama3", "llama2", "gpt35turbo", "gpt4o"} {
			p := filepath.Join(dir, name, "tokenizer.json")
			if _, err := os.Stat(p); err == nil {
				paths[name] = p
			}
		}
	}
	text, err := CorpusText()
	if err != nil {
		t.Fatal(err)
	}
	rows := mooncake(t)
	n := 60
	if testing.Short() || raceEnabled {
		n = 8
	}
	rows = rows[:n]
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			tok, err := tokenizer.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			c, err := NewCorpus(tok, text)
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(c, Options{Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			check := func(line int64, want int, ids []uint64) {
				lit, err := s.AppendPrompt(nil, line, want, ids)
				if err != nil {
					t.Fatalf("line %d: %v", line, err)
				}
				if got := len(tok.Encode(decodePrompt(t, lit))); got != want {
					t.Errorf("line %d: prompt re-encodes to %d tokens, want %d", line, got, want)
				}
			}
			for i, r := range rows {
				check(int64(i+1), r.InputLength, r.HashIDs)
			}
			for i, want := range []int{1, 2, 17, 511, 4000} {
				check(int64(10000+i), want, nil)
			}
			sep, hasSep := tok.BlockSeparator()
			t.Logf("%s: %d rows exact; corpus %d tokens, %d cuts; separator %d (%v); strip lead %v", name, len(rows)+5, c.Tokens(), c.Cuts(), sep, hasSep, s.stripLead)
		})
	}
}
