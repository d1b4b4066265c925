package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/tokenizer/internal/ucd"
	"github.com/dlclark/regexp2"
)

// A piece is a run of text that the model encodes on its own: BPE never
// merges across pieces.
type piece struct {
	s string
	// first reports that the piece starts at offset 0 of the input, which
	// Metaspace's "first" prepend scheme needs.
	first bool
}

// A preTokenizer splits one piece into smaller ones and calls fn for each,
// in order. It never passes empty pieces. Pieces go straight on to the
// next step (or the model) instead of into slices, which for a long text
// would be large.
type preTokenizer interface {
	each(p piece, fn func(piece))
}

// A matcher finds the non-overlapping matches of a pattern, leftmost
// first, as byte spans.
type matcher interface {
	find(s string, dst [][2]int) [][2]int
}

// behavior is Hugging Face's SplitDelimiterBehavior.
type behavior int

const (
	removed behavior = iota
	isolated
	mergedWithPrevious
	mergedWithNext
	contiguous
)

func parseBehavior(s string) (behavior, error) {
	switch s {
	case "Removed":
		return removed, nil
	case "Isolated":
		return isolated, nil
	case "MergedWithPrevious":
		return mergedWithPrevious, nil
	case "MergedWithNext":
		return mergedWithNext, nil
	case "Contiguous":
		return contiguous, nil
	}
	return 0, fmt.Errorf("unknown split behavior %q", s)
}

// splitEach splits p at the matches of m the way Hugging Face's
// NormalizedString::split does.
func splitEach(p piece, m matcher, b behavior, invert bool, fn func(piece)) {
	s := p.s
	// A tiling matcher leaves no gaps, so "Removed" with invert (how
	// Hugging Face's converted OpenAI tokenizers write it) keeps exactly
	// the matches, like "Isolated".
	if b == isolated || (b == removed && invert) {
		if nx, ok := m.(nexter); ok {
			for i := 0; i < len(s); {
				j := nx.next(s, i)
				fn(piece{s: s[i:j], first: p.first && i == 0})
				i = j
			}
			return
		}
	}
	if sk, ok := m.(seeker); ok && b == isolated {
		prev := 0
		for prev < len(s) {
			lo, hi := sk.seek(s, prev)
			if lo < 0 {
				break
			}
			emitPiece(p, prev, lo, fn)
			emitPiece(p, lo, hi, fn)
			prev = hi
		}
		emitPiece(p, prev, len(s), fn)
		return
	}
	spans := m.find(s, nil)
	if b == isolated {
		// Every match and every gap is a piece of its own, so invert
		// does not matter.
		prev := 0
		for _, sp := range spans {
			emitPiece(p, prev, sp[0], fn)
			emitPiece(p, sp[0], sp[1], fn)
			prev = sp[1]
		}
		emitPiece(p, prev, len(s), fn)
		return
	}
	// The general case: a list of (span, isMatch) covering s.
	type part struct {
		lo, hi int
		match  bool
	}
	parts := make([]part, 0, 2*len(spans)+1)
	prev := 0
	for _, sp := range spans {
		if prev != sp[0] {
			parts = append(parts, part{prev, sp[0], invert})
		}
		parts = append(parts, part{sp[0], sp[1], !invert})
		prev = sp[1]
	}
	if prev != len(s) {
		parts = append(parts, part{prev, len(s), invert})
	}
	switch b {
	case removed:
		for _, q := range parts {
			if !q.match {
				emitPiece(p, q.lo, q.hi, fn)
			}
		}
		return
	case contiguous:
		out := parts[:0]
		for i, q := range parts {
			if i > 0 && q.match == parts[i-1].match {
				out[len(out)-1].hi = q.hi
			} else {
				out = append(out, q)
			}
		}
		parts = out
	case mergedWithPrevious:
		out := parts[:0]
		prevMatch := false
		for _, q := range parts {
			m := q.match
			if m && !prevMatch && len(out) > 0 {
				out[len(out)-1].hi = q.hi
			} else {
				out = append(out, q)
			}
			prevMatch = m
		}
		parts = out
	case mergedWithNext:
		// Walk backwards, merging each match into the piece after it.
		var out []part
		prevMatch := false
		for i := len(parts) - 1; i >= 0; i-- {
			q := parts[i]
			if q.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].lo = q.lo
			} else {
				out = append(out, q)
			}
			prevMatch = q.match
		}
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
		parts = out
	}
	for _, q := range parts {
		emitPiece(p, q.lo, q.hi, fn)
	}
}

func emitPiece(p piece, lo, hi int, fn func(piece)) {
	if lo < hi {
		fn(piece{s: p.s[lo:hi], first: p.first && lo == 0})
	}
}

type splitPT struct {
	m      matcher
	b      behavior
	invert bool
}

func (t splitPT) each(p piece, fn func(piece)) {
	splitEach(p, t.m, t.b, t.invert, fn)
}

// byteLevelPT is the ByteLevel pre-tokenizer. The byte-to-character
// mapping it also performs is implicit here, because the model works on
// raw bytes (see bpe.byteDomain); it must therefore be the last step.
type byteLevelPT struct {
	addPrefixSpace bool
	useRegex       bool
}

// gpt2Pattern is the split pattern built into the ByteLevel pre-tokenizer.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

var gpt2Matcher = mustCompilePattern(gpt2Pattern)

func (t byteLevelPT) each(p piece, fn func(piece)) {
	if t.addPrefixSpace && !strings.HasPrefix(p.s, " ") {
		p.s = " " + p.s
	}
	if !t.useRegex {
		emitPiece(p, 0, len(p.s), fn)
		return
	}
	splitEach(p, gpt2Matcher, isolated, false, fn)
}

type prependScheme int

const (
	prependAlways prependScheme = iota
	prependFirst
	prependNever
)

type metaspacePT struct {
	repl   string
	scheme prependScheme
	split_ bool
}

func (t metaspacePT) each(p piece, fn func(piece)) {
	s := strings.ReplaceAll(p.s, " ", t.repl)
	switch t.scheme {
	case prependAlways:
		if !strings.HasPrefix(s, t.repl) {
			s = t.repl + s
		}
	case prependFirst:
		if !strings.HasPrefix(s, t.repl) && p.first {
			s = t.repl + s
		}
	}
	q := piece{s: s, first: p.first}
	if !t.split_ {
		emitPiece(q, 0, len(s), fn)
		return
	}
	splitEach(q, literalMatcher(t.repl), mergedWithNext, false, fn)
}

type digitsPT struct{ individual bool }

func (t digitsPT) each(p piece, fn func(piece)) {
	b := contiguous
	if t.individual {
		b = isolated
	}
	// Rust's char::is_numeric, at its Unicode version.
	splitEach(p, funcMatcher(ucd.IsNumeric), b, false, fn)
}

type ptSequence []preTokenizer

func (q ptSequence) each(p piece, fn func(piece)) {
	q.from(0, p, fn)
}

func (q ptSequence) from(k int, p piece, fn func(piece)) {
	if k == len(q) {
		fn(p)
		return
	}
	q[k].each(p, func(c piece) { q.from(k+1, c, fn) })
}

func parsePreTokenizer(raw json.RawMessage) (pt preTokenizer, byteLevel bool, err error) {
	if isNull(raw) {
		return nil, false, nil
	}
	var h struct {
		Type           string            `json:"type"`
		Pretokenizers  []json.RawMessage `json:"pretokenizers"`
		Pattern        patternJSON       `json:"pattern"`
		Behavior       string            `json:"behavior"`
		Invert         bool              `json:"invert"`
		AddPrefixSpace *bool             `json:"add_prefix_space"`
		UseRegex       *bool             `json:"use_regex"`
		Replacement    string            `json:"replacement"`
		PrependScheme  *string           `json:"prepend_scheme"`
		Split          *bool             `json:"split"`
		Individual     bool              `json:"individual_digits"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, false, fmt.Errorf("pre_tokenizer: %w", err)
	}
	switch h.Type {
	case "Sequence":
		var q ptSequence
		for _, r := range h.Pretokenizers {
			t, bl, err := parsePreTokenizer(r)
			if err != nil {
				return nil, false, err
			}
			if byteLevel {
				return nil, false, fmt.Errorf("unsupported pre_tokenizer: ByteLevel followed by another step")
			}
			byteLevel = bl
			// A ByteLevel step without regex or prefix space only maps
			// characters, which the byte-domain model makes implicit.
			if bt, ok := t.(byteLevelPT); ok && !bt.addPrefixSpace && !bt.useRegex {
				continue
			}
			if t != nil {
				q = append(q, t)
			}
		}
		switch len(q) {
		case 0:
			return nil, byteLevel, nil
		case 1:
			return q[0], byteLevel, nil
		}
		return q, byteLevel, nil
	case "Split":
		m, err := h.Pattern.matcher()
		if err != nil {
			return nil, false, fmt.Errorf("pre_tokenizer Split: %w", err)
		}
		b, err := parseBehavior(h.Behavior)
		if err != nil {
			return nil, false, fmt.Errorf("pre_tokenizer Split: %w", err)
		}
		return splitPT{m, b, h.Invert}, false, nil
	case "ByteLevel":
		t := byteLevelPT{addPrefixSpace: true, useRegex: true}
		if h.AddPrefixSpace != nil {
			t.addPrefixSpace = *h.AddPrefixSpace
		}
		if h.UseRegex != nil {
			t.useRegex = *h.UseRegex
		}
		return t, true, nil
	case "Metaspace":
		t := metaspacePT{repl: h.Replacement, scheme: prependAlways, split_: true}
		if utf8.RuneCountInString(h.Replacement) != 1 {
			return nil, false, fmt.Errorf("pre_tokenizer Metaspace: replacement %q is not one character", h.Replacement)
		}
		if h.PrependScheme != nil {
			switch *h.PrependScheme {
			case "always":
			case "first":
				t.scheme = prependFirst
			case "never":
				t.scheme = prependNever
			default:
				return nil, false, fmt.Errorf("pre_tokenizer Metaspace: unknown prepend_scheme %q", *h.PrependScheme)
			}
		}
		if h.AddPrefixSpace != nil && !*h.AddPrefixSpace {
			t.scheme = prependNever
		}
		if h.Split != nil {
			t.split_ = *h.Split
		}
		return t, false, nil
	case "Digits":
		return digitsPT{h.Individual}, false, nil
	}
	return nil, false, fmt.Errorf("unsupported pre_tokenizer type %q", h.Type)
}

// literalMatcher matches a fixed string.
type literalMatcher string

func (m literalMatcher) find(s string, dst [][2]int) [][2]int {
	if m == "" {
		return dst
	}
	off := 0
	for {
		i := strings.Index(s[off:], string(m))
		if i < 0 {
			return dst
		}
		dst = append(dst, [2]int{off + i, off + i + len(m)})
		off += i + len(m)
	}
}

// funcMatcher matches single characters.
type funcMatcher func(rune) bool

func (m funcMatcher) find(s string, dst [][2]int) [][2]int {
	for i, r := range s {
		if m(r) {
			dst = append(dst, [2]int{i, i + utf8.RuneLen(r)})
		}
	}
	return dst
}

// regexMatcher runs a pattern through regexp2, which (unlike Go's regexp)
// supports the lookahead and the syntax that Hugging Face's Oniguruma
// patterns use. It is the general fallback; the common patterns have
// hand-written scanners (see scan.go).
type regexMatcher struct{ re *regexp2.Regexp }

func (m regexMatcher) find(s string, dst [][2]int) [][2]int {
	if s == "" {
		return dst
	}
	runes := []rune(s)
	match, err := m.re.FindRunesMatch(runes)
	// Byte offsets advance with the rune offsets; matches come in order.
	ri, bi := 0, 0
	advance := func(to int) int {
		for ri < to {
			_, size := utf8.DecodeRuneInString(s[bi:])
			bi += size
			ri++
		}
		return bi
	}
	for err == nil && match != nil {
		lo := advance(match.Index)
		hi := advance(match.Index + match.Length)
		dst = append(dst, [2]int{lo, hi})
		match, err = m.re.FindNextMatch(match)
	}
	return dst
}

// compilePattern returns a matcher for a Hugging Face split pattern: a
// hand-written scanner when the pattern is one we know, regexp2 otherwise.
func compilePattern(pat string) (matcher, error) {
	if m := knownScanner(pat); m != nil {
		return m, nil
	}
	return compileRegex(pat)
}

func compileRegex(pat string) (matcher, error) {
	// Oniguruma folds "ſ" to "s" under (?i); regexp2 does not.
	re2 := strings.ReplaceAll(pat, "(?i:'s|", "(?i:'[sſ]|")
	re2, err := toRegexp2(re2)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", pat, err)
	}
	// Oniguruma's Ruby syntax: ^ and $ match at line breaks.
	re, err := regexp2.Compile(re2, regexp2.Multiline)
	if err != nil {
		return nil, fmt.Errorf("compile pattern %q: %w", pat, err)
	}
	return regexMatcher{re}, nil
}

func mustCompilePattern(pat string) matcher {
	m, err := compilePattern(pat)
	if err != nil {
		panic(err)
	}
	return m
}
