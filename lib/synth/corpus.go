package synth

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
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
// A cut is a token position p where the text has a word boundary of one
// shape: the character before p is not white space, the text at p is a
// space and an ASCII letter, and the tokenizer starts a new piece at p (a
// pre-tokenizer split, or a SentencePiece "▁" that no merge can cross; see
// tokenizer.EncodeWithBoundaries). BPE never merges across pieces, and the
// pre-tokenizers split there in any context that looks the same locally. So
// the text of a window between two cuts re-encodes to exactly the window's
// tokens, and windows joined back to back do too.
//
// NewCorpus checks that claim for the tokenizer at hand instead of trusting
// it: the decoded corpus must re-encode to the same tokens, windows joined at
// random cuts must keep their lengths, and a window that starts a prompt
// segment (after the block separator, where a tokenizer may prepend "▁" or
// strip white space) must keep its length too; cuts where that fails are not
// used to start a segment. A tokenizer that fails the first two checks is
// refused with the reason. Verify re-encodes whole prompts as a last check.
type Corpus struct {
	tok    *tokenizer.Tokenizer
	n      int      // tokens
	cut    []uint64 // bitset over positions 0..n
	cuts   []int32  // sorted cut positions
	lead   []int32  // the cuts whose next window keeps its length at a segment start
	esc    []byte   // the JSON-escaped text of the whole corpus, no quotes
	escOff []int32  // escOff[p]: offset in esc of token p's text, for cut positions (else -1)
	digest string
	// unstable[p] counts the tokens before p that do not re-encode to
	// themselves; no window holds one.
	unstable []int32

	// stripLead: a segment-starting window drops its leading space (the
	// tokenizer prepends "▁" itself, as SentencePiece-style ones do).
	stripLead bool
}

// minCuts is the fewest cut positions a usable corpus has.
const minCuts = 16

// NewCorpus tokenizes text with tok and indexes its cut positions.
func NewCorpus(tok *tokenizer.Tokenizer, text string) (*Corpus, error) {
	sum := sha256.Sum256([]byte(text))
	ids, starts := tok.EncodeWithBoundaries(text)
	raw, byteOff := decodeBytes(tok, ids)
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("synth: the corpus does not decode to valid UTF-8 with this tokenizer")
	}
	// Prompts are made of decoded corpus text, so that text must encode
	// back to the same tokens. Where it does not (the start, when the
	// tokenizer prepends "▁" and decodes it to a space; next to digits when
	// ByteLevel adds a space before every piece), no window may reach.
	stable, nStable, err := stableTokens(tok, raw, byteOff, ids)
	if err != nil || nStable < len(ids)/2 {
		return nil, notRoundTrip(tok, raw, err)
	}
	c := &Corpus{tok: tok, n: len(ids), digest: hex.EncodeToString(sum[:])}
	c.unstable = make([]int32, len(ids)+1)
	for i, ok := range stable {
		c.unstable[i+1] = c.unstable[i]
		if !ok {
			c.unstable[i+1]++
		}
	}
	c.cut = make([]uint64, (len(ids)+64)/64)
	c.escOff = make([]int32, len(ids)+1)
	for p := 1; p < len(ids); p++ {
		if !starts[p] || tok.IsSpecial(ids[p]) || tok.IsSpecial(ids[p-1]) {
			continue
		}
		at := raw[byteOff[p]:]
		if len(at) < 2 || at[0] != ' ' || !isLetter(at[1:]) || isSpace(raw[byteOff[p]-1]) {
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
	if len(c.cuts) < minCuts {
		return nil, fewCuts(tok, len(c.cuts))
	}
	if err := c.checkJoins(raw, byteOff, ids); err != nil {
		return nil, err
	}
	if err := c.findLeads(raw, byteOff); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeBytes concatenates the TokenBytes of ids; off[i] is where token i
// starts.
func decodeBytes(tok *tokenizer.Tokenizer, ids []int) (raw []byte, off []int) {
	off = make([]int, len(ids)+1)
	for i, id := range ids {
		off[i] = len(raw)
		raw = append(raw, tok.TokenBytes(id)...)
	}
	off[len(ids)] = len(raw)
	return raw, off
}

// stableTokens encodes raw, the decoded corpus, again and reports for each
// token of ids (whose bytes are raw[off[p]:off[p+1]]) whether the same
// token comes back at the same place. The two decoded texts are aligned
// first: a tokenizer may add or drop a few characters when it encodes.
func stableTokens(tok *tokenizer.Tokenizer, raw []byte, off []int, ids []int) ([]bool, int, error) {
	stable := make([]bool, len(ids))
	e := tok.Encode(string(raw))
	if slices.Equal(e, ids) {
		for i := range stable {
			stable[i] = true
		}
		return stable, len(ids), nil
	}
	rawE, offE := decodeBytes(tok, e)
	// at[k] is the offset in raw of rawE[k], or -1 for an added byte.
	at := make([]int, len(rawE)+1)
	i, k := 0, 0
	for i < len(raw) || k < len(rawE) {
		if i < len(raw) && k < len(rawE) && raw[i] == rawE[k] {
			at[k] = i
			i, k = i+1, k+1
			continue
		}
		if n := resync(raw[i:], rawE[k:]); n > 0 {
			for ; n > 0; n-- {
				at[k] = -1
				k++
			}
			continue
		}
		if n := resync(rawE[k:], raw[i:]); n > 0 {
			i += n // dropped bytes: the tokens there will not match
			continue
		}
		return nil, 0, fmt.Errorf("near %q", excerpt(raw, i))
	}
	at[len(rawE)] = len(raw)
	n, q := 0, 0
	for p := range ids {
		for q < len(e) && at[offE[q]] < off[p] {
			q++
		}
		if q < len(e) && at[offE[q]] == off[p] && e[q] == ids[p] && at[offE[q+1]] == off[p+1] &&
			offE[q+1]-offE[q] == off[p+1]-off[p] {
			stable[p] = true
			n++
		}
	}
	return stable, n, nil
}

// resync returns the n, 1 <= n <= 64, for which b[n:] agrees longest with
// the start of a (b has n bytes more), or 0 when none agrees for at least
// 3 bytes or to the end of a.
func resync(a, b []byte) int {
	best, bestLen := 0, 2
	for n := 1; n <= 64 && n <= len(b); n++ {
		m := 0
		for m < len(a) && n+m < len(b) && a[m] == b[n+m] && m < 64 {
			m++
		}
		if m > bestLen || (m == len(a) && n+m == len(b) && m > 0) {
			best, bestLen = n, m
		}
	}
	return best
}

func excerpt(raw []byte, i int) []byte {
	lo := max(0, min(i, len(raw))-20)
	for lo > 0 && !utf8.RuneStart(raw[lo]) {
		lo--
	}
	hi := min(len(raw), lo+60)
	for hi < len(raw) && !utf8.RuneStart(raw[hi]) {
		hi++
	}
	return raw[lo:hi]
}

// notRoundTrip explains a tokenizer whose decoded text encodes to other tokens.
func notRoundTrip(tok *tokenizer.Tokenizer, raw []byte, err error) error {
	where := ""
	if err != nil {
		where = " (" + err.Error() + ")"
	}
	return fmt.Errorf("synth: this tokenizer does not give back its own text: encoding the corpus, decoding the tokens and encoding the result again gives different tokens for most of it%s%s, so exact-length prompts cannot be built from it", where, hazards(tok))
}

func fewCuts(tok *tokenizer.Tokenizer, n int) error {
	return fmt.Errorf("synth: the corpus has only %d places where this tokenizer reliably splits between two words (a character, then a space and a letter, with a token boundary before the space that does not depend on the text around it); exact-length prompts need at least %d%s", n, minCuts, hazards(tok))
}

// hazards names the parts of the tokenizer that make text synthesis hard.
func hazards(tok *tokenizer.Tokenizer) string {
	h := tok.SynthesisHazards()
	if len(h) == 0 {
		return ""
	}
	return "; likely cause: " + strings.Join(h, "; ")
}

// joinSamples is how many random pairs of windows checkJoins encodes.
const joinSamples = 256

// checkJoins encodes pairs of corpus windows joined at random cuts and
// requires each pair to keep the tokens of its halves: the property every
// prompt relies on. A third window goes first, so that the two are in the
// middle of a text, as a prompt's later windows are. The pairs are fixed
// (seeded), so the answer is too.
func (c *Corpus) checkJoins(raw []byte, byteOff []int, ids []int) error {
	m := len(c.cuts)
	rng := rand.New(rand.NewPCG(1, 2))
	text := func(lo, hi int32) string { return string(raw[byteOff[lo]:byteOff[hi]]) }
	for k := 0; k < joinSamples; k++ {
		i := 3 + rng.IntN(m-3) // prefix cuts[i-3]..cuts[i-2], left window ..cuts[i]
		j := rng.IntN(m - 2)   // right window cuts[j]..cuts[j+2]
		p0, a0, a1 := c.cuts[i-3], c.cuts[i-2], c.cuts[i]
		b0, b1 := c.cuts[j], c.cuts[j+2]
		if !c.stable(int(p0), int(a1)) || !c.stable(int(b0), int(b1)) {
			continue
		}
		head := c.tok.Encode(text(p0, a0))
		ab := c.tok.Encode(text(p0, a0) + text(a0, a1) + text(b0, b1))
		want := append(append(head, ids[a0:a1]...), ids[b0:b1]...)
		if !slices.Equal(ab, want) {
			return fmt.Errorf("synth: with this tokenizer, joining two pieces of corpus text changes their tokens (%q then %q: %d tokens, not %d + %d), so exact-length prompts cannot be built from it%s",
				text(a0, a1), text(b0, b1), len(ab)-len(head), a1-a0, b1-b0, hazards(c.tok))
		}
	}
	return nil
}

// findLeads finds the cuts whose window may start a prompt segment: at the
// start of a plain prompt, or right after the block separator. There a
// tokenizer may treat text differently (prepend "▁", strip white space, add a
// prefix space), so each cut's window up to the next cut is encoded in those
// places and must keep its token count. stripLead (dropping the window's
// leading space, for tokenizers that prepend "▁" themselves) is chosen to
// keep the most cuts.
func (c *Corpus) findLeads(raw []byte, byteOff []int) error {
	sepText, sepID, hasSep := "", 0, false
	if id, ok := c.tok.BlockSeparator(); ok {
		sepText, sepID, hasSep = c.tok.Decode([]int{id}), id, true
	}
	safe := func(strip bool) []int32 {
		var out []int32
		for k := 0; k < len(c.cuts); k++ {
			if k == len(c.cuts)-1 {
				// The end of the corpus: no window starts there, but
				// keeping it makes the lead cuts the same list as the
				// cuts when all are safe.
				out = append(out, c.cuts[k])
				break
			}
			p, q := c.cuts[k], c.cuts[k+1]
			if !c.stable(int(p), int(q)) {
				continue
			}
			w := string(raw[byteOff[p]:byteOff[q]])
			if strip {
				w = w[1:]
			}
			n := int(q - p)
			if len(c.tok.Encode(w)) != n {
				continue
			}
			if hasSep {
				if ids := c.tok.Encode(sepText + w); len(ids) != n+1 || ids[0] != sepID {
					continue
				}
			}
			out = append(out, p)
		}
		return out
	}
	c.lead = safe(false)
	if len(c.lead) < len(c.cuts) {
		if alt := safe(true); len(alt) > len(c.lead) {
			c.lead, c.stripLead = alt, true
		}
	}
	if len(c.lead) < minCuts {
		return fmt.Errorf("synth: with this tokenizer, corpus text changes its token count at the start of a prompt or after the block separator (only %d of %d windows keep it), so exact-length prompts cannot be built from it%s", len(c.lead), len(c.cuts), hazards(c.tok))
	}
	return nil
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

// LeadCuts returns the number of cut positions whose window may start a
// prompt segment.
func (c *Corpus) LeadCuts() int { return len(c.lead) }

// Digest returns the SHA-256 of the corpus text, for cache keys.
func (c *Corpus) Digest() string { return c.digest }

// window returns the escaped text of tokens [s, s+n) where s and s+n are cuts.
func (c *Corpus) window(s, n int) []byte { return c.esc[c.escOff[s]:c.escOff[s+n]] }

// find returns the first cut s at or after cut index k (wrapping) such that
// s+n is also a cut.
func (c *Corpus) find(k, n int) (int, bool) { return c.findIn(c.cuts, k, n) }

// findLead is find over the cuts that may start a prompt segment.
func (c *Corpus) findLead(k, n int) (int, bool) { return c.findIn(c.lead, k, n) }

// stable reports whether every token in [s, e) re-encodes to itself.
func (c *Corpus) stable(s, e int) bool { return c.unstable[e] == c.unstable[s] }

func (c *Corpus) findIn(cuts []int32, k, n int) (int, bool) {
	m := len(cuts)
	for i := 0; i < m; i++ {
		s := int(cuts[(k+i)%m])
		if s+n <= c.n && c.isCut(s+n) && c.stable(s, s+n) {
			return s, true
		}
	}
	return 0, false
}
