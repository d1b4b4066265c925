package tokenizer

import "unsafe"

// strArena makes the strings of a loaded vocabulary in 64 KB blocks
// instead of one allocation each. A tokenizer.json holds ~150,000 tokens
// and as many merges: one string each, their byte-level forms and the
// merged pairs looked up were ~380,000 allocations a load of the builtin
// tokenizer (and under -race, whose allocation hooks are dear, most of a
// load's 1.8 s).
//
// A string points into its block, which is only ever appended to: the
// bytes under a string handed out never change.
type strArena struct{ block []byte }

const arenaBlock = 64 << 10

// str returns a string with the bytes of b.
func (a *strArena) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > cap(a.block)-len(a.block) {
		if len(b) > arenaBlock/4 {
			return string(b) // a large one alone: a block's tail stays usable
		}
		a.block = make([]byte, 0, arenaBlock)
	}
	n := len(a.block)
	a.block = append(a.block, b...)
	return unsafe.String(&a.block[n], len(b))
}
