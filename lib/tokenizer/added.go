package tokenizer

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/tokenizer/internal/ucd"
)

// addedToken is one entry of tokenizer.json's added_tokens.
type addedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// addedTrie finds added tokens in text, leftmost-longest, like the
// Aho-Corasick automaton Hugging Face builds with MatchKind::LeftmostLongest.
// A byte trie suffices: the scan tries each start position in turn, and
// firstByte rejects most positions with one table lookup.
type addedTrie struct {
	nodes     []trieNode
	firstByte [256]bool
	tokens    []addedToken
}

type trieNode struct {
	next  map[byte]int32
	token int32 // index into tokens, -1 when no token ends here
}

func newAddedTrie(tokens []addedToken, pattern func(addedToken) string) *addedTrie {
	if len(tokens) == 0 {
		return nil
	}
	t := &addedTrie{nodes: []trieNode{{token: -1}}, tokens: tokens}
	for i, tok := range tokens {
		p := pattern(tok)
		if p == "" {
			continue
		}
		t.firstByte[p[0]] = true
		n := int32(0)
		for k := 0; k < len(p); k++ {
			c := p[k]
			nx, ok := t.nodes[n].next[c]
			if !ok {
				if t.nodes[n].next == nil {
					t.nodes[n].next = make(map[byte]int32, 1)
				}
				nx = int32(len(t.nodes))
				t.nodes[n].next[c] = nx
				t.nodes = append(t.nodes, trieNode{token: -1})
			}
			n = nx
		}
		t.nodes[n].token = int32(i)
	}
	return t
}

// longest returns the token index and length of the longest token that
// starts s, or -1.
func (t *addedTrie) longest(s string) (tok, n int) {
	tok = -1
	node := int32(0)
	for k := 0; k < len(s); k++ {
		nx, ok := t.nodes[node].next[s[k]]
		if !ok {
			break
		}
		node = nx
		if t.nodes[node].token >= 0 {
			tok, n = int(t.nodes[node].token), k+1
		}
	}
	return tok, n
}

// segment is a span of text that is either an added token or plain text.
type segment struct {
	lo, hi int
	token  int // id of the added token, or -1
}

// split finds the added tokens in s and returns the segments covering s,
// applying the single_word, lstrip and rstrip flags as Hugging Face's
// AddedVocabulary::find_matches does.
func (t *addedTrie) split(s string, dst []segment) []segment {
	if t == nil {
		return append(dst, segment{0, len(s), -1})
	}
	startOff := 0
	for pos := 0; pos < len(s); {
		if !t.firstByte[s[pos]] {
			pos++
			continue
		}
		ti, n := t.longest(s[pos:])
		if ti < 0 {
			pos++
			continue
		}
		tok := &t.tokens[ti]
		start, stop := pos, pos+n
		pos = stop // the automaton resumes after the match, used or not
		if tok.SingleWord {
			if (start > 0 && endsWithWord(s[:start])) || (stop < len(s) && startsWithWord(s[stop:])) {
				continue
			}
		}
		if tok.LStrip {
			start = max(leftmostSpaceAtEnd(s[:start]), startOff)
		}
		if tok.RStrip {
			stop += rightmostSpaceAtStart(s[stop:])
		}
		if start < startOff {
			start = startOff
		}
		if startOff < start {
			dst = append(dst, segment{startOff, start, -1})
		}
		dst = append(dst, segment{start, stop, tok.ID})
		startOff = stop
		if pos < stop {
			pos = stop
		}
	}
	if startOff != len(s) {
		dst = append(dst, segment{startOff, len(s), -1})
	}
	return dst
}

// isWordChar is the regex class \w in Rust's regex crate (which
// single_word uses): Alphabetic, marks, decimal digits, connector
// punctuation and the joiners ZWNJ and ZWJ, at Unicode 16.0.0.
func isWordChar(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
	}
	return regexWord().Contains(r)
}

var regexWord = sync.OnceValue(func() ucd.Ranges {
	jc, _ := ucd.Property("Join_Control")
	return ucd.Union(word(), jc)
})

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return isWordChar(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isWordChar(r)
}

// leftmostSpaceAtEnd returns where the run of white space that ends s
// starts.
func leftmostSpaceAtEnd(s string) int {
	i := len(s)
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if !unicode.IsSpace(r) {
			break
		}
		i -= size
	}
	return i
}

// rightmostSpaceAtStart returns the length of the run of white space that
// starts s.
func rightmostSpaceAtStart(s string) int {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += size
	}
	return i
}
