// Package synth builds prompts of an exact token length from a trace's
// input_length and hash_ids, so that rows sharing hash_ids share a
// byte-identical text prefix and the server's prefix cache hits as it did
// when the trace was recorded.
//
// A hash_id's block is a pure function of (seed, scope, hash_id, block size,
// tokenizer, corpus): its text never depends on row order, shard or thread
// count. Each block starts with the tokenizer's block separator (BOS, else
// EOS), as the Python aiperf does, followed by corpus tokens taken between cut
// positions (see Corpus), so every prompt re-encodes to exactly input_length
// tokens without re-encoding anything at synthesis time. Block texts are
// slices of the corpus escaped once, so building a prompt is a few copies.
//
// Cache keys trust these bytes: a change to the prompts this package makes
// bumps synthversion.Synthesis, and a change to the corpus
// synthversion.Corpus (lib/synth/synthversion; lib/cmd/hashcmd's golden
// pair fails, naming it, otherwise).
package synth

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"runtime"
	"strconv"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// DefaultBlockSize is the Mooncake KV block size in tokens.
const DefaultBlockSize = 512

// Options configure a Synth. All of them change output bytes.
type Options struct {
	Seed      uint64
	BlockSize int    // tokens per hash_id block; DefaultBlockSize when 0
	Scope     string // hash_id namespace ("" = global, as aiperf's mooncake path)
}

// Error is a row whose lengths and hash_ids do not fit together.
type Error struct {
	Field string
	Msg   string
}

func (e *Error) Error() string { return e.Field + ": " + e.Msg }

// block is where the text of one hash_id's block comes from.
type block struct {
	id     uint64
	size   int32 // tokens, separator included; 0 marks an empty cache entry
	s1, s2 int32 // corpus cut positions of the two body segments
	n1, n2 int32 // their lengths in tokens
}

// cacheSize is the number of recently used blocks whose placement is kept
// (a direct-mapped cache of 1.25 MiB); a block that is not in it is placed
// again, a pure function of (seed, scope, hash_id, size).
const cacheSize = 1 << 15

// Synth synthesizes prompts. It is not safe for concurrent use.
type Synth struct {
	c         *Corpus
	o         Options
	hasSep    bool
	sepID     int
	sepEsc    []byte
	sepText   string
	stripLead bool
	table     *blockTable // every hash_id's first use
	cache     []block     // placements, by mix(hash_id) % cacheSize
}

// New prepares a synthesizer over corpus c.
func New(c *Corpus, o Options) (*Synth, error) {
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.BlockSize < 1 || o.BlockSize > 1<<20 {
		return nil, fmt.Errorf("block size %d out of range", o.BlockSize)
	}
	s := &Synth{c: c, o: o, table: &blockTable{block: o.BlockSize}, cache: make([]block, cacheSize)}
	// The table lives outside the Go heap (see region); let it go with s.
	runtime.AddCleanup(s, func(t *blockTable) { t.free() }, s.table)
	if id, ok := c.tok.BlockSeparator(); ok {
		s.hasSep, s.sepID = true, id
		s.sepText = c.tok.Decode([]int{id})
		lit := jsonx.AppendString(nil, s.sepText)
		s.sepEsc = lit[1 : len(lit)-1]
	}
	// A segment that starts a prompt or follows the separator drops its
	// leading space when the tokenizer prepends "▁" itself (see Corpus).
	s.stripLead = c.stripLead
	return s, nil
}

// Describe returns the canonical settings lines for cache keys.
func (s *Synth) Describe() []string {
	sep := "none"
	if s.hasSep {
		sep = strconv.Itoa(s.sepID)
	}
	return []string{
		"synth=v2",
		"seed=" + strconv.FormatUint(s.o.Seed, 10),
		"block_size=" + strconv.Itoa(s.o.BlockSize),
		"scope=" + strconv.Quote(s.o.Scope),
		"separator=" + sep,
		"corpus_sha256=" + s.c.Digest(),
	}
}

func (s *Synth) seedWords(scope string, id uint64) (uint64, uint64) {
	// sha256("<seed>:<scope>:<id>"), built without allocating.
	var buf [96]byte
	b := strconv.AppendUint(buf[:0], s.o.Seed, 10)
	b = append(append(append(b, ':'), scope...), ':')
	b = strconv.AppendUint(b, id, 10)
	h := sha256.Sum256(b)
	return binary.BigEndian.Uint64(h[0:8]), binary.BigEndian.Uint64(h[8:16])
}

// place picks the two body segments of n tokens from seed words a and b.
func (s *Synth) place(a, b uint64, n int) (s1, n1, s2, n2 int, err error) {
	n1 = n / 2
	n2 = n - n1
	var ok1, ok2 bool
	// The first segment may start a prompt or follow the separator.
	s1, ok1 = s.c.findLead(int(a%uint64(len(s.c.lead))), n1)
	s2, ok2 = s.c.find(int(b%uint64(len(s.c.cuts))), n2)
	if !ok1 || !ok2 {
		return 0, 0, 0, 0, fmt.Errorf("no corpus window of %d tokens (the corpus has %d tokens)", n/2+1, s.c.n)
	}
	return
}

// AppendPrompt appends the JSON string literal (quotes included) of the prompt
// for one trace row: inputLen tokens, built from hashIDs blocks when given.
// line is the row's line in its trace file: errors name it, and it seeds the
// text of rows without hash_ids (so it must be unique within one input).
func (s *Synth) AppendPrompt(dst []byte, line int64, inputLen int, hashIDs []uint64) ([]byte, error) {
	if inputLen <= 0 {
		return dst, &Error{Field: "input_length", Msg: fmt.Sprintf("must be positive, got %d", inputLen)}
	}
	dst = append(dst, '"')
	if len(hashIDs) == 0 {
		var err error
		dst, err = s.appendPlain(dst, uint64(line), inputLen)
		if err != nil {
			return dst, err
		}
		return append(dst, '"'), nil
	}
	B := s.o.BlockSize
	M := len(hashIDs)
	last := inputLen - (M-1)*B
	if last <= 0 || last > B {
		return dst, &Error{Field: "hash_ids", Msg: fmt.Sprintf("%d hash_ids of %d-token blocks cannot make input_length %d (the last block would hold %d tokens; want 1..%d)", M, B, inputLen, last, B)}
	}
	start := len(dst)
	row := rowRef{line: line, lastSize: last}
	for i, id := range hashIDs {
		size := B
		if i == M-1 {
			size = last
		}
		blk, err := s.block(id, size, i == M-1, &row)
		if err != nil {
			return dst, &Error{Field: fmt.Sprintf("hash_ids[%d]", i), Msg: err.Error()}
		}
		dst = s.appendBlock(dst, blk, len(dst) == start)
	}
	return append(dst, '"'), nil
}

// block checks that hash_id id is used at the size it was first used at
// and returns its placement, from the cache or placed again.
func (s *Synth) block(id uint64, size int, atLast bool, row *rowRef) (block, error) {
	c := &s.cache[mix(id)%cacheSize]
	if c.size != 0 && c.id == id && int(c.size) == size {
		return *c, nil
	}
	first, firstLine, err := s.table.use(id, atLast, row)
	if err != nil {
		return block{}, err
	}
	if first != size {
		return block{}, fmt.Errorf("hash_id %d is a %d-token block here but a %d-token block on line %d (block size %d)", id, size, first, firstLine, s.o.BlockSize)
	}
	blk, err := s.newBlock(id, size)
	if err != nil {
		return block{}, err
	}
	*c = blk
	return blk, nil
}

// Blocks returns the number of distinct hash_id blocks seen so far.
func (s *Synth) Blocks() int { return s.table.count }

// Check validates a row's hash_ids against the blocks seen so far and
// registers new ones, without producing text (used for rows another shard
// emits, and before AppendBlock): the checks of AppendPrompt.
func (s *Synth) Check(line int64, inputLen int, hashIDs []uint64) error {
	return s.CheckFrom(line, inputLen, hashIDs, 0)
}

// CheckFrom is Check of hashIDs[from:] only: the blocks before were
// checked at the same sizes already (a prefix of an earlier row's full
// blocks).
func (s *Synth) CheckFrom(line int64, inputLen int, hashIDs []uint64, from int) error {
	if inputLen <= 0 {
		return &Error{Field: "input_length", Msg: fmt.Sprintf("must be positive, got %d", inputLen)}
	}
	M := len(hashIDs)
	if M == 0 {
		return nil
	}
	B := s.o.BlockSize
	last := inputLen - (M-1)*B
	if last <= 0 || last > B {
		return &Error{Field: "hash_ids", Msg: fmt.Sprintf("%d hash_ids of %d-token blocks cannot make input_length %d (the last block would hold %d tokens; want 1..%d)", M, B, inputLen, last, B)}
	}
	row := rowRef{line: line, lastSize: last}
	for i := from; i < M; i++ {
		size := B
		if i == M-1 {
			size = last
		}
		if _, err := s.block(hashIDs[i], size, i == M-1, &row); err != nil {
			return &Error{Field: fmt.Sprintf("hash_ids[%d]", i), Msg: err.Error()}
		}
	}
	return nil
}

// AppendBlock appends the text of block i of a prompt (JSON-escaped, no
// quotes) as AppendPrompt would write it, the prompt checked by Check
// first; atStart says the block begins its text part (see PositionFree).
func (s *Synth) AppendBlock(dst []byte, line int64, inputLen int, hashIDs []uint64, i int, atStart bool) ([]byte, error) {
	B, M := s.o.BlockSize, len(hashIDs)
	size := B
	if i == M-1 {
		size = inputLen - (M-1)*B
	}
	row := rowRef{line: line, lastSize: inputLen - (M-1)*B}
	blk, err := s.block(hashIDs[i], size, i == M-1, &row)
	if err != nil {
		return dst, &Error{Field: fmt.Sprintf("hash_ids[%d]", i), Msg: err.Error()}
	}
	return s.appendBlock(dst, blk, atStart), nil
}

// PositionFree reports that a block's text is the same wherever it
// stands in a text part: true unless the tokenizer has no block separator
// and drops a leading space at the start of a text.
func (s *Synth) PositionFree() bool { return s.hasSep || !s.stripLead }

func (s *Synth) newBlock(id uint64, size int) (block, error) {
	body := size
	if s.hasSep {
		body--
	}
	a, b := s.seedWords(s.o.Scope, id)
	s1, n1, s2, n2, err := s.place(a, b, body)
	if err != nil {
		return block{}, err
	}
	return block{id: id, size: int32(size), s1: int32(s1), n1: int32(n1), s2: int32(s2), n2: int32(n2)}, nil
}

func (s *Synth) appendBlock(dst []byte, blk block, atStart bool) []byte {
	lead := atStart // a segment that starts the prompt or follows the separator
	if s.hasSep {
		dst = append(dst, s.sepEsc...)
		lead = true
	}
	first := true
	for _, seg := range [2][2]int32{{blk.s1, blk.n1}, {blk.s2, blk.n2}} {
		if seg[1] == 0 {
			continue
		}
		w := s.c.window(int(seg[0]), int(seg[1]))
		if first && lead && s.stripLead {
			w = w[1:]
		}
		first = false
		dst = append(dst, w...)
	}
	return dst
}

// maxSegment bounds one corpus window of a plain prompt, so prompts longer
// than the corpus are composed of several windows.
const maxSegment = 2048

func (s *Synth) appendPlain(dst []byte, line uint64, n int) ([]byte, error) {
	a, b := s.seedWords("row", line)
	first := true
	for seg := 0; n > 0; seg++ {
		k := n
		if k > maxSegment {
			k = maxSegment
			if n-k < 8 { // keep the tail long enough to find a window
				k = n - 8
			}
		}
		w := a + uint64(seg)*b
		var st int
		var ok bool
		for {
			if first {
				st, ok = s.c.findLead(int(w%uint64(len(s.c.lead))), k)
			} else {
				st, ok = s.c.find(int(w%uint64(len(s.c.cuts))), k)
			}
			// A corpus with places no window may cross (see Corpus)
			// can lack long windows: take shorter ones.
			if ok || k <= 64 || n-k/2 < 8 {
				break
			}
			k /= 2
		}
		if !ok {
			return dst, &Error{Field: "input_length", Msg: fmt.Sprintf("no corpus window of %d tokens", k)}
		}
		text := s.c.window(st, k)
		if first && s.stripLead {
			text = text[1:]
		}
		first = false
		dst = append(dst, text...)
		n -= k
	}
	return dst, nil
}
