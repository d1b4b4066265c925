package tokenizer

import (
	"fmt"
	"slices"
)

// SynthesisHazards names, in words for a user, the parts of the tokenizer
// that can stop text built from pieces of other text from encoding to the
// sum of the pieces' tokens: steps that add, remove or move characters, or
// that split text by rules that depend on more than the neighbouring
// characters. Exact-length prompt synthesis checks its text empirically
// (see package synth); this list only explains a failed check. It is empty
// for the common tokenizers.
func (t *Tokenizer) SynthesisHazards() []string {
	var h []string
	add := func(format string, args ...any) {
		if m := fmt.Sprintf(format, args...); !slices.Contains(h, m) {
			h = append(h, m)
		}
	}
	var walkNorm func(n normalizer)
	walkNorm = func(n normalizer) {
		switch n := n.(type) {
		case normSequence:
			for _, m := range n {
				walkNorm(m)
			}
		case stripNorm:
			add("its Strip normalizer removes white space at the start or end of every text")
		case prepend:
			if n.s != "▁" {
				add("its Prepend normalizer puts %q before every text", n.s)
			}
		case replace:
			if _, ok := n.m.(literalMatcher); !ok {
				add("its Replace normalizer rewrites text matched by a regular expression")
			}
		}
	}
	walkNorm(t.norm)
	var walkPre func(p preTokenizer, inSeq bool)
	walkPre = func(p preTokenizer, inSeq bool) {
		switch p := p.(type) {
		case ptSequence:
			for _, q := range p {
				walkPre(q, true)
			}
		case byteLevelPT:
			if p.addPrefixSpace && inSeq {
				add("its ByteLevel pre-tokenizer adds a space before every piece that does not start with one")
			}
		case splitPT:
			switch {
			case p.b == removed && !p.invert:
				add("its Split pre-tokenizer deletes the text its pattern matches")
			case p.b == contiguous:
				add("its Split pre-tokenizer joins neighbouring matches into one piece (Contiguous)")
			case p.b == mergedWithPrevious || p.b == mergedWithNext:
				add("its Split pre-tokenizer attaches each match to the piece before or after it")
			}
			if _, ok := p.m.(regexMatcher); ok {
				add("its Split pre-tokenizer uses a regular expression whose word boundaries are not known in advance")
			}
		}
	}
	walkPre(t.pre, false)
	if t.model.prefix != "" || t.model.suffix != "" {
		add("its model marks word pieces with %q", t.model.prefix+t.model.suffix)
	}
	if t.dec == nil {
		add("it has no decoder, so its tokens do not turn back into the text they came from")
	}
	return h
}
