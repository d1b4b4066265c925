package tokenizer

import (
	"unicode"
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/tokenizer/internal/ucd"
)

// Hand-written scanners for the split patterns of the common tokenizers.
// Each one returns, for a start position, the end of the match that the
// backtracking regex engine would find there; the patterns below match at
// every position, so the matches tile the text. They are several times
// faster than regexp2 and are checked against it by TestScannersMatchRegex
// and FuzzScanners.

// Patterns recognised by exact text.
const (
	// Qwen2/Qwen3: cl100k with single digits.
	qwenPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// Llama-3 and cl100k_base (as Hugging Face writes it) use cl100kPattern.
)

// knownScanner returns a hand-written matcher for a split pattern it
// recognises, or nil.
func knownScanner(pat string) matcher {
	switch pat {
	case gpt2Pattern:
		return gpt2Scanner{}
	case cl100kPattern:
		return cl100kScanner{maxDigits: 3}
	case qwenPattern:
		return cl100kScanner{maxDigits: 1}
	case o200kPattern:
		return o200kScanner{}
	case deepseekDigits:
		return deepseekDigitsScanner{}
	case deepseekCJK:
		return deepseekCJKScanner{}
	case deepseekMain:
		return deepseekMainScanner{}
	}
	return nil
}

// nexter is a matcher whose matches tile the text: next returns the end of
// the match that starts at i (i < len(s)); the result is > i.
type nexter interface {
	next(s string, i int) int
}

func findTiled(n nexter, s string, dst [][2]int) [][2]int {
	for i := 0; i < len(s); {
		j := n.next(s, i)
		dst = append(dst, [2]int{i, j})
		i = j
	}
	return dst
}

// Character classes as the patterns see them: \p{L}, \p{N} (at Oniguruma's
// Unicode version, see package ucd), \s (White_Space, which Go's
// unicode.IsSpace also is) and everything else.
const (
	cLetter uint8 = 1 << iota
	cNumber
	cSpace
	cOther
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			t[c] = cLetter
		case c >= '0' && c <= '9':
			t[c] = cNumber
		case c == ' ', c >= '\t' && c <= '\r':
			t[c] = cSpace
		default:
			t[c] = cOther
		}
	}
	return t
}()

// classAt returns the class of the character at s[i] and its length.
// Invalid UTF-8 is one byte of class other, as U+FFFD is for regexp2.
func classAt(s string, i int) (uint8, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return runeClass(r), n
}

func runeClass(r rune) uint8 {
	c := ucd.Category(r)
	if k := catClass[c]; k != 0 {
		return k
	}
	if isSpaceRune(r) {
		return cSpace
	}
	return cOther
}

// catClass maps letter and number categories to their class, others to 0
// (white space is in Zs, Zl, Zp and Cc, but not all of those are white space).
var catClass = func() (t [32]uint8) {
	for c := ucd.Cat(0); c < 32; c++ {
		switch {
		case c.Letter():
			t[c] = cLetter
		case c.Number():
			t[c] = cNumber
		}
	}
	return t
}()

// isSpaceRune is \s: White_Space, which has not changed since Unicode 6.3
// (Go's table agrees with every later version).
func isSpaceRune(r rune) bool { return unicode.IsSpace(r) }

// classAtEnd is classAt that returns 0 past the end of s.
func classAtEnd(s string, i int) (uint8, int) {
	if i >= len(s) {
		return 0, 0
	}
	return classAt(s, i)
}

// run returns the end of the run of characters of class c starting at i.
func run(s string, i int, c uint8) int {
	for i < len(s) {
		if b := s[i]; b < utf8.RuneSelf {
			if asciiClass[b]&c == 0 {
				return i
			}
			i++
			continue
		}
		k, n := classAt(s, i)
		if k&c == 0 {
			return i
		}
		i += n
	}
	return i
}

// runBytes returns the end of the run of bytes in set starting at i.
func runBytes(s string, i int, set string) int {
	for i < len(s) && indexByte(set, s[i]) {
		i++
	}
	return i
}

func indexByte(set string, b byte) bool {
	for k := 0; k < len(set); k++ {
		if set[k] == b {
			return true
		}
	}
	return false
}

// contraction returns the length of 's, 't, 're, 've, 'm, 'll or 'd at the
// start of s, or 0. With fold, letters match in either case, and "s" also
// matches "ſ" (U+017F), which case-folds to it in Oniguruma (Hugging
// Face's regex engine); no other character folds to these letters.
func contraction(s string, fold bool) int {
	if len(s) < 2 || s[0] != '\'' {
		return 0
	}
	if fold && len(s) >= 3 && s[1] == 0xC5 && s[2] == 0xBF {
		return 3
	}
	lower := func(b byte) byte {
		if fold && b >= 'A' && b <= 'Z' {
			return b + 'a' - 'A'
		}
		return b
	}
	switch lower(s[1]) {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if len(s) >= 3 && lower(s[2]) == 'e' {
			return 3
		}
	case 'l':
		if len(s) >= 3 && lower(s[2]) == 'l' {
			return 3
		}
	}
	return 0
}

// whitespaceTail handles the three whitespace alternatives shared by all
// patterns, at a position i that holds white space:
// \s*[\r\n]+ (only when withNewlines), \s+(?!\S) and \s+.
func whitespaceTail(s string, i int, withNewlines bool) int {
	j, lastNL := i, -1
	for j < len(s) {
		c, n := classAt(s, j)
		if c != cSpace {
			break
		}
		if s[j] == '\r' || s[j] == '\n' {
			lastNL = j
		}
		j += n
	}
	if withNewlines && lastNL >= 0 {
		// \s* backtracks to the last newline, [\r\n]+ takes it.
		return lastNL + 1
	}
	if j == len(s) {
		return j
	}
	// \s+(?!\S) gives back the last character, unless that leaves none.
	_, n := utf8.DecodeLastRuneInString(s[i:j])
	if j-n > i {
		return j - n
	}
	return j
}

// gpt2Scanner implements gpt2Pattern:
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
type gpt2Scanner struct{}

func (gpt2Scanner) find(s string, dst [][2]int) [][2]int { return findTiled(gpt2Scanner{}, s, dst) }

func (gpt2Scanner) next(s string, i int) int {
	if s[i] == '\'' {
		if n := contraction(s[i:], false); n > 0 {
			return i + n
		}
	}
	c, n := classAt(s, i)
	if s[i] == ' ' {
		if c2, _ := classAtEnd(s, i+1); c2&(cLetter|cNumber|cOther) != 0 {
			return run(s, i+1, c2)
		}
	}
	if c != cSpace {
		return run(s, i+n, c)
	}
	return whitespaceTail(s, i, false)
}

// cl100kScanner implements cl100kPattern (maxDigits 3) and qwenPattern
// (maxDigits 1):
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,N}|
// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
type cl100kScanner struct{ maxDigits int }

func (m cl100kScanner) find(s string, dst [][2]int) [][2]int { return findTiled(m, s, dst) }

func (m cl100kScanner) next(s string, i int) int {
	b := s[i]
	if b == '\'' {
		if n := contraction(s[i:], true); n > 0 {
			return i + n
		}
	}
	c, n := classAt(s, i)
	switch c {
	case cLetter:
		return run(s, i+n, cLetter)
	case cNumber:
		j := i + n
		for k := 1; k < m.maxDigits && j < len(s); k++ {
			c2, n2 := classAt(s, j)
			if c2 != cNumber {
				break
			}
			j += n2
		}
		return j
	}
	// c is white space or other: [^\r\n\p{L}\p{N}]?\p{L}+ first.
	if b != '\r' && b != '\n' {
		if c2, n2 := classAtEnd(s, i+n); c2 == cLetter {
			return run(s, i+n+n2, cLetter)
		}
	}
	if c == cOther {
		return runBytes(s, run(s, i+n, cOther), "\r\n")
	}
	if b == ' ' {
		if c2, n2 := classAtEnd(s, i+1); c2 == cOther {
			return runBytes(s, run(s, i+1+n2, cOther), "\r\n")
		}
	}
	return whitespaceTail(s, i, true)
}

// o200kScanner implements o200kPattern:
// [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|...)?|
// [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|...)?|
// \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
type o200kScanner struct{}

func (o200kScanner) find(s string, dst [][2]int) [][2]int { return findTiled(o200kScanner{}, s, dst) }

// Letter-case classes for o200k: upper is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}],
// lower is [\p{Ll}\p{Lm}\p{Lo}\p{M}].
const (
	oUpper uint8 = 1 << iota
	oLower
)

func caseAt(s string, i int) (uint8, int) {
	if i >= len(s) {
		return 0, 0
	}
	b := s[i]
	if b < utf8.RuneSelf {
		switch {
		case b >= 'a' && b <= 'z':
			return oLower, 1
		case b >= 'A' && b <= 'Z':
			return oUpper, 1
		}
		return 0, 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return catCase[ucd.Category(r)], n
}

var catCase = func() (t [32]uint8) {
	t[ucd.Ll] = oLower
	t[ucd.Lu], t[ucd.Lt] = oUpper, oUpper
	for _, c := range []ucd.Cat{ucd.Lm, ucd.Lo, ucd.Mn, ucd.Mc, ucd.Me} {
		t[c] = oUpper | oLower
	}
	return t
}()

// caseRun returns the end of the run of characters in class c from i.
func caseRun(s string, i int, c uint8) int {
	for i < len(s) {
		k, n := caseAt(s, i)
		if k&c == 0 {
			return i
		}
		i += n
	}
	return i
}

// upperLower matches [upper]*[lower]+ at i, backtracking the greedy
// upper run to the last character that is also lower.
func upperLower(s string, i int) (int, bool) {
	q := caseRun(s, i, oUpper)
	if k, n := caseAt(s, q); k&oLower != 0 {
		return caseRun(s, q+n, oLower), true
	}
	// Give back upper characters until one is also lower.
	for j := q; j > i; {
		_, n := utf8.DecodeLastRuneInString(s[i:j])
		j -= n
		if k, _ := caseAt(s, j); k&oLower != 0 {
			return j + n, true
		}
	}
	return 0, false
}

// upperThenLower matches [upper]+[lower]* at i.
func upperThenLower(s string, i int) (int, bool) {
	q := caseRun(s, i, oUpper)
	if q == i {
		return 0, false
	}
	return caseRun(s, q, oLower), true
}

func (o200kScanner) next(s string, i int) int {
	b := s[i]
	c, n := classAt(s, i)
	// The optional prefix [^\r\n\p{L}\p{N}] is tried first, then without.
	prefixed := c&(cLetter|cNumber) == 0 && b != '\r' && b != '\n'
	for _, body := range []func(string, int) (int, bool){upperLower, upperThenLower} {
		if prefixed {
			if j, ok := body(s, i+n); ok {
				return j + contraction(s[j:], true)
			}
		}
		if j, ok := body(s, i); ok {
			return j + contraction(s[j:], true)
		}
	}
	switch c {
	case cNumber:
		j := i + n
		for k := 1; k < 3 && j < len(s); k++ {
			c2, n2 := classAt(s, j)
			if c2 != cNumber {
				break
			}
			j += n2
		}
		return j
	case cOther:
		return runBytes(s, run(s, i+n, cOther), "\r\n/")
	case cLetter:
		// Unreachable: every letter is upper or lower.
		return i + n
	}
	if b == ' ' {
		if c2, n2 := classAtEnd(s, i+1); c2 == cOther {
			return runBytes(s, run(s, i+1+n2, cOther), "\r\n/")
		}
	}
	return whitespaceTail(s, i, true)
}
