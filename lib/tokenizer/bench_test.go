package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// englishText returns about 1 MB of English: the Gutenberg texts of
// go-sentencepiece when AIPERF_BENCH_TEXT names a file, else the corpus.
func englishText(b *testing.B) string {
	if p := os.Getenv("AIPERF_BENCH_TEXT"); p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		return string(data)
	}
	var sb strings.Builder
	for _, g := range readGolden(b, "qwen3") {
		sb.WriteString(g.Text)
		sb.WriteByte('\n')
	}
	return sb.String()
}

func BenchmarkEncode(b *testing.B) {
	tk := builtinT(b)
	s := englishText(b)
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	for b.Loop() {
		tk.Encode(s)
	}
}

func BenchmarkEncodeLongRun(b *testing.B) {
	tk := builtinT(b)
	s := strings.Repeat("a", 100000)
	for b.Loop() {
		tk.Encode(s)
	}
}

func BenchmarkLoadBuiltin(b *testing.B) {
	for b.Loop() {
		if _, err := loadBuiltin(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadGPT2(b *testing.B) {
	p := filepath.Join("testdata", "gpt2", "tokenizer.json.zst")
	for b.Loop() {
		if _, err := Load(p); err != nil {
			b.Fatal(err)
		}
	}
}
