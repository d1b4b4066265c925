package synth

import (
	"testing"
	"time"
)

func TestZZTime(t *testing.T) {
	text, _ := CorpusText()
	for _, name := range []string{"qwen3", "deepseek_v3", "gemma3"} {
		st := time.Now()
		tok := loadTokenizer(t, name)
		lt := time.Since(st)
		st = time.Now()
		c, err := NewCorpus(tok, text)
		if err != nil {
			t.Fatal(err)
		}
		ct := time.Since(st)
		st = time.Now()
		rows := mooncake(t)
		bad, n := exactLengths(t, c, rows)
		t.Logf("%s load %v corpus %v exact %v (%d/%d)", name, lt, ct, time.Since(st), bad, n)
	}
}
