package tokenizer

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/tokenizer/internal/ucd"
	"golang.org/x/text/unicode/norm"
)

// A normalizer rewrites the text of one segment (the text between added
// tokens) before pre-tokenization.
type normalizer interface {
	normalize(s string) string
}

// unicodeNorm is NFC, NFD, NFKC or NFKD as Hugging Face computes them: with
// the crate unicode-normalization-alignments, whose tables are Unicode
// 9.0.0 and which reorders a run of combining marks of any length.
// golang.org/x/text/unicode/norm gets every code point that Unicode 9.0.0
// assigned right (normalization is stable across versions), so it does the
// work, except for two differences:
//
//   - code points assigned after 9.0.0 are, to HF, starters without
//     decomposition that compose with nothing: text is normalized in the
//     pieces between them and they are kept as they are;
//   - x/text inserts U+034F after 30 combining marks in a row (the
//     stream-safe text format) and HF does not: a piece where x/text did
//     that is normalized by slowNormalize instead.
type unicodeNorm struct {
	f       norm.Form
	decomp  norm.Form // NFD or NFKD: the decomposition f starts with
	compose bool      // NFC or NFKC
}

func (n unicodeNorm) normalize(s string) string {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return s // ASCII: every form leaves it alone
	}
	var b []byte
	last := 0
	for ; i < len(s); i++ {
		if s[i] < utf8.RuneSelf {
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if ucd.AssignedBy9(r) || r == utf8.RuneError {
			i += size - 1
			continue
		}
		b = append(b, n.piece(s[last:i])...)
		b = append(b, s[i:i+size]...)
		last = i + size
		i += size - 1
	}
	if b == nil {
		return n.piece(s)
	}
	return string(append(b, n.piece(s[last:])...))
}

const cgj = "\u034f"

// piece normalizes text in which every code point is in Unicode 9.0.0.
func (n unicodeNorm) piece(s string) string {
	if n.f.QuickSpanString(s) == len(s) {
		return s
	}
	out := n.f.String(s)
	if strings.Contains(out, cgj) && strings.Count(out, cgj) > strings.Count(s, cgj) {
		return n.slowNormalize(s)
	}
	return out
}

// slowNormalize is the normalization algorithm of UAX #15 without the
// stream-safe limit: decompose, sort each run of combining marks by
// combining class (stably), and for NFC/NFKC compose. x/text supplies the
// per-character data: decompositions, combining classes, and compositions
// (the NFC of a starter and one following character is their primary
// composite when there is one).
func (n unicodeNorm) slowNormalize(s string) string {
	type mark struct {
		r   rune
		ccc uint8
	}
	var d []mark
	for _, r := range s {
		for _, x := range n.decomp.String(string(r)) {
			d = append(d, mark{x, n.decomp.PropertiesString(string(x)).CCC()})
		}
	}
	for i := 0; i < len(d); {
		if d[i].ccc == 0 {
			i++
			continue
		}
		j := i
		for j < len(d) && d[j].ccc != 0 {
			j++
		}
		slices.SortStableFunc(d[i:j], func(a, b mark) int { return int(a.ccc) - int(b.ccc) })
		i = j
	}
	if !n.compose {
		out := make([]rune, len(d))
		for i, m := range d {
			out[i] = m.r
		}
		return string(out)
	}
	var out []mark
	starter := -1 // index in out of the last starter
	lastCCC := -1 // combining class of the last mark kept after it, -1 when none
	for _, m := range d {
		if starter >= 0 && (lastCCC < 0 || (m.ccc != 0 && uint8(lastCCC) < m.ccc)) {
			if p, ok := composePair(out[starter].r, m.r); ok {
				out[starter].r = p
				continue
			}
		}
		if m.ccc == 0 {
			starter, lastCCC = len(out), -1
		} else if starter >= 0 {
			lastCCC = int(m.ccc)
		}
		out = append(out, m)
	}
	rs := make([]rune, len(out))
	for i, m := range out {
		rs[i] = m.r
	}
	return string(rs)
}

// composePair returns the primary composite of a starter and the
// character after it, if there is one.
func composePair(a, b rune) (rune, bool) {
	c := norm.NFC.String(string(a) + string(b))
	if r, size := utf8.DecodeRuneInString(c); size == len(c) && r != a {
		return r, true
	}
	return 0, false
}

type lowercase struct{}

func (lowercase) normalize(s string) string {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	// Rust lowercases per character with the full mappings of its
	// Unicode version, without context (no final sigma).
	b := make([]byte, i, len(s)+8)
	copy(b, s)
	for _, r := range s[i:] {
		b = ucd.AppendLower(b, r)
	}
	return string(b)
}

type prepend struct{ s string }

func (p prepend) normalize(s string) string {
	if s == "" {
		return s
	}
	return p.s + s
}

type replace struct {
	m       matcher
	content string
}

func (r replace) normalize(s string) string {
	spans := r.m.find(s, nil)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	prev := 0
	for _, sp := range spans {
		b.WriteString(s[prev:sp[0]])
		b.WriteString(r.content)
		prev = sp[1]
	}
	b.WriteString(s[prev:])
	return b.String()
}

type stripNorm struct{ left, right bool }

func (n stripNorm) normalize(s string) string {
	if n.left {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
	}
	if n.right {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	return s
}

type normSequence []normalizer

func (q normSequence) normalize(s string) string {
	for _, n := range q {
		s = n.normalize(s)
	}
	return s
}

// pattern is the {"String": ...} or {"Regex": ...} object used by Replace
// and Split.
type patternJSON struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

func (p patternJSON) matcher() (matcher, error) {
	switch {
	case p.String != nil:
		return literalMatcher(*p.String), nil
	case p.Regex != nil:
		return compilePattern(*p.Regex)
	}
	return nil, fmt.Errorf("pattern has neither String nor Regex")
}

func parseNormalizer(raw json.RawMessage) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var h struct {
		Type        string            `json:"type"`
		Normalizers []json.RawMessage `json:"normalizers"`
		Prepend     string            `json:"prepend"`
		Pattern     patternJSON       `json:"pattern"`
		Content     string            `json:"content"`
		StripLeft   bool              `json:"strip_left"`
		StripRight  bool              `json:"strip_right"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	switch h.Type {
	case "NFC":
		return unicodeNorm{norm.NFC, norm.NFD, true}, nil
	case "NFKC":
		return unicodeNorm{norm.NFKC, norm.NFKD, true}, nil
	case "NFD":
		return unicodeNorm{norm.NFD, norm.NFD, false}, nil
	case "NFKD":
		return unicodeNorm{norm.NFKD, norm.NFKD, false}, nil
	case "Lowercase":
		return lowercase{}, nil
	case "Prepend":
		return prepend{h.Prepend}, nil
	case "Strip":
		return stripNorm{h.StripLeft, h.StripRight}, nil
	case "Replace":
		m, err := h.Pattern.matcher()
		if err != nil {
			return nil, fmt.Errorf("normalizer Replace: %w", err)
		}
		return replace{m, h.Content}, nil
	case "Sequence":
		var q normSequence
		for _, r := range h.Normalizers {
			n, err := parseNormalizer(r)
			if err != nil {
				return nil, err
			}
			if n != nil {
				q = append(q, n)
			}
		}
		return q, nil
	}
	return nil, fmt.Errorf("unsupported normalizer type %q", h.Type)
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}
