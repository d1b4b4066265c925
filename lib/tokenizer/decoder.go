package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// A decoder turns the token strings of an id sequence into text, like
// Hugging Face's Decoder::decode_chain: each step maps a list of strings
// to a new list, and the final list is concatenated.
type decoder interface {
	decodeChain(tokens []string) []string
	// tokenBytes maps one token on its own, for Tokenizer.TokenBytes:
	// what the token contributes to a decoded text away from its edges.
	tokenBytes(tok string) string
}

type byteLevelDec struct{}

func (byteLevelDec) decodeChain(tokens []string) []string {
	var raw []byte
	for _, t := range tokens {
		raw = append(raw, byteLevelTokenBytes(t)...)
	}
	return []string{string(appendLossyUTF8(nil, raw))}
}

func (byteLevelDec) tokenBytes(tok string) string { return string(byteLevelTokenBytes(tok)) }

// byteLevelTokenBytes maps a token written in the byte-level alphabet to
// raw bytes; a token with any other character (an added token such as
// "<think>\n") stands for its own UTF-8 bytes.
func byteLevelTokenBytes(tok string) []byte {
	return appendByteLevelToken(nil, tok)
}

func appendByteLevelToken(dst []byte, tok string) []byte {
	n := len(dst)
	for _, r := range tok {
		if r >= rune(len(runeToByte)) || runeToByte[r] < 0 {
			return append(dst[:n], tok...)
		}
		dst = append(dst, byte(runeToByte[r]))
	}
	return dst
}

type replaceDec struct {
	m       matcher
	content string
}

func (d replaceDec) decodeChain(tokens []string) []string {
	for i, t := range tokens {
		tokens[i] = replace(d).normalize(t)
	}
	return tokens
}

func (d replaceDec) tokenBytes(tok string) string { return replace(d).normalize(tok) }

type byteFallbackDec struct{}

// fallbackByte parses a <0xNN> token.
func fallbackByte(tok string) (byte, bool) {
	if len(tok) != 6 || !strings.HasPrefix(tok, "<0x") || tok[5] != '>' {
		return 0, false
	}
	var v byte
	for _, c := range []byte(tok[3:5]) {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | (c - '0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | (c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | (c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return v, true
}

func (byteFallbackDec) decodeChain(tokens []string) []string {
	out := make([]string, 0, len(tokens))
	var pending []byte
	flush := func() {
		if len(pending) == 0 {
			return
		}
		if utf8.Valid(pending) {
			out = append(out, string(pending))
		} else {
			for range pending {
				out = append(out, "\uFFFD")
			}
		}
		pending = pending[:0]
	}
	for _, t := range tokens {
		if b, ok := fallbackByte(t); ok {
			pending = append(pending, b)
			continue
		}
		flush()
		out = append(out, t)
	}
	flush()
	return out
}

func (byteFallbackDec) tokenBytes(tok string) string {
	if b, ok := fallbackByte(tok); ok {
		return string([]byte{b})
	}
	return tok
}

type fuseDec struct{}

func (fuseDec) decodeChain(tokens []string) []string {
	return []string{strings.Join(tokens, "")}
}

func (fuseDec) tokenBytes(tok string) string { return tok }

type stripDec struct {
	content     rune
	start, stop int
}

func (d stripDec) decodeChain(tokens []string) []string {
	for i, t := range tokens {
		r := []rune(t)
		lo := 0
		for k := 0; k < d.start && k < len(r) && r[k] == d.content; k++ {
			lo = k + 1
		}
		hi := len(r)
		for k := 0; k < d.stop && len(r)-k-1 >= 0 && r[len(r)-k-1] == d.content; k++ {
			hi = len(r) - k - 1
		}
		if hi < lo {
			hi = lo
		}
		tokens[i] = string(r[lo:hi])
	}
	return tokens
}

func (stripDec) tokenBytes(tok string) string { return tok }

type metaspaceDec struct {
	repl    string
	prepend bool // the prepend scheme is not "never"
}

func (d metaspaceDec) decodeChain(tokens []string) []string {
	for i, t := range tokens {
		with := " "
		if i == 0 && d.prepend {
			with = ""
		}
		tokens[i] = strings.ReplaceAll(t, d.repl, with)
	}
	return tokens
}

func (d metaspaceDec) tokenBytes(tok string) string { return strings.ReplaceAll(tok, d.repl, " ") }

// bpeDec is Hugging Face's BPEDecoder: the end-of-word suffix becomes a
// space, except in the last token.
type bpeDec struct{ suffix string }

func (d bpeDec) decodeChain(tokens []string) []string {
	for i, t := range tokens {
		with := " "
		if i == len(tokens)-1 {
			with = ""
		}
		tokens[i] = strings.ReplaceAll(t, d.suffix, with)
	}
	return tokens
}

func (d bpeDec) tokenBytes(tok string) string { return strings.ReplaceAll(tok, d.suffix, " ") }

type decSequence []decoder

func (q decSequence) decodeChain(tokens []string) []string {
	for _, d := range q {
		tokens = d.decodeChain(tokens)
	}
	return tokens
}

func (q decSequence) tokenBytes(tok string) string {
	for _, d := range q {
		tok = d.tokenBytes(tok)
	}
	return tok
}

func parseDecoder(raw json.RawMessage) (decoder, error) {
	if isNull(raw) {
		return nil, nil
	}
	var h struct {
		Type          string            `json:"type"`
		Decoders      []json.RawMessage `json:"decoders"`
		Pattern       patternJSON       `json:"pattern"`
		Content       json.RawMessage   `json:"content"`
		Start         int               `json:"start"`
		Stop          int               `json:"stop"`
		Replacement   string            `json:"replacement"`
		Suffix        *string           `json:"suffix"`
		PrependScheme *string           `json:"prepend_scheme"`
		AddPrefix     *bool             `json:"add_prefix_space"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("decoder: %w", err)
	}
	switch h.Type {
	case "ByteLevel":
		return byteLevelDec{}, nil
	case "Replace":
		m, err := h.Pattern.matcher()
		if err != nil {
			return nil, fmt.Errorf("decoder Replace: %w", err)
		}
		var content string
		if err := json.Unmarshal(h.Content, &content); err != nil {
			return nil, fmt.Errorf("decoder Replace: content: %w", err)
		}
		return replaceDec{m, content}, nil
	case "ByteFallback":
		return byteFallbackDec{}, nil
	case "Fuse":
		return fuseDec{}, nil
	case "Strip":
		var content string
		if err := json.Unmarshal(h.Content, &content); err != nil || utf8.RuneCountInString(content) != 1 {
			return nil, fmt.Errorf("decoder Strip: content must be one character")
		}
		r, _ := utf8.DecodeRuneInString(content)
		return stripDec{r, h.Start, h.Stop}, nil
	case "Metaspace":
		d := metaspaceDec{repl: h.Replacement, prepend: true}
		if h.PrependScheme != nil && *h.PrependScheme == "never" {
			d.prepend = false
		}
		if h.AddPrefix != nil && !*h.AddPrefix {
			d.prepend = false
		}
		return d, nil
	case "BPEDecoder":
		d := bpeDec{suffix: "</w>"}
		if h.Suffix != nil {
			d.suffix = *h.Suffix
		}
		return d, nil
	case "Sequence":
		var q decSequence
		for _, r := range h.Decoders {
			d, err := parseDecoder(r)
			if err != nil {
				return nil, err
			}
			if d != nil {
				q = append(q, d)
			}
		}
		return q, nil
	}
	return nil, fmt.Errorf("unsupported decoder type %q", h.Type)
}
