package tokenizer

import (
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/tokenizer/internal/ucd"
)

// DeepSeek-V3 (and V2.5, R1) pre-tokenize with three Split patterns in a
// row, none of which matches everywhere: the text between matches becomes
// pieces of its own. Their scanners are seekers: they find the next match.
const (
	// Digits in groups of up to three.
	deepseekDigits = `\p{N}{1,3}`
	// Runs of CJK ideographs (U+4E00..U+9FA5), hiragana and katakana.
	deepseekCJK = "[一-龥\u3040-ゟ゠-ヿ]+"
	// The rest: ASCII punctuation glued to the ASCII word after it, words
	// with one leading non-letter, punctuation runs, white space.
	deepseekMain = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
)

// A seeker is a matcher that finds its matches one at a time: seek returns
// the first match at or after i, or lo < 0.
type seeker interface {
	seek(s string, i int) (lo, hi int)
}

func findSeeker(m seeker, s string, dst [][2]int) [][2]int {
	for i := 0; i < len(s); {
		lo, hi := m.seek(s, i)
		if lo < 0 {
			break
		}
		dst = append(dst, [2]int{lo, hi})
		i = hi
	}
	return dst
}

// Character classes of deepseekMain, at Oniguruma's Unicode version.
const (
	dLetter      uint8 = 1 << iota // \p{L}
	dMark                          // \p{M}
	dPunct                         // \p{P} or \p{S}
	dSpace                         // \s
	dNewline                       // \r or \n
	dASCIIPunct                    // the ASCII punctuation class of the first alternative
	dASCIILetter                   // [A-Za-z]
	dNumber                        // \p{N}
)

var dsASCII = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		r := rune(c)
		k := ucd.CategorySearch(r) // not Category: its table is built on first use
		switch {
		case k.Letter():
			t[c] = dLetter | dASCIILetter
		case k.Punct() || k.Symbol():
			t[c] = dPunct | dASCIIPunct
		case k.Number():
			t[c] = dNumber
		}
		if r == ' ' || r >= '\t' && r <= '\r' {
			t[c] |= dSpace
		}
		if r == '\r' || r == '\n' {
			t[c] |= dNewline
		}
	}
	return t
}()

var dsCat = func() (t [32]uint8) {
	for c := ucd.Cat(0); c < 32; c++ {
		switch {
		case c.Letter():
			t[c] = dLetter
		case c.Mark():
			t[c] = dMark
		case c.Punct() || c.Symbol():
			t[c] = dPunct
		case c.Number():
			t[c] = dNumber
		}
	}
	return t
}()

// dsClassAt returns the deepseekMain classes of the character at s[i] and
// its length (0, 0 past the end).
func dsClassAt(s string, i int) (uint8, int) {
	if i >= len(s) {
		return 0, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return dsASCII[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	k := dsCat[ucd.Category(r)]
	if k == 0 && isSpaceRune(r) {
		k = dSpace
	}
	return k, n
}

// dsRun returns the end of the run of characters with a class in c from i.
func dsRun(s string, i int, c uint8) int {
	for i < len(s) {
		k, n := dsClassAt(s, i)
		if k&c == 0 {
			return i
		}
		i += n
	}
	return i
}

type deepseekMainScanner struct{}

func (deepseekMainScanner) find(s string, dst [][2]int) [][2]int {
	return findSeeker(deepseekMainScanner{}, s, dst)
}

func (deepseekMainScanner) seek(s string, i int) (int, int) {
	for i < len(s) {
		if j := deepseekMainAt(s, i); j > i {
			return i, j
		}
		_, n := dsClassAt(s, i)
		i += n
	}
	return -1, -1
}

// deepseekMainAt returns the end of the match of deepseekMain at i, or i.
func deepseekMainAt(s string, i int) int {
	c, n := dsClassAt(s, i)
	next, n2 := dsClassAt(s, i+n)
	// [!"#...~][A-Za-z]+
	if c&dASCIIPunct != 0 && next&dASCIILetter != 0 {
		return dsRun(s, i+n+n2, dASCIILetter)
	}
	// [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
	if c&(dNewline|dLetter|dPunct) == 0 && next&(dLetter|dMark) != 0 {
		return dsRun(s, i+n+n2, dLetter|dMark)
	}
	if c&(dLetter|dMark) != 0 {
		return dsRun(s, i+n, dLetter|dMark)
	}
	// ' ?[\p{P}\p{S}]+[\r\n]*'
	if s[i] == ' ' && next&dPunct != 0 {
		return runBytes(s, dsRun(s, i+1+n2, dPunct), "\r\n")
	}
	if c&dPunct != 0 {
		return runBytes(s, dsRun(s, i+n, dPunct), "\r\n")
	}
	// \s*[\r\n]+|\s+(?!\S)|\s+
	if c&dSpace != 0 {
		return whitespaceTail(s, i, true)
	}
	return i
}

// deepseekDigitsScanner implements deepseekDigits.
type deepseekDigitsScanner struct{}

func (deepseekDigitsScanner) find(s string, dst [][2]int) [][2]int {
	return findSeeker(deepseekDigitsScanner{}, s, dst)
}

func (deepseekDigitsScanner) seek(s string, i int) (int, int) {
	for i < len(s) {
		c, n := dsClassAt(s, i)
		if c&dNumber == 0 {
			i += n
			continue
		}
		j := i + n
		for k := 1; k < 3; k++ {
			c2, n2 := dsClassAt(s, j)
			if c2&dNumber == 0 {
				break
			}
			j += n2
		}
		return i, j
	}
	return -1, -1
}

// deepseekCJKScanner implements deepseekCJK.
type deepseekCJKScanner struct{}

func (deepseekCJKScanner) find(s string, dst [][2]int) [][2]int {
	return findSeeker(deepseekCJKScanner{}, s, dst)
}

func isDeepseekCJK(r rune) bool {
	return r >= 0x4e00 && r <= 0x9fa5 || r >= 0x3040 && r <= 0x309f || r >= 0x30a0 && r <= 0x30ff
}

func (deepseekCJKScanner) seek(s string, i int) (int, int) {
	for i < len(s) {
		// The class is three-byte UTF-8 starting with E3 or E4..E9.
		if c := s[i]; c < 0xe3 || c > 0xe9 {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isDeepseekCJK(r) {
			i += n
			continue
		}
		j := i + n
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if !isDeepseekCJK(r) {
				break
			}
			j += n
		}
		return i, j
	}
	return -1, -1
}
