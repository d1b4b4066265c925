package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"slices"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
)

// WriterOptions configures Create.
type WriterOptions struct {
	Meta map[string]string // small store-level metadata (endpoint path, model, streaming...), written deterministically (sorted keys)
}

// Writer writes a store file. Payloads stream to a temporary file beside the
// destination as they are added; the index columns wait in memory up to
// 64 KiB each and then in unlinked temporary files, so the heap does not grow
// with the number of records. Per session it keeps one uint32 (the next
// expected turn, later the session's lookup cursor): 4 bytes per session.
//
// A Writer is not safe for concurrent use. Every error is sticky: after Add
// or AddSession fails, Commit returns the error and writes nothing.
type Writer struct {
	f    *os.File         // the file being written
	af   *atomicfile.File // set by Create: renamed into place on Commit
	path string           // the destination, for messages
	meta []byte           // encoded meta section
	p    *pipe

	cols    [numCols]*spill // colOff stays empty: offsets follow from lengths
	strings *spill          // session ids, back to back
	idoff   *spill          // idoff[1..S]; idoff[0] = 0 is implied
	turns   []uint32        // next turn of each session

	records     uint64
	payload     uint64
	stringBytes uint64
	entryFlags  uint32
	grouped     bool // every Add so far had Session >= the previous one
	lastSession uint32

	// The hashes section: each record's end in the ids (from the first
	// record with hash ids on), the ids, their count and block size.
	hashEnds, hashIDs *spill
	hashCount         uint64
	blockSize         uint32

	// The bodies section (version 3): block texts and their ends, each
	// record's spans, span end and body length; recorded for every
	// store, written when v3 (a block was added, or AddSpans called).
	v3                        bool
	boff, btext, sends, spans *spill
	blen                      *spill
	blens                     []uint32 // each block's length
	blockText, spanCount      uint64
	bodyBytes                 uint64
	recSpans                  [][2]uint64
	runs                      []Run // the record being added's
	runBytes                  uint64

	err       error
	spillFail bool // a spill file failed; its error is in the spill
	done      bool
}

// Create starts a store that will appear at path on Commit. The data goes to
// a temporary file in path's directory (see atomicfile, whose rules apply:
// path must be absent or a regular file).
func Create(path string, opt WriterOptions) (*Writer, error) {
	meta, err := encodeMeta(opt.Meta)
	if err != nil {
		return nil, err
	}
	af, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("store: create %s: %w", path, err)
	}
	w, err := newWriter(af.File, path, meta)
	if err != nil {
		af.Abort()
		return nil, err
	}
	w.af = af
	return w, nil
}

// NewWriter writes a store into f, an empty regular file open for reading
// and writing, for a caller that decides what becomes of the file (pack
// --compress stages a store in a temporary file that is never renamed).
// name is used in error messages and for the index spill files, which go
// in name's directory. Commit writes and checks the store but neither syncs
// nor closes f; Abort leaves f to the caller.
func NewWriter(f *os.File, name string, opt WriterOptions) (*Writer, error) {
	meta, err := encodeMeta(opt.Meta)
	if err != nil {
		return nil, err
	}
	return newWriter(f, name, meta)
}

func newWriter(f *os.File, path string, meta []byte) (*Writer, error) {
	if _, err := f.Seek(headerSize, 0); err != nil {
		return nil, fmt.Errorf("store: create %s: %w", path, err)
	}
	w := &Writer{
		f:       f,
		path:    path,
		meta:    meta,
		p:       newPipe(f),
		grouped: true,
	}
	w.strings = newSpill(path, &w.spillFail)
	w.idoff = newSpill(path, &w.spillFail)
	for _, s := range []**spill{&w.boff, &w.btext, &w.sends, &w.spans, &w.blen} {
		*s = newSpill(path, &w.spillFail)
	}
	w.boff.put64(0)
	w.sends.put64(0)
	for c := range w.cols {
		if c != colOff {
			w.cols[c] = newSpill(path, &w.spillFail)
		}
	}
	return w, nil
}

// encodeMeta builds the meta section: sorted keys, so equal maps give equal
// bytes.
func encodeMeta(m map[string]string) ([]byte, error) {
	keys := make([]string, 0, len(m))
	size := uint64(4)
	for k, v := range m {
		keys = append(keys, k)
		size += 8 + uint64(len(k)) + uint64(len(v))
	}
	if size > MaxMetaSize {
		return nil, fmt.Errorf("store: metadata is %d bytes encoded, more than the %d allowed", size, MaxMetaSize)
	}
	slices.Sort(keys)
	b := make([]byte, 0, align8(size))
	b = le.AppendUint32(b, uint32(len(keys)))
	for _, k := range keys {
		b = le.AppendUint32(b, uint32(len(k)))
		b = le.AppendUint32(b, uint32(len(m[k])))
		b = append(b, k...)
		b = append(b, m[k]...)
	}
	return b[:align8(size)], nil
}

// AddSession registers the next session with the given id and returns its
// number, which is the number of sessions registered before it. Ids are
// opaque labels; the writer does not check that they are unique.
func (w *Writer) AddSession(id string) uint32 {
	s := uint32(len(w.turns))
	if w.err != nil || w.done {
		return s
	}
	if uint64(len(w.turns)) >= MaxSessions {
		w.err = fmt.Errorf("store: more than %d sessions", uint64(MaxSessions))
		return s
	}
	if w.stringBytes+uint64(len(id)) > maxStrings {
		w.err = fmt.Errorf("store: session ids exceed %d bytes in total", uint64(maxStrings))
		return s
	}
	w.turns = append(w.turns, 0)
	w.strings.write([]byte(id))
	w.stringBytes += uint64(len(id))
	w.idoff.put32(uint32(w.stringBytes))
	return s
}

// Add appends one record. e.Session must be a registered session and e.Turn
// must be the session's next turn: 0, 1, 2, ... in the order added. The
// payload is copied; the caller may reuse it when Add returns.
func (w *Writer) Add(e Entry, payload []byte) error { return w.AddParts(e, payload) }

// AddParts is Add for a payload given in pieces, written back to back (a
// formatted body whose prompt is still where the decoder read it).
func (w *Writer) AddParts(e Entry, parts ...[]byte) error { return w.add(e, nil, parts) }

func (w *Writer) add(e Entry, ids []uint64, parts [][]byte) error {
	var size uint64
	for _, p := range parts {
		size += uint64(len(p))
	}
	if w.err != nil {
		return w.err
	}
	if w.done {
		return errors.New("store: add after commit or abort")
	}
	if w.spillFail || w.p.failed.Load() {
		w.err = w.ioError()
		return w.err
	}
	switch {
	case uint64(e.Session) >= uint64(len(w.turns)):
		w.err = fmt.Errorf("store: record %d (line %d): session %d is not registered (%d sessions)", w.records, e.Line, e.Session, len(w.turns))
	case e.Turn != w.turns[e.Session]:
		w.err = fmt.Errorf("store: record %d (line %d): session %d turn %d added, want turn %d", w.records, e.Line, e.Session, e.Turn, w.turns[e.Session])
	case size+w.runBytes > MaxPayload:
		w.err = fmt.Errorf("store: record %d (line %d): payload of %d bytes exceeds %d", w.records, e.Line, size, uint64(MaxPayload))
	case w.records >= MaxRecords:
		w.err = fmt.Errorf("store: more than %d records", uint64(MaxRecords))
	}
	if w.err != nil {
		return w.err
	}
	w.turns[e.Session]++
	if e.Session < w.lastSession {
		w.grouped = false
	}
	w.lastSession = e.Session
	w.entryFlags |= e.Flags

	for _, p := range parts {
		w.p.Write(p)
	}
	w.addSpans(parts, headerSize+w.payload, size)
	w.payload += size
	w.records++
	w.cols[colTime].put64(uint64(e.TimeNS))
	w.cols[colLine].put64(e.Line)
	w.cols[colLen].put32(uint32(size))
	w.cols[colSession].put32(e.Session)
	w.cols[colTurn].put32(e.Turn)
	w.cols[colFlags].put32(e.Flags)
	w.cols[colMaxTok].put32(e.MaxTokens)
	w.cols[colInTok].put32(e.InputTokens)
	w.addHashes(ids)
	return nil
}

// Len returns the number of records added so far.
func (w *Writer) Len() int { return int(w.records) }

// Commit writes the index, the session table, the lookup table, the metadata
// and the trailer, checks the header and index of the temporary file by
// opening it, and renames it into place. On any error it removes the
// temporary files and returns the error.
func (w *Writer) Commit() error {
	if w.done {
		return errors.New("store: commit after commit or abort")
	}
	err := w.err
	if err == nil {
		err = w.finish()
	}
	if err == nil {
		err = w.check()
	}
	w.release()
	if w.af == nil {
		return err
	}
	if err != nil {
		w.af.Abort()
		return err
	}
	if err := w.af.Commit(); err != nil {
		return w.writeErr(err)
	}
	return nil
}

// Abort removes the temporary files. It is safe to call after Commit, and
// more than once; `defer w.Abort()` is the idiom.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.release()
	if w.af != nil {
		w.af.Abort()
	}
}

// release stops the hashing and writing goroutines and drops the spill files.
func (w *Writer) release() {
	w.done = true
	w.p.close()
	for _, s := range w.cols {
		if s != nil {
			s.close()
		}
	}
	w.strings.close()
	w.idoff.close()
	for _, s := range []*spill{w.boff, w.btext, w.sends, w.spans, w.blen} {
		s.close()
	}
	if w.hashEnds != nil {
		w.hashEnds.close()
		w.hashIDs.close()
	}
}

// finish writes everything after the payloads, then the header.
func (w *Writer) finish() (err error) {
	n, ns := w.records, uint64(len(w.turns))
	if w.v3 && w.hashCount > 0 {
		return errors.New("store: records have hash ids and blocks: a store with blocks carries no hash ids")
	}
	sec := layout(n, ns, w.payload, align8(w.stringBytes), uint64(len(w.meta)), w.hashesSectionSize()+w.bodiesSectionSize(), w.grouped)
	p := w.p
	scratch := make([]byte, pipeBufSize)

	p.zeros(int(sec[secData].size - w.payload))

	// Index: the offset column is rebuilt from the lengths.
	off := uint64(headerSize)
	err = w.cols[colLen].each(scratch, func(b []byte) {
		for i := 0; i+4 <= len(b); i += 4 {
			p.put64(off)
			off += uint64(le.Uint32(b[i:]))
		}
	})
	if err != nil {
		return w.spillErr(err)
	}
	for c := colOff + 1; c < numCols; c++ {
		if err := w.cols[c].each(scratch, p.Write); err != nil {
			return w.spillErr(err)
		}
		p.zeros(int(align8(uint64(w.cols[c].n)) - uint64(w.cols[c].n)))
	}

	// Sessions: start is the running sum of the turn counts.
	pad := int(align8(4*(ns+1)) - 4*(ns+1))
	var start uint32
	for _, t := range w.turns {
		p.put32(start)
		start += t
	}
	p.put32(start)
	p.zeros(pad)
	p.put32(0) // idoff[0]
	if err := w.idoff.each(scratch, p.Write); err != nil {
		return w.spillErr(err)
	}
	p.zeros(pad)

	if err := w.strings.each(scratch, p.Write); err != nil {
		return w.spillErr(err)
	}
	p.zeros(int(align8(w.stringBytes) - w.stringBytes))

	if !w.grouped {
		if err := p.wait(); err != nil {
			return w.writeErr(err)
		}
		if err := w.buildLookup(sec[secLookup], scratch); err != nil {
			return err
		}
	}

	p.Write(w.meta)
	if err := w.writeHashes(scratch); err != nil {
		return err
	}
	if err := w.writeBodies(scratch); err != nil {
		return err
	}
	if err := p.wait(); err != nil {
		return w.writeErr(err)
	}
	if got, want := uint64(p.n)+headerSize, sectionsEnd(&sec); got != want {
		return fmt.Errorf("store: internal error: wrote %d bytes, layout says %d", got, want)
	}

	version := versionPlain
	switch {
	case w.v3:
		version = versionBlocks
	case sec[secHashes].size > 0:
		version = versionHashes
	}
	h := header{
		version:    version,
		entryFlags: w.entryFlags,
		records:    n,
		sessions:   ns,
		payload:    w.payload,
		sec:        sec,
	}
	if w.grouped {
		h.fileFlags |= fileGrouped
	}
	hb := h.encode()
	p.h.Write(hb)
	trailer := p.h.Sum(make([]byte, 0, trailerSize))
	trailer = append(trailer, Magic...)
	if _, err := w.f.Write(trailer); err != nil {
		return w.writeErr(err)
	}
	if _, err := w.f.WriteAt(hb, 0); err != nil {
		return w.writeErr(err)
	}
	return nil
}

// buildLookup fills the lookup section with a counting sort: the session
// column is read in record order and each record number is written at its
// session's cursor, through a writable mapping of the output file (or a heap
// table where mmap is unavailable). The pipe is idle; the region is written
// with zeros first so that disk space runs out as a write error, not as a
// fault in the mapping. The region is then hashed in file order.
func (w *Writer) buildLookup(sec section, scratch []byte) (err error) {
	f := w.f
	clear(scratch)
	for left := sec.size; left > 0; {
		k := min(left, uint64(len(scratch)))
		if _, err := f.Write(scratch[:k]); err != nil {
			return w.writeErr(err)
		}
		left -= k
	}
	table, unmap, err := mapWritable(f, int64(sec.off), int(sec.size))
	if testHeapLookup && err == nil {
		unmap()
		err = errors.New("test: heap lookup")
	}
	if err != nil {
		// A file system without shared writable mappings: fall back to
		// building the table on the heap.
		table, unmap, _ = heapWritable(f, int64(sec.off), int(sec.size))
	}
	defer func() {
		if uerr := unmap(); uerr != nil && err == nil {
			err = w.writeErr(uerr)
		}
	}()

	// The cursors replace the turn counts in place: cursor[s] = start[s].
	var sum uint32
	for s, t := range w.turns {
		w.turns[s] = sum
		sum += t
	}
	// A fault in the mapping (an I/O error reading the file back) becomes
	// a panic we can turn into an error instead of a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = w.writeErr(fmt.Errorf("fault while building the lookup table: %v", r))
		}
	}()
	var rec uint32
	err = w.cols[colSession].each(scratch, func(b []byte) {
		for i := 0; i+4 <= len(b); i += 4 {
			s := le.Uint32(b[i:])
			le.PutUint32(table[4*uint64(w.turns[s]):], rec)
			w.turns[s]++
			rec++
		}
	})
	if err != nil {
		return w.spillErr(err)
	}
	w.p.h.Write(table)
	w.p.n += int64(sec.size)
	return nil
}

// ioError returns the first write error of the output or a spill file,
// found early so that a full disk stops the caller before it adds the rest.
func (w *Writer) ioError() error {
	if err := w.p.wait(); err != nil {
		return w.writeErr(err)
	}
	spills := append([]*spill{w.strings, w.idoff}, w.cols[colOff+1:]...)
	if w.hashEnds != nil {
		spills = append(spills, w.hashEnds, w.hashIDs)
	}
	for _, s := range spills {
		if s.err != nil {
			return w.spillErr(s.err)
		}
	}
	return errors.New("store: internal error: write failure without an error")
}

// testHeapLookup makes buildLookup take its heap path (tests only).
var testHeapLookup bool

// heapWritable returns a heap buffer that done writes to f at off: the
// lookup table where no writable mapping is available, at a cost of 4 bytes
// of heap per record.
func heapWritable(f *os.File, off int64, size int) ([]byte, func() error, error) {
	b := make([]byte, size)
	return b, func() error {
		_, err := f.WriteAt(b, off)
		return err
	}, nil
}

func (w *Writer) spillErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &WriteError{Path: w.path, Err: fmt.Errorf("index spill file: %w", err)}
}

// writeErr names the destination, not the temporary file, and only once.
func (w *Writer) writeErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && (pe.Path == w.f.Name() || pe.Path == w.path) && pe.Op != "refusing to replace" {
		err = pe.Err
	}
	return &WriteError{Path: w.path, Err: err}
}

// WriteError is an I/O error of the store being written (its file or index
// spill files, a full disk for example), as opposed to a problem with a
// record. Path is the destination given to Create or NewWriter.
type WriteError struct {
	Path string
	Err  error
}

func (e *WriteError) Error() string { return "store: write " + e.Path + ": " + e.Err.Error() }

func (e *WriteError) Unwrap() error { return e.Err }

// check re-opens the temporary file and runs Open's checks on it, so a store
// that would not open is never renamed into place (restic's verifyHeader).
func (w *Writer) check() error {
	r, err := Open(w.f.Name(), OpenOptions{})
	if err != nil {
		return fmt.Errorf("store: written file fails its own checks: %w", err)
	}
	return r.Close()
}
