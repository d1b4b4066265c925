package record

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// The block form (agentic traces, whose prompts repeat the same blocks
// dozens of times). A block line defines one block's text once:
//
//	{"v":1,"block":17,"text":"..."}
//
// block is the block's number (u32) and text a JSON string: its escaped
// bytes between the quotes are the block's text exactly as a body carries
// it. A stream defines each block before its first use, in increasing
// block number (so at most once). A producer numbers blocks densely, in
// order of first use over its whole input, so that the shards of one input
// agree on every number and a conversation that grows turn by turn refers
// to runs of consecutive blocks. Block lines are not records: the end
// line's count leaves them out.
//
// A record in the block form carries "block_messages" instead of
// "messages": an array of {"role":R,"content":[...]} objects whose content
// items are a block number N, a run [N,K] (blocks N..N+K-1) or a string
// (literal text). It stands for the messages array whose message i is
// {"role":R,"content":"<the items' text, back to back>"}, byte for byte.
// A record refers only to blocks its own stream defined before it.

// Piece is one piece of a block-form record's composed messages array:
// literal JSON bytes (Lit, when N is 0) or a run of N blocks from First.
// Len is the run's text length, filled in by the consumer that holds the
// block texts (the decoder does not know them).
type Piece struct {
	Lit      []byte
	First, N uint32
	Len      int
}

// AppendBlock appends the block line of block id, text its escaped bytes
// (a JSON string's content, without the quotes).
func AppendBlock(dst []byte, id uint32, text []byte) []byte {
	dst = append(dst, `{"v":1,"block":`...)
	dst = strconv.AppendUint(dst, uint64(id), 10)
	dst = append(dst, `,"text":"`...)
	dst = append(dst, text...)
	return append(dst, "\"}\n"...)
}

// EncodeBlock writes the block line of block id (see AppendBlock).
func (e *Encoder) EncodeBlock(id uint32, text []byte) error {
	e.buf = AppendBlock(e.buf[:0], id, text)
	_, err := e.w.Write(e.buf)
	return err
}

// blockLine checks a block line's members (block, text and v only).
func (p *lineParser) blockLine() error {
	rec := p.rec
	switch {
	case p.blockV == nil:
		return fieldErr("block", "missing")
	case p.text == nil:
		return fieldErr("text", "missing: a block line defines its block's text")
	case p.seen&^(fieldBit([]byte("v"))|fieldBit([]byte("block"))|fieldBit([]byte("text"))) != 0:
		return fieldErr("block", "a block line has only v, block and text")
	}
	id, err := uintField("block", p.blockV, math.MaxUint32, "not a block number")
	if err != nil {
		return err
	}
	if p.text[0] != '"' || len(p.text) < 3 {
		return fieldErr("text", "not a non-empty string")
	}
	rec.Kind, rec.Block, rec.Raw = KindBlock, uint32(id), p.text[1:len(p.text)-1]
	return nil
}

// defineBlock records a block line's number: numbers increase in a stream.
func (d *Decoder) defineBlock(id uint32) error {
	if n := len(d.blocks); n > 0 && id <= d.blocks[n-1] {
		return fieldErr("block", "%d after block %d: a stream defines blocks once, in increasing number", id, d.blocks[n-1])
	}
	d.blocks = append(d.blocks, id)
	return nil
}

// defined reports whether blocks first..first+n-1 were all defined.
func (d *Decoder) defined(first, n uint32) bool {
	i := sort.Search(len(d.blocks), func(i int) bool { return d.blocks[i] >= first })
	j := i + int(n) - 1
	return j < len(d.blocks) && d.blocks[i] == first && d.blocks[j] == first+n-1
}

// mark is a piece being built: lit[from:to] of the decoder's buffer (it
// may still move), a literal string of the line (ext) or a run of blocks.
type mark struct {
	from, to int
	first, n uint32
	ref      bool
	ext      []byte
}

// pieces composes a block_messages array into rec.Pieces, checking every
// reference against the blocks defined so far.
func (d *Decoder) pieces(rec *Record) error {
	lit := d.lit[:0]
	marks := d.marks[:0]
	addLit := func(b ...byte) {
		if len(marks) > 0 && !marks[len(marks)-1].ref && marks[len(marks)-1].ext == nil && marks[len(marks)-1].to == len(lit) {
			lit = append(lit, b...)
			marks[len(marks)-1].to = len(lit)
			return
		}
		marks = append(marks, mark{from: len(lit)})
		lit = append(lit, b...)
		marks[len(marks)-1].to = len(lit)
	}
	addLit('[')
	_, err := jsonx.Elements(rec.Raw, 0, func(i int, msg []byte, _ int) error {
		path := func() string { return fmt.Sprintf("block_messages[%d]", i) } // on error only
		if msg[0] != '{' {
			return fieldErr(path(), "not an object")
		}
		var role, content []byte
		_, err := jsonx.Fields(msg, 0, func(k, v []byte, _ int) error {
			switch string(k) {
			case `"role"`:
				role = v
			case `"content"`:
				content = v
			default:
				return fieldErr(path(), "unknown member %s (a block message has role and content)", clip(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		if role == nil || role[0] != '"' {
			return fieldErr(path()+".role", "missing or not a string")
		}
		if content == nil || content[0] != '[' || isEmptyArray(content) {
			return fieldErr(path()+".content", "missing or not a non-empty array of block numbers, [first,count] runs and strings")
		}
		if i > 0 {
			addLit(',')
		}
		addLit([]byte(`{"role":`)...)
		addLit(role...)
		addLit([]byte(`,"content":"`)...)
		_, err = jsonx.Elements(content, 0, func(j int, e []byte, _ int) error {
			ip := func() string { return fmt.Sprintf("%s.content[%d]", path(), j) }
			switch e[0] {
			case '"':
				if len(e) > 2 {
					marks = append(marks, mark{ext: e[1 : len(e)-1]})
				}
				return nil
			case '[':
				var v [2]uint64
				k := 0
				_, err := jsonx.Elements(e, 0, func(n int, x []byte, _ int) error {
					u, ok := jsonx.ParseUint(x)
					if !ok || n > 1 || u > math.MaxUint32 {
						return fieldErr(ip(), "a run is [first,count] of block numbers")
					}
					v[n], k = u, n+1
					return nil
				})
				if err != nil {
					return err
				}
				if k != 2 || v[1] == 0 || v[0]+v[1]-1 > math.MaxUint32 {
					return fieldErr(ip(), "a run is [first,count] with count > 0")
				}
				return d.ref(&marks, ip, uint32(v[0]), uint32(v[1]))
			}
			u, ok := jsonx.ParseUint(e)
			if !ok || u > math.MaxUint32 {
				return fieldErr(ip(), "not a block number, a [first,count] run or a string: %s", clip(e))
			}
			return d.ref(&marks, ip, uint32(u), 1)
		})
		if err != nil {
			return err
		}
		addLit('"', '}')
		return nil
	})
	if err != nil {
		return err
	}
	addLit(']')
	ps := d.ps[:0]
	for _, m := range marks {
		switch {
		case m.ref:
			ps = append(ps, Piece{First: m.first, N: m.n})
		case m.ext != nil:
			ps = append(ps, Piece{Lit: m.ext})
		default:
			ps = append(ps, Piece{Lit: lit[m.from:m.to]})
		}
	}
	d.lit, d.ps = lit, ps
	d.marks = marks[:0]
	rec.Pieces = ps
	return nil
}

// ref appends a run of blocks to marks, merged with a run it continues.
func (d *Decoder) ref(marks *[]mark, path func() string, first, n uint32) error {
	if !d.defined(first, n) {
		return fieldErr(path(), "refers to block %d..%d, not all defined earlier in the stream", first, first+n-1)
	}
	ms := *marks
	if k := len(ms); k > 0 && ms[k-1].ref && ms[k-1].first+ms[k-1].n == first {
		ms[k-1].n += n
		return nil
	}
	*marks = append(ms, mark{first: first, n: n, ref: true})
	return nil
}
