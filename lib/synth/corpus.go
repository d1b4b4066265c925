package synth

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/tokenizer"
	"github.com/klauspost/compress/zstd"
)

//go:embed corpus/*.txt.zst
var corpusFS embed.FS

// CorpusText returns the shipped prompt corpus: the bodies of the public-domain
// texts in corpus/, each line trimmed, empty lines dropped, joined by single
// spaces (the Python aiperf prepares its Shakespeare corpus the same way).
func CorpusText() (string, error) {
	names, err := corpusFS.ReadDir("corpus")
	if err != nil {
		return "", err
	}
	var files []string
	for _, e := range names {
		if strings.HasSuffix(e.Name(), ".txt.zst") {
			files = append(files, e.Name())
		}
	}
	sort.Strings(files)
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return "", err
	}
	defer dec.Close()
	var parts []string
	for _, name := range files {
		raw, err := corpusFS.ReadFile("corpus/" + name)
		if err != nil {
			return "", err
		}
		text, err := dec.DecodeAll(raw, nil)
		if err != nil {
			return "", fmt.Errorf("corpus %s: %w", name, err)
		}
		for _, line := range strings.Split(string(gutenbergBody(text)), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				parts = append(parts, line)
			}
		}
	}
	return strings.Join(parts, " "), nil
}

// gutenbergBody cuts the Project Gutenberg header and footer off a text.
func gutenbergBody(b []byte) []byte {
	if i := bytes.Index(b, []byte("*** START OF")); i >= 0 {
		if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
			b = b[i+j+1:]
		}
	}
	if i := bytes.Index(b, []byte("*** END OF")); i >= 0 {
		b = b[:i]
	}
	return b
}

// Corpus is a tokenized corpus prepared for exact-length prompt synthesis.
//
// A cut is a token position p where token p starts a pre-tokenizer piece with
// a space followed by a letter and token p-1 does not end in whitespace. BPE
// never merges across such a position, and the pre-tokenizer splits there in
// any context that looks the same locally (a non-space character, then a
// space and a letter). So the text of a window between two cuts re-encodes
// to exactly the window's tokens, and windows joined back to back do too.
// The claim is checked empirically by Verify and by the tests over every
// tokenizer with golden files; see Synth.
type Corpus struct {
	tok    *tokenizer.Tokenizer
	n      int      // tokens
	cut    []uint64 // bitset over positions 0..n
	cuts   []int32  // sorted cut positions
	esc    []byte   // the JSON-escaped text of the whole corpus, no quotes
	escOff []int32  // escOff[p]: offset in esc of token p's text, for cut positions (else -1)
	digest string
}

// NewCorpus tokenizes text with tok and indexes its cut positions.
func NewCorpus(tok *tokenizer.Tokenizer, text string) (*Corpus, error) {
	ids, starts := tok.EncodeWithBoundaries(text)
	c := &Corpus{tok: tok, n: len(ids)}
	sum := sha256.Sum256([]byte(text))
	c.digest = hex.EncodeToString(sum[:])
	c.cut = make([]uint64, (len(ids)+64)/64)
	c.escOff = make([]int32, len(ids)+1)

	// Decode the token stream byte by byte, escaping as whole characters.
	var raw []byte
	byteOff := make([]int, len(ids)+1)
	for i, id := range ids {
		byteOff[i] = len(raw)
		raw = append(raw, tok.TokenBytes(id)...)
	}
	byteOff[len(ids)] = len(raw)
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("synth: the corpus does not decode to valid UTF-8 with this tokenizer")
	}
	for p := 1; p < len(ids); p++ {
		if !starts[p] || tok.IsSpecial(ids[p]) || tok.IsSpecial(ids[p-1]) {
			continue
		}
		cur, prev := tok.TokenBytes(ids[p]), tok.TokenBytes(ids[p-1])
		if len(cur) < 2 || cur[0] != ' ' || !isLetter(cur[1:]) || len(prev) == 0 || isSpace(prev[len(prev)-1]) {
			continue
		}
		c.cut[p/64] |= 1 << (p % 64)
	}
	// The end of the corpus is a cut too when its last character is not a space.
	if len(raw) > 0 && !isSpace(raw[len(raw)-1]) {
		c.cut[len(ids)/64] |= 1 << (len(ids) % 64)
	}
	for i := range c.escOff {
		c.escOff[i] = -1
	}
	// Escape the text once; record the escaped offset of every cut.
	pos := 0
	esc := make([]byte, 0, len(raw)+len(raw)/16)
	for p := 0; p <= len(ids); p++ {
		if !c.isCut(p) {
			continue
		}
		esc = appendEscaped(esc, raw[pos:byteOff[p]])
		pos = byteOff[p]
		if len(esc) > 1<<31-1 {
			return nil, fmt.Errorf("synth: corpus too large")
		}
		c.escOff[p] = int32(len(esc))
		c.cuts = append(c.cuts, int32(p))
	}
	c.esc = esc
	if len(c.cuts) < 16 {
		return nil, fmt.Errorf("synth: the corpus has only %d usable cut positions with this tokenizer", len(c.cuts))
	}
	return c, nil
}

// appendEscaped appends the JSON string escape of b (valid UTF-8) without quotes.
func appendEscaped(dst, b []byte) []byte {
	lit := jsonx.AppendString(nil, string(b))
	return append(dst, lit[1:len(lit)-1]...)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isLetter(b []byte) bool {
	r, _ := utf8.DecodeRune(b)
	return r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
}

func (c *Corpus) isCut(p int) bool { return p >= 0 && p <= c.n && c.cut[p/64]&(1<<(p%64)) != 0 }

// Tokens returns the corpus length in tokens.
func (c *Corpus) Tokens() int { return c.n }

// Cuts returns the number of cut positions.
func (c *Corpus) Cuts() int { return len(c.cuts) }

// Digest returns the SHA-256 of the corpus text, for cache keys.
func (c *Corpus) Digest() string { return c.digest }

// window returns the escaped text of tokens [s, s+n) where s and s+n are cuts.
func (c *Corpus) window(s, n int) []byte { return c.esc[c.escOff[s]:c.escOff[s+n]] }

// find returns the first cut s at or after cut index k (wrapping) such that
// s+n is also a cut.
func (c *Corpus) find(k, n int) (int, bool) {
	m := len(c.cuts)
	for i := 0; i < m; i++ {
		s := int(c.cuts[(k+i)%m])
		if s+n <= c.n && c.isCut(s+n) {
			return s, true
		}
	}
	return 0, false
}
