package synth

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/aiperf/toolkit/lib/tokenizer"
)

func TestZZDigest(t *testing.T) {
	text, _ := CorpusText()
	dir := os.Getenv("AIPERF_TOKENIZER_FIXTURES")
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "tokenizer.json"))
	paths = append(paths, "builtin", "../tokenizer/testdata/gpt2/tokenizer.json.zst")
	rows := mooncake(t)[:200]
	for _, p := range paths {
		var tok *tokenizer.Tokenizer
		var err error
		if p == "builtin" {
			tok, err = tokenizer.Builtin()
		} else {
			tok, err = tokenizer.Load(p)
		}
		if err != nil {
			continue
		}
		c, err := NewCorpus(tok, text)
		if err != nil {
			fmt.Println(p, err)
			continue
		}
		s, err := New(c, Options{Seed: 3})
		if err != nil {
			fmt.Println(p, err)
			continue
		}
		h := sha256.New()
		for i, r := range rows {
			lit, _ := s.AppendPrompt(nil, int64(i+1), r.InputLength, r.HashIDs)
			h.Write(lit)
		}
		for i, n := range []int{5, 600, 3000} {
			lit, _ := s.AppendPrompt(nil, int64(5000+i), n, nil)
			h.Write(lit)
		}
		fmt.Printf("%s %x cuts=%d\n", filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p), h.Sum(nil)[:8], c.Cuts())
	}
}
