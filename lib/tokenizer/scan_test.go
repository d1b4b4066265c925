package tokenizer

import (
	"slices"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/internal/fixture"
)

var scannerPatterns = []struct {
	name, pattern string
}{
	{"gpt2", gpt2Pattern},
	{"cl100k", cl100kPattern},
	{"qwen", qwenPattern},
	{"o200k", o200kPattern},
	{"deepseek-digits", deepseekDigits},
	{"deepseek-cjk", deepseekCJK},
	{"deepseek-main", deepseekMain},
}

// scanSamples are strings that exercise the corners of the patterns.
var scanSamples = []string{
	"", "a", " ", "  ", "   x", "x   ", "\n", "\r\n", " \n ", "\n\n  x", "a \n b", "x  \n  y",
	"word\n    \nThis", "\t\tfoo", "\u00a0foo", "\u3000中文", "it's I'M we'LL 'ſ 'K ''s",
	"1234567", "١٢٣٤", "½⅓", "a1b22c333d4444", " 123", " .,;", "...\n\n", "--/\n/x",
	"Hello World", "HELLOworld", "helloWORLD", "ǅungla ǈ", "e\u0301\u0301x", "\u0301abc", ".\u0301",
	"ʰʲ modifier", "日本語テキスト", "한국어", "Привет мир", "مرحبا", "👨‍👩‍👧 🇺🇸",
	"a\xffb", "\xe2\x82", "<|endoftext|>", "x'", "'", "'re'", "don't", "DON'T", "Don'T",
	"func main() {\n\treturn\n}\n", "path/to/file\r\n\r\n", "CamelCaseWord's", "ÀÉÎõü", "ΣΊΣΥΦΟΣ",
	".word", "_Foo", "'é", "a\u0301b", "\u0301\u0301", " \u0301x", "1a", "x1", "\u200dक्ष", "म\u200cह", "中文テスト", "ひらがな",
	"\x00a", "\x00", "\t\tword", "\u3000word", " .\n\n", " \r\n", "a\u00b2b", "🪉", " 🪉x", "𐵀𐵁", "\U0002EBF0x", "\ufeffz",
}

func TestScannersMatchRegex(t *testing.T) {
	fixture.SkipChecked(t, raceSlowdown > 1)
	t.Parallel()
	samples := slices.Clone(scanSamples)
	for i, g := range readGolden(t, "qwen3") {
		// Under -race (23 s in full) every tenth text: make test runs this
		// test in full without -race first (FIXTURE_TESTS).
		if i%raceSlowdown == 0 {
			samples = append(samples, g.Text)
		}
	}
	for _, p := range scannerPatterns {
		scan := knownScanner(p.pattern)
		if scan == nil {
			t.Fatalf("%s: no scanner", p.name)
		}
		re, err := compileRegex(p.pattern)
		if err != nil {
			t.Fatal(err)
		}
		bad := 0
		for _, s := range samples {
			got, want := scan.find(s, nil), re.find(s, nil)
			if !slices.Equal(got, want) {
				if bad++; bad <= 3 {
					t.Errorf("%s: %q:\n got %v\nwant %v", p.name, truncate(s), spansText(s, got), spansText(s, want))
				}
			}
		}
	}
}

func FuzzScanners(f *testing.F) {
	for _, s := range scanSamples {
		f.Add(s)
	}
	type pair struct{ scan, re matcher }
	var ms []pair
	for _, p := range scannerPatterns {
		re, err := compileRegex(p.pattern)
		if err != nil {
			f.Fatal(err)
		}
		ms = append(ms, pair{knownScanner(p.pattern), re})
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			t.Skip("regexp2 is slow on long inputs")
		}
		for i, m := range ms {
			got, want := m.scan.find(s, nil), m.re.find(s, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: %q:\n got %v\nwant %v", scannerPatterns[i].name, s, spansText(s, got), spansText(s, want))
			}
		}
	})
}

func spansText(s string, spans [][2]int) []string {
	out := make([]string, 0, len(spans))
	for _, sp := range spans {
		out = append(out, s[sp[0]:sp[1]])
	}
	if len(out) > 30 {
		out = out[:30]
	}
	return out
}

func truncate(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return strings.Clone(s)
}

// TestKnownScannersUsed guards against a tokenizer silently falling back
// to regexp2 (correct but several times slower).
func TestKnownScannersUsed(t *testing.T) {
	t.Parallel()
	checks := []struct {
		name string
		tk   *Tokenizer
		want matcher
	}{
		{"qwen3", builtinT(t), cl100kScanner{maxDigits: 1}},
	}
	for _, c := range checks {
		sp, ok := c.tk.pre.(splitPT)
		if !ok || sp.m != c.want {
			t.Errorf("%s: pre-tokenizer is %#v, want a Split with %#v", c.name, c.tk.pre, c.want)
		}
	}
	if bl, ok := loadGPT2(t).pre.(byteLevelPT); !ok || !bl.useRegex || gpt2Matcher != (gpt2Scanner{}) {
		t.Errorf("gpt2: pre-tokenizer is %#v, want ByteLevel with the GPT-2 scanner", loadGPT2(t).pre)
	}
}
