package store

import (
	"errors"
	"fmt"
)

// The bodies section (format version 3, see format.go): a block region
// holding each distinct block's text once, and every record's body as a
// list of spans, literal bytes of the data section and runs of blocks.
// A store gets one when its records refer to blocks (AddBlock, AddSpans);
// else it stays a version 1 or 2 file, byte for byte.

// spanRun marks a span's first word as a run of blocks.
const spanRun = 1 << 63

// bodies is the parsed bodies section (blocks nil without one).
type bodies struct {
	nb, ns uint64
	boff   []byte // [B+1]u64
	sstart []byte // [N+1]u64
	blen   []byte // [N]u64
	spans  []byte // [K]{u64, u64}
	text   []byte // the block texts
	textAt uint64 // file offset of text
}

// bodiesSize is the size of a bodies section for n records, b blocks, k
// spans and l bytes of block text.
func bodiesSize(n, b, k, l uint64) uint64 {
	return 24 + 8*(b+1) + 8*(n+1) + 8*n + 16*k + align8(l)
}

// Run is a run of consecutive blocks in a body given to AddSpans: the part
// Parts[Part] is nil and stands for blocks First..First+N-1 (the numbers
// AddBlock returned); several runs at one part follow each other.
type Run struct {
	Part     int
	First, N uint32
}

// AddBlock stores a block's text once and returns its number (0, 1, ...
// in the order added), for the runs of AddSpans. A store with blocks is
// written in format version 3.
func (w *Writer) AddBlock(text []byte) (uint32, error) {
	if w.err != nil {
		return 0, w.err
	}
	n := uint32(len(w.blens))
	if uint64(n) >= 1<<32-1 {
		w.err = errors.New("store: more than 2^32-1 blocks")
		return 0, w.err
	}
	if len(text) > MaxPayload {
		w.err = fmt.Errorf("store: a block of %d bytes exceeds %d", len(text), uint64(MaxPayload))
		return 0, w.err
	}
	w.spanned()
	w.btext.write(text)
	w.blockText += uint64(len(text))
	w.boff.put64(w.blockText)
	w.blens = append(w.blens, uint32(len(text)))
	return n, nil
}

// AddSpans is AddParts for a body made of literal parts and runs of
// blocks (a nil part for each run): the literal parts go to the data
// section, the body to the bodies section as spans, adjacent literal parts
// in one span.
func (w *Writer) AddSpans(e Entry, parts [][]byte, runs []Run) error {
	w.spanned()
	var blocks uint64
	for i, r := range runs {
		if i > 0 && r.Part < runs[i-1].Part {
			w.err = fmt.Errorf("store: record %d (line %d): runs out of part order", w.records, e.Line)
			return w.err
		}
		if r.Part < 0 || r.Part >= len(parts) || parts[r.Part] != nil || r.N == 0 || uint64(r.First)+uint64(r.N) > uint64(len(w.blens)) {
			w.err = fmt.Errorf("store: record %d (line %d): run of blocks %d..%d not stored (%d blocks) or not at a nil part", w.records, e.Line, r.First, uint64(r.First)+uint64(r.N)-1, len(w.blens))
			return w.err
		}
		for _, l := range w.blens[r.First : r.First+r.N] {
			blocks += uint64(l)
		}
	}
	w.runs, w.runBytes = runs, blocks
	defer func() { w.runs, w.runBytes = nil, 0 }()
	return w.add(e, nil, parts)
}

// spanned marks the store as a version 3 one (bodies as spans).
func (w *Writer) spanned() { w.v3 = true }

// addSpans records the spans of the record just added, whose literal
// bytes start at file offset lit and are size bytes long. Every store
// records them (24 bytes a record, in spills); only a version 3 one
// writes them.
func (w *Writer) addSpans(parts [][]byte, lit, size uint64) {
	sp := w.recSpans[:0]
	ri := 0
	for i, p := range parts {
		if ri < len(w.runs) && w.runs[ri].Part == i {
			for ; ri < len(w.runs) && w.runs[ri].Part == i; ri++ {
				r := w.runs[ri]
				if k := len(sp); k > 0 && sp[k-1][0]&spanRun != 0 && (sp[k-1][0]&^spanRun)+sp[k-1][1] == uint64(r.First) {
					sp[k-1][1] += uint64(r.N) // adjacent blocks: one span
					continue
				}
				sp = append(sp, [2]uint64{spanRun | uint64(r.First), uint64(r.N)})
			}
			continue
		}
		if len(p) == 0 {
			continue
		}
		if k := len(sp); k > 0 && sp[k-1][0]&spanRun == 0 {
			sp[k-1][1] += uint64(len(p))
		} else {
			sp = append(sp, [2]uint64{lit, uint64(len(p))})
		}
		lit += uint64(len(p))
	}
	for _, s := range sp {
		w.spans.put64(s[0])
		w.spans.put64(s[1])
	}
	w.spanCount += uint64(len(sp))
	w.sends.put64(w.spanCount)
	w.blen.put64(size + w.runBytes)
	w.bodyBytes += size + w.runBytes
	w.recSpans = sp
}

// bodiesSectionSize is the size of the bodies section the writer will
// write: 0 for a store that is not a version 3 one.
func (w *Writer) bodiesSectionSize() uint64 {
	if !w.v3 {
		return 0
	}
	return bodiesSize(w.records, uint64(len(w.blens)), w.spanCount, w.blockText)
}

// writeBodies writes the bodies section of a version 3 store.
func (w *Writer) writeBodies(scratch []byte) error {
	if !w.v3 {
		return nil
	}
	if w.hashCount > 0 {
		return errors.New("store: records have hash ids and blocks: a store with blocks carries no hash ids")
	}
	p := w.p
	p.put64(uint64(len(w.blens)))
	p.put64(w.spanCount)
	p.put64(w.blockText)
	for _, s := range []*spill{w.boff, w.sends, w.blen, w.spans, w.btext} {
		if err := s.each(scratch, p.Write); err != nil {
			return w.spillErr(err)
		}
	}
	p.zeros(int(align8(w.blockText) - w.blockText))
	return nil
}

// parseBodies checks the bodies section and slices it up: counts that fit
// the section, block ends from 0, non-decreasing, ending at the text's
// length; span ends likewise ending at the span count; every span in
// bounds (a literal inside its own record's bytes of the data section, a
// run inside the blocks) and each body's length the sum of its spans'. Every
// part a body gives is then a slice of the file.
func (r *Reader) parseBodies() error {
	sec := r.h.sec[secBodies]
	b := r.b[sec.off:sec.end():sec.end()]
	n := r.h.records
	nb, k, l := le.Uint64(b), le.Uint64(b[8:]), le.Uint64(b[16:])
	if nb > sec.size/8 || k > sec.size/16 || l > sec.size || bodiesSize(n, nb, k, l) != sec.size {
		return formatError(sec.off, "bodies section: %d blocks, %d spans and %d text bytes do not make its %d bytes", nb, k, l, sec.size)
	}
	at := uint64(24)
	cut := func(m uint64) []byte {
		s := b[at : at+m : at+m]
		at += m
		return s
	}
	bo := &r.bodies
	bo.nb, bo.ns = nb, k
	bo.boff, bo.sstart, bo.blen, bo.spans = cut(8*(nb+1)), cut(8*(n+1)), cut(8*n), cut(16*k)
	bo.textAt = sec.off + at
	bo.text = b[at : at+l : at+l]
	if err := checkEnds(bo.boff, l, sec.off+24, "block"); err != nil {
		return err
	}
	if err := checkEnds(bo.sstart, k, sec.off+24+8*(nb+1), "record"); err != nil {
		return err
	}
	spanAt := sec.off + 24 + 8*(nb+1) + 8*(n+1) + 8*n
	offs, lens := r.cols[colOff], r.cols[colLen]
	for i := uint64(0); i < n; i++ {
		lo := le.Uint64(offs[8*i:])
		hi := lo + uint64(le.Uint32(lens[4*i:]))
		var sum uint64
		for j := le.Uint64(bo.sstart[8*i:]); j < le.Uint64(bo.sstart[8*i+8:]); j++ {
			a, c := le.Uint64(bo.spans[16*j:]), le.Uint64(bo.spans[16*j+8:])
			if a&spanRun != 0 {
				first := a &^ spanRun
				if c == 0 || first >= nb || c > nb-first {
					return formatError(spanAt+16*j, "bodies section: span %d of record %d: blocks %d+%d outside the %d blocks", j, i, first, c, nb)
				}
				sum += le.Uint64(bo.boff[8*(first+c):]) - le.Uint64(bo.boff[8*first:])
				continue
			}
			if c == 0 || a < lo || a > hi || c > hi-a {
				return formatError(spanAt+16*j, "bodies section: span %d of record %d: bytes %d+%d outside the record's data [%d, %d)", j, i, a, c, lo, hi)
			}
			sum += c
		}
		if got := le.Uint64(bo.blen[8*i:]); got != sum || sum > MaxPayload {
			return formatError(sec.off+24+8*(nb+1)+8*(n+1)+8*i, "bodies section: record %d's length is %d, its spans make %d", i, got, sum)
		}
	}
	return nil
}

// checkEnds checks a [m+1]u64 column of ends: from 0, non-decreasing,
// ending at last.
func checkEnds(col []byte, last, at uint64, what string) error {
	var prev uint64
	m := uint64(len(col)/8) - 1
	for i := uint64(0); i <= m; i++ {
		v := le.Uint64(col[8*i:])
		if (i == 0 && v != 0) || v < prev || v > last {
			return formatError(at+8*i, "bodies section: %s %d starts at %d (want from 0, non-decreasing, up to %d)", what, i, v, last)
		}
		prev = v
	}
	if prev != last {
		return formatError(at+8*m, "bodies section: the %ss end at %d, want %d", what, prev, last)
	}
	return nil
}

// Spanned reports a version 3 store: bodies are spans (see AppendParts).
func (r *Reader) Spanned() bool { return r.bodies.boff != nil }

// BodyLen returns the length of record i's body, as sent (its
// Content-Length). It panics if i is out of range.
func (r *Reader) BodyLen(i int) int {
	r.checkIndex(i)
	if !r.Spanned() {
		return int(le.Uint32(r.cols[colLen][4*i:]))
	}
	return int(le.Uint64(r.bodies.blen[8*i:]))
}

// AppendParts appends the parts of record i's body to dst, slices of the
// mapping written back to back (one part for a version 1 or 2 store; a
// literal span or a run of adjacent blocks each for a version 3 one): no
// copy, read-only, valid until Close. It panics if i is out of range.
func (r *Reader) AppendParts(dst [][]byte, i int) [][]byte {
	if !r.Spanned() {
		return append(dst, r.Payload(i))
	}
	r.checkIndex(i)
	bo := &r.bodies
	for j := le.Uint64(bo.sstart[8*i:]); j < le.Uint64(bo.sstart[8*i+8:]); j++ {
		a, c := le.Uint64(bo.spans[16*j:]), le.Uint64(bo.spans[16*j+8:])
		if a&spanRun != 0 {
			f := a &^ spanRun
			from, to := le.Uint64(bo.boff[8*f:]), le.Uint64(bo.boff[8*(f+c):])
			dst = append(dst, bo.text[from:to:to])
			continue
		}
		dst = append(dst, r.b[a:a+c:a+c])
	}
	return dst
}

// NumBlocks returns the number of distinct blocks a version 3 store holds
// (0 for others).
func (r *Reader) NumBlocks() int { return int(r.bodies.nb) }

// BlockBytes returns the bytes of block text a version 3 store holds.
func (r *Reader) BlockBytes() int64 { return int64(len(r.bodies.text)) }

// sectionName names the seventh section of a file of version v.
func sectionName(v uint32) string {
	if v == versionBlocks {
		return "bodies"
	}
	return "hashes"
}
