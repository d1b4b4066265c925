package store

import (
	"errors"
	"fmt"
)

// The hashes section (format version 2, see format.go) carries the trace's
// KV block ids of every record's prompt: what the trace says about prefix
// reuse, from which the ideal prefix-cache hit rate of any set of records
// follows. A store without hash_ids has no such section and stays a
// version 1 file, byte for byte.

// hashes is the parsed hashes section: empty (BlockSize 0) without one.
type hashes struct {
	blockSize uint32
	start     []byte // [N+1]u64
	ids       []byte // [M]u64
}

// hashesSize is the size of a hashes section for n records and m ids.
func hashesSize(n, m uint64) uint64 { return 8 + 8*(n+1) + 8*m }

// parseHashes checks the hashes section and slices it up: a positive block
// size, a zero reserved word, and start boundaries from 0, non-decreasing,
// ending at the number of ids the section holds.
func (r *Reader) parseHashes() error {
	sec := r.h.sec[secHashes]
	b := r.b[sec.off:sec.end():sec.end()]
	n := r.h.records
	bs := le.Uint32(b)
	switch {
	case bs == 0:
		return formatError(sec.off, "hashes section: block size 0")
	case le.Uint32(b[4:]) != 0:
		return formatError(sec.off+4, "hashes section: reserved field is not zero")
	}
	m := (sec.size - hashesSize(n, 0)) / 8
	start := b[8 : 8+8*(n+1)]
	ids := b[8+8*(n+1):]
	var prev uint64
	for i := uint64(0); i <= n; i++ {
		v := le.Uint64(start[8*i:])
		switch {
		case i == 0 && v != 0:
			return formatError(sec.off+8, "hashes section: record 0 starts at id %d, want 0", v)
		case v < prev:
			return formatError(sec.off+8+8*i, "hashes section: record %d starts at id %d, before the previous record's %d", i, v, prev)
		case v > m:
			return formatError(sec.off+8+8*i, "hashes section: record %d starts at id %d, past the %d ids the section holds", i, v, m)
		}
		prev = v
	}
	if prev != m {
		return formatError(sec.off+8+8*n, "hashes section: the records' ids end at %d, the section holds %d", prev, m)
	}
	r.hashes = hashes{blockSize: bs, start: start, ids: ids}
	return nil
}

// BlockSize returns the tokens per hash_id block of the store's hash ids,
// or 0 when the store carries none (a version 1 file).
func (r *Reader) BlockSize() int { return int(r.hashes.blockSize) }

// NumHashIDs returns the number of hash ids of record i (0 without a
// hashes section). It panics if i is out of range.
func (r *Reader) NumHashIDs(i int) int {
	r.checkIndex(i)
	if r.hashes.blockSize == 0 {
		return 0
	}
	return int(le.Uint64(r.hashes.start[8*i+8:]) - le.Uint64(r.hashes.start[8*i:]))
}

// AppendHashIDs appends the hash ids of record i (the trace's KV block ids
// of its prompt, in order) to dst and returns it. It panics if i is out of
// range.
func (r *Reader) AppendHashIDs(dst []uint64, i int) []uint64 {
	r.checkIndex(i)
	if r.hashes.blockSize == 0 {
		return dst
	}
	a, b := le.Uint64(r.hashes.start[8*i:]), le.Uint64(r.hashes.start[8*i+8:])
	for j := a; j < b; j++ {
		dst = append(dst, le.Uint64(r.hashes.ids[8*j:]))
	}
	return dst
}

// SetBlockSize sets the tokens per hash_id block of the hash ids given to
// AddHashed. It must be set (and the same for every record) when any record
// has hash ids.
func (w *Writer) SetBlockSize(n uint32) error {
	if w.blockSize != 0 && w.blockSize != n {
		return fmt.Errorf("store: block size %d set after %d: a store has one block size", n, w.blockSize)
	}
	w.blockSize = n
	return nil
}

// AddHashed is AddParts for a record whose prompt the trace describes as KV
// blocks: ids are its hash_ids, written to the hashes section (a store with
// any hash ids is written in format version 2; see SetBlockSize).
func (w *Writer) AddHashed(e Entry, ids []uint64, parts ...[]byte) error {
	return w.add(e, ids, parts)
}

// addHashes records the hash ids of the record just added. The start column
// is spilled as each record's end (start[i+1]); the spill files appear with
// the first record that has ids, the records before it getting none.
func (w *Writer) addHashes(ids []uint64) {
	if w.hashEnds == nil {
		if len(ids) == 0 {
			return
		}
		w.hashEnds = newSpill(w.path, &w.spillFail)
		w.hashIDs = newSpill(w.path, &w.spillFail)
		for range w.records - 1 {
			w.hashEnds.put64(0)
		}
	}
	for _, id := range ids {
		w.hashIDs.put64(id)
	}
	w.hashCount += uint64(len(ids))
	w.hashEnds.put64(w.hashCount)
}

// writeHashes writes the hashes section (when any record has hash ids).
func (w *Writer) writeHashes(scratch []byte) error {
	if w.hashCount == 0 {
		return nil
	}
	if w.blockSize == 0 {
		return errors.New("store: records have hash ids but the block size is not set")
	}
	p := w.p
	p.put32(w.blockSize)
	p.put32(0)
	p.put64(0)
	if err := w.hashEnds.each(scratch, p.Write); err != nil {
		return w.spillErr(err)
	}
	if err := w.hashIDs.each(scratch, p.Write); err != nil {
		return w.spillErr(err)
	}
	return nil
}

// hashesSectionSize is the size of the hashes section the writer will
// write: 0 when no record has hash ids.
func (w *Writer) hashesSectionSize() uint64 {
	if w.hashCount == 0 {
		return 0
	}
	return hashesSize(w.records, w.hashCount)
}
