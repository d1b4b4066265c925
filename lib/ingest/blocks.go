package ingest

import (
	"errors"
	"math"
	"strconv"

	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/record"
	"github.com/aiperf/toolkit/lib/trace"
)

// blockKey names a block's text: a hash id (already scoped to its trace)
// and, for a tokenizer whose block text depends on it, whether the block
// begins its text part.
type blockKey struct {
	id   uint64
	lead bool
}

// blockNum is a block's number in the records and whether this stream
// defined it yet.
type blockNum struct {
	n       uint32
	defined bool
}

// blockTable numbers the blocks of the records' block form densely, in
// order of first use over the whole input (other shards' rows included,
// so that every shard agrees), and remembers which ones this stream
// defined. Hash ids are scoped to their trace, so the table forgets a
// trace's blocks when the next file starts: its memory is one trace's.
type blockTable struct {
	src  string
	m    map[blockKey]blockNum
	next uint32
	text []byte
	// The previous row's full blocks and their numbers: a row of the
	// same session takes the numbers of the prefix it shares (the
	// conversation so far) without a lookup or a check, so a row costs
	// its new blocks only.
	prevSess       string
	prevIDs        []uint64
	prevNums, nums []uint32
}

var errTooManyBlocks = errors.New("more than 2^32-1 distinct blocks: tokenize with --no-blocks")

// agenticBlocks sets the block_messages of an agentic row (emit: the row is
// this shard's; else its blocks are only numbered), writing the block line
// of each block this stream has not defined before the record.
func (r *runner) agenticBlocks(row *trace.Row, rec *record.Record, emit bool) error {
	t := &r.blocks
	if t.m == nil || t.src != row.Source {
		t.m, t.src, t.prevSess = map[blockKey]blockNum{}, row.Source, ""
	}
	B := row.Agentic.BlockSize
	ids := row.HashIDs
	M := len(ids)
	partial := M > 0 && row.InputLength-(M-1)*B < B
	free := r.syn.PositionFree()
	full := M
	if partial {
		full--
	}
	shared := 0
	if free && t.prevSess == row.SessionID {
		shared = trace.CommonPrefix(t.prevIDs, ids[:full])
	}
	if err := r.syn.CheckFrom(row.Line, row.InputLength, row.HashIDs, shared); err != nil {
		return rowErr(row, err)
	}
	nums := t.nums[:0]
	b := append(r.lit[:0], '[')
	k := 0
	for i, sg := range row.Agentic.Segments {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":`...)
		b = jsonx.AppendString(b, sg.Role)
		b = append(b, `,"content":[`...)
		var first, n uint32
		items := 0
		flush := func() {
			if n == 0 {
				return
			}
			if items > 0 {
				b = append(b, ',')
			}
			items++
			if n == 1 {
				b = strconv.AppendUint(b, uint64(first), 10)
			} else {
				b = append(b, '[')
				b = strconv.AppendUint(b, uint64(first), 10)
				b = append(b, ',')
				b = strconv.AppendUint(b, uint64(n), 10)
				b = append(b, ']')
			}
			n = 0
		}
		for j := 0; j < sg.Blocks; j, k = j+1, k+1 {
			if k == M-1 && partial {
				flush()
				if !emit {
					continue
				}
				if items > 0 {
					b = append(b, ',')
				}
				items++
				b = append(b, '"')
				var err error
				if b, err = r.syn.AppendBlock(b, row.Line, row.InputLength, ids, k, j == 0); err != nil {
					return rowErr(row, err)
				}
				b = append(b, '"')
				continue
			}
			if k < shared {
				v := t.prevNums[k]
				nums = append(nums, v)
				if n > 0 && v == first+n {
					n++
				} else {
					flush()
					first, n = v, 1
				}
				continue
			}
			key := blockKey{id: ids[k], lead: j == 0 && !free}
			v, ok := t.m[key]
			if !ok {
				if t.next == math.MaxUint32 {
					return rowErr(row, errTooManyBlocks)
				}
				v = blockNum{n: t.next}
				t.next++
			}
			if emit && !v.defined {
				var err error
				if t.text, err = r.syn.AppendBlock(t.text[:0], row.Line, row.InputLength, ids, k, j == 0); err != nil {
					return rowErr(row, err)
				}
				if err := r.enc.EncodeBlock(v.n, t.text); err != nil {
					return r.outputError(err)
				}
				v.defined = true
				r.st.Defined++
				t.m[key] = v
			} else if !ok {
				t.m[key] = v
			}
			nums = append(nums, v.n)
			if n > 0 && v.n == first+n {
				n++
			} else {
				flush()
				first, n = v.n, 1
			}
		}
		flush()
		b = append(b, "]}"...)
	}
	r.lit = append(b, ']')
	t.prevSess, t.prevIDs = row.SessionID, ids[:full]
	t.prevNums, t.nums = nums, t.prevNums
	if !emit {
		return nil
	}
	if r.ver != nil {
		if err := r.verifyParts(row); err != nil {
			return err
		}
	}
	rec.Kind, rec.Raw = record.KindBlockMessages, r.lit
	// No hash_ids: the block numbers name the blocks (hash_ids would make
	// the records O(total tokens) again).
	rec.ContextMode = record.ContextMessageArray
	r.st.PromptTokens += int64(row.InputLength)
	return nil
}

// verifyParts submits each text part of a block-form row, as sent, to
// the verifier (--verify).
func (r *runner) verifyParts(row *trace.Row) error {
	B := row.Agentic.BlockSize
	ids := row.HashIDs
	last := row.InputLength - (len(ids)-1)*B
	for _, sg := range row.Agentic.Segments {
		part := ids[:sg.Blocks]
		ids = ids[sg.Blocks:]
		n := len(part) * B
		if len(ids) == 0 {
			n += last - B
		}
		var err error
		if r.vtext, err = r.syn.AppendPrompt(r.vtext[:0], row.Line, n, part); err != nil {
			return rowErr(row, err)
		}
		r.ver.submit(row.Source, row.Line, r.vtext, n)
	}
	return nil
}
