package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/internal/fixture"
	"github.com/aiperf/toolkit/lib/tokenizer/internal/ucd"
)

// unicodeGolden is what Hugging Face's tokenizers do with every code point
// (scripts/golden/gen-unicode.js).
type unicodeGolden struct {
	Kind    string          `json:"kind"`
	Pattern string          `json:"pattern"`
	Ranges  ucd.Ranges      `json:"ranges"`
	Type    string          `json:"type"`
	RawChg  json.RawMessage `json:"changed"`
}

func readUnicodeGolden(t *testing.T) []unicodeGolden {
	t.Helper()
	z, err := readTestdata("golden/unicode.jsonl.zst")
	if err != nil {
		t.Fatal(err)
	}
	var out []unicodeGolden
	sc := bufio.NewScanner(bytes.NewReader(z))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var g unicodeGolden
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

// allCodePoints calls fn for every code point but the surrogates, or under
// -short and -race for every 13th and the ends of the ranges in hint.
func allCodePoints(hint ucd.Ranges, fn func(r rune)) {
	if !testing.Short() && raceSlowdown == 1 {
		for r := rune(0); r <= 0x10ffff; r++ {
			if r < 0xd800 || r > 0xdfff {
				fn(r)
			}
		}
		return
	}
	seen := map[rune]bool{}
	visit := func(r rune) {
		if r >= 0 && r <= 0x10ffff && (r < 0xd800 || r > 0xdfff) && !seen[r] {
			seen[r] = true
			fn(r)
		}
	}
	for r := rune(0); r <= 0x10ffff; r += 13 {
		visit(r)
	}
	for _, h := range hint {
		visit(h[0] - 1)
		visit(h[0])
		visit(h[1])
		visit(h[1] + 1)
	}
}

// patternSet returns the code points a one-character pattern matches, by
// the rules toRegexp2 writes.
func patternSet(p string) (ucd.Ranges, error) {
	switch {
	case p == ".":
		return ucd.Complement(ucd.Ranges{{'\n', '\n'}}), nil
	case strings.HasPrefix(p, "["):
		rs, n, err := parseClass(p)
		if err == nil && n != len(p) {
			err = fmt.Errorf("class ends at %d of %d", n, len(p))
		}
		return rs, err
	case strings.HasPrefix(p, `\`):
		rs, lit, n, err := parseEscape(p, false)
		if err == nil && lit >= 0 {
			rs = ucd.Ranges{{lit, lit}}
		}
		if err == nil && (n != len(p) || rs == nil) {
			err = fmt.Errorf("not a class escape")
		}
		return rs, err
	}
	return nil, fmt.Errorf("not a class")
}

func diffRanges(got, want ucd.Ranges) string {
	var extra, missing []string
	allCodePoints(append(slices.Clone(got), want...), func(r rune) {
		g, w := got.Contains(r), want.Contains(r)
		switch {
		case g && !w && len(extra) < 8:
			extra = append(extra, fmt.Sprintf("U+%04X", r))
		case w && !g && len(missing) < 8:
			missing = append(missing, fmt.Sprintf("U+%04X", r))
		}
	})
	if len(extra)+len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("extra %v, missing %v", extra, missing)
}

// TestUnicodeClasses compares every character class of the golden, as
// toRegexp2 defines it, with the code points Oniguruma matched in Hugging
// Face; and the scanners' classes with \p{L}, \p{N}, \s and o200k's cases.
func TestUnicodeClasses(t *testing.T) {
	fixture.SkipChecked(t, raceSlowdown > 1)
	t.Parallel()
	golden := readUnicodeGolden(t)
	byPattern := map[string]ucd.Ranges{}
	for _, g := range golden {
		if g.Kind != "class" {
			continue
		}
		byPattern[g.Pattern] = g.Ranges
		got, err := patternSet(g.Pattern)
		if err != nil {
			t.Errorf("%s: %v", g.Pattern, err)
			continue
		}
		if d := diffRanges(got, g.Ranges); d != "" {
			t.Errorf("%s: %s", g.Pattern, d)
		}
	}
	checks := []struct {
		name string
		want ucd.Ranges
		got  func(r rune) bool
	}{
		{"scanner letters", byPattern[`\p{L}`], func(r rune) bool { return runeClass(r) == cLetter }},
		{"scanner numbers", byPattern[`\p{N}`], func(r rune) bool { return runeClass(r) == cNumber }},
		{"scanner spaces", byPattern[`\s`], func(r rune) bool { return runeClass(r) == cSpace }},
		{"o200k upper", byPattern[`[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`], func(r rune) bool { k, _ := caseAt(string(r), 0); return k&oUpper != 0 }},
		{"o200k lower", byPattern[`[\p{Ll}\p{Lm}\p{Lo}\p{M}]`], func(r rune) bool { k, _ := caseAt(string(r), 0); return k&oLower != 0 }},
	}
	for _, c := range checks {
		if len(c.want) == 0 {
			t.Fatalf("%s: no golden", c.name)
		}
		bad := 0
		allCodePoints(c.want, func(r rune) {
			if c.got(r) != c.want.Contains(r) {
				if bad++; bad <= 5 {
					t.Errorf("%s: U+%04X: got %v, HF %v", c.name, r, c.got(r), c.want.Contains(r))
				}
			}
		})
	}
}

// TestUnicodeClassesRegexp2 runs each class through regexp2 as
// compileRegex writes it, on a sample of code points around the class's
// edges, and compares what matches with Hugging Face.
func TestUnicodeClassesRegexp2(t *testing.T) {
	fixture.SkipChecked(t, raceSlowdown > 1)
	t.Parallel()
	for _, g := range readUnicodeGolden(t) {
		if g.Kind != "class" {
			continue
		}
		var sample []rune
		seen := map[rune]bool{}
		add := func(r rune) {
			if r >= 0 && r <= 0x10ffff && (r < 0xd800 || r > 0xdfff) && !seen[r] {
				seen[r] = true
				sample = append(sample, r)
			}
		}
		for r := rune(0); r < 0x10ffff; r += 1021 {
			add(r)
		}
		for i, h := range g.Ranges {
			if i%3 == 0 || len(g.Ranges) < 300 {
				add(h[0] - 1)
				add(h[0])
				add(h[1])
				add(h[1] + 1)
			}
		}
		m, err := compileRegex("(?:" + g.Pattern + ")")
		if err != nil {
			t.Errorf("%s: %v", g.Pattern, err)
			continue
		}
		text := string(sample)
		matched := map[int]bool{}
		for _, sp := range m.find(text, nil) {
			matched[sp[0]] = true
		}
		bad := 0
		for i := range text {
			r, _ := utf8.DecodeRuneInString(text[i:])
			if matched[i] != g.Ranges.Contains(r) {
				if bad++; bad <= 3 {
					t.Errorf("%s: U+%04X: regexp2 matched %v, HF %v", g.Pattern, r, matched[i], !matched[i])
				}
			}
		}
	}
}

// TestUnicodeNormalizers compares NFC, NFD, NFKC, NFKD and Lowercase of
// every code point on its own, and the Digits pre-tokenizer's digits, with
// Hugging Face.
func TestUnicodeNormalizers(t *testing.T) {
	fixture.SkipChecked(t, raceSlowdown > 1)
	t.Parallel()
	for _, g := range readUnicodeGolden(t) {
		switch g.Kind {
		case "normalizer":
			var changed [][2]json.RawMessage
			if err := json.Unmarshal(g.RawChg, &changed); err != nil {
				t.Fatal(err)
			}
			want := map[rune]string{}
			var hint ucd.Ranges
			for _, c := range changed {
				var cp rune
				var to []rune
				if json.Unmarshal(c[0], &cp) != nil || json.Unmarshal(c[1], &to) != nil {
					t.Fatalf("%s: bad entry", g.Type)
				}
				want[cp] = string(to)
				hint = append(hint, [2]rune{cp, cp})
			}
			n, err := parseNormalizer(json.RawMessage(fmt.Sprintf(`{"type":%q}`, g.Type)))
			if err != nil {
				t.Fatal(err)
			}
			bad := 0
			allCodePoints(hint, func(r rune) {
				w, ok := want[r]
				if !ok {
					w = string(r)
				}
				if got := n.normalize(string(r)); got != w {
					if bad++; bad <= 5 {
						t.Errorf("%s(U+%04X) = %+q, HF %+q", g.Type, r, got, w)
					}
				}
			})
		case "digits":
			bad := 0
			allCodePoints(g.Ranges, func(r rune) {
				if got := ucd.IsNumeric(r); got != g.Ranges.Contains(r) {
					if bad++; bad <= 5 {
						t.Errorf("Digits: U+%04X: numeric %v, HF %v", r, got, !got)
					}
				}
			})
		}
	}
}

// readTestdata reads a zstd-compressed file under testdata.
func readTestdata(name string) ([]byte, error) {
	z, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		return nil, err
	}
	return unzstd(z)
}
