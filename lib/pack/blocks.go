package pack

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/aiperf/toolkit/lib/record"
	"github.com/aiperf/toolkit/lib/request"
)

// blocks holds the block texts of block-form records (their block lines)
// in a temporary file beside the output, unlinked at once, and where each
// input's blocks are in it: memory is 16 bytes a block, whatever the
// texts' size.
type blocks struct {
	dir  string
	f    *os.File
	size int64
	buf  []byte // a body's block texts, read back (stores without a block region)
}

// table is one input's blocks, in increasing block number (its block
// lines' order).
type table struct {
	ids  []uint32
	offs []int64 // in the temporary file
	lens []uint32
}

// define keeps block id's text for input t.
func (b *blocks) define(t *table, id uint32, text []byte) error {
	if b.f == nil {
		f, err := os.CreateTemp(b.dir, ".aiperf-blocks-*")
		if err != nil {
			return err
		}
		os.Remove(f.Name())
		b.f = f
	}
	if _, err := b.f.WriteAt(text, b.size); err != nil {
		return fmt.Errorf("block texts: %w", err)
	}
	t.ids = append(t.ids, id)
	t.offs = append(t.offs, b.size)
	t.lens = append(t.lens, uint32(len(text)))
	b.size += int64(len(text))
	return nil
}

func (b *blocks) close() {
	if b.f != nil {
		b.f.Close()
	}
}

// index returns the place in t of block id (the decoder checked that every
// block a record refers to was defined).
func (t *table) index(id uint32) int {
	return sort.Search(len(t.ids), func(i int) bool { return t.ids[i] >= id })
}

// lengths fills in the text length of each run of blocks of rec.
func (t *table) lengths(rec *record.Record) {
	for i := range rec.Pieces {
		p := &rec.Pieces[i]
		if p.N == 0 {
			continue
		}
		j := t.index(p.First)
		p.Len = 0
		for k := j; k < j+int(p.N); k++ {
			p.Len += int(t.lens[k])
		}
	}
}

// expand replaces the body's runs of blocks with their texts, read back
// from the temporary file (for a store that holds whole bodies).
func (b *blocks) expand(t *table, body *request.Body) error {
	if len(body.Runs) == 0 {
		return nil
	}
	total := 0
	for _, r := range body.Runs {
		total += r.Len
	}
	if cap(b.buf) < total {
		b.buf = make([]byte, total)
	}
	buf := b.buf[:total]
	at := 0
	for _, r := range body.Runs {
		j := t.index(r.First)
		from := at
		for k := j; k < j+int(r.N); {
			// blocks back to back in the file are read at once
			e, n := k+1, int(t.lens[k])
			for e < j+int(r.N) && t.offs[e] == t.offs[e-1]+int64(t.lens[e-1]) {
				n += int(t.lens[e])
				e++
			}
			if _, err := b.f.ReadAt(buf[at:at+n], t.offs[k]); err != nil {
				return fmt.Errorf("block texts: %w", err)
			}
			at += n
			k = e
		}
		body.Parts[r.Part] = buf[from:at]
	}
	body.Runs = nil
	return nil
}

func newBlocks(out string) *blocks { return &blocks{dir: filepath.Dir(out)} }
