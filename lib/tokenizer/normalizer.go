package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// A normalizer rewrites the text of one segment (the text between added
// tokens) before pre-tokenization.
type normalizer interface {
	normalize(s string) string
}

type unicodeNorm struct{ f norm.Form }

func (n unicodeNorm) normalize(s string) string {
	if n.f.QuickSpanString(s) == len(s) {
		return s
	}
	return n.f.String(s)
}

type lowercase struct{}

func (lowercase) normalize(s string) string {
	// Rust lowercases per character with the full mapping; the only
	// character whose full mapping differs from Go's simple one is U+0130.
	if strings.ContainsRune(s, 'İ') {
		s = strings.ReplaceAll(s, "İ", "i\u0307")
	}
	return strings.ToLower(s)
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
		return unicodeNorm{norm.NFC}, nil
	case "NFKC":
		return unicodeNorm{norm.NFKC}, nil
	case "NFD":
		return unicodeNorm{norm.NFD}, nil
	case "NFKD":
		return unicodeNorm{norm.NFKD}, nil
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
