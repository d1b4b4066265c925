package store

import (
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"unsafe"

	"github.com/aiperf/toolkit/lib/internal/filekind"
)

// OpenOptions configures Open.
type OpenOptions struct {
	// Prefault maps every page of the file at Open (see Prefault), so that
	// no later read takes a page fault inside a timed request. It costs about
	// 45 ms per GiB with a warm page cache.
	Prefault bool
}

// PrefaultEnv names the environment variable that DefaultOpenOptions reads.
const PrefaultEnv = "AIPERF_STORE_PREFAULT"

// DefaultOpenOptions returns the options replay uses: Prefault is on unless
// the environment variable AIPERF_STORE_PREFAULT is "0", "false" or "off".
func DefaultOpenOptions() OpenOptions {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(PrefaultEnv))) {
	case "0", "false", "off":
		return OpenOptions{Prefault: false}
	}
	return OpenOptions{Prefault: true}
}

// Reader gives random access to a store file through a read-only mapping.
//
// Every method except Close is safe for concurrent use by any number of
// goroutines: a read is a slice of the mapping, with no shared file position
// or other mutable state. Close must not run concurrently with other calls,
// and slices returned by Payload are invalid after Close.
//
// A store file is written once and renamed into place, never modified in
// place; truncating one while it is mapped makes reads of the lost pages
// fault (SIGBUS), as with any mapping.
type Reader struct {
	b     []byte
	unmap func() error
	h     header
	n     int // records
	ns    int // sessions

	cols    [numCols][]byte // each exactly width*n bytes
	start   []byte          // [S+1]u32
	idoff   []byte          // [S+1]u32
	strings []byte
	lookup  []byte // [N]u32; nil when the file is grouped
	hashes  hashes // empty without a hashes section
	bodies  bodies // empty without a bodies section (version 3)
	meta    map[string]string
	info    Meta // meta, parsed
	sum     [32]byte
}

// Open maps the store file at path and checks its structure (see the format
// description in format.go): magic, version, the section table, every
// payload bound, the session table, every lookup value and the metadata. It
// reads the index but not the payloads, so it costs a few milliseconds per
// million records, plus the prefault when opt.Prefault is set. Every problem
// it finds is an error wrapping ErrFormat that names the offset.
func Open(path string, opt OpenOptions) (*Reader, error) {
	// Opened without blocking: opening a FIFO for reading would otherwise
	// wait for a writer forever.
	f, err := openNonblock(path)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("store: %s: %s, not a regular file (a store is read through a memory mapping)", path, filekind.Of(fi.Mode()))
	}
	size := fi.Size()
	if size < headerSize+trailerSize {
		return nil, fmt.Errorf("%s: %w", path, formatError(0, "file is %d bytes, shorter than a header and a trailer (%d)", size, headerSize+trailerSize))
	}
	b, unmap, err := mapFile(f, size)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	if opt.Prefault {
		if err := Prefault(b); err != nil {
			unmap()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	r, err := parse(b)
	if err != nil {
		unmap()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.unmap = unmap
	return r, nil
}

// OpenBytes runs Open's checks on a store image in memory and reads from b
// directly; b must not change while the Reader is in use.
func OpenBytes(b []byte) (*Reader, error) {
	return parse(b)
}

// parse checks the image b and builds a Reader over it. It reads the header,
// the trailer's end marker, the off, len and session columns, the lookup
// table and the metadata; never a payload byte.
func parse(b []byte) (*Reader, error) {
	size := uint64(len(b))
	if size < headerSize+trailerSize {
		return nil, formatError(0, "file is %d bytes, shorter than a header and a trailer (%d)", size, headerSize+trailerSize)
	}
	if string(b[:len(Magic)]) != Magic {
		if string(b[:4]) == "\x28\xb5\x2f\xfd" { // zstd's frame magic
			return nil, formatError(0, "a zstd stream, not a store: aiperf-pack --compress wrote it; aiperf-pack unpack -o STORE FILE gives the store")
		}
		return nil, formatError(0, "magic is %q, want %q: not a store file", b[:len(Magic)], Magic)
	}
	r := &Reader{b: b}
	h := &r.h
	h.version = le.Uint32(b[hOffVersion:])
	switch {
	case h.version == 0:
		return nil, formatError(hOffVersion, "format version 0")
	case h.version > FormatVersion:
		return nil, versionError(h.version)
	}
	if end := b[size-uint64(len(Magic)):]; string(end) != Magic {
		return nil, formatError(size-uint64(len(Magic)), "end marker is %q, want %q: file truncated or damaged", end, Magic)
	}
	h.fileFlags = le.Uint32(b[hOffFileFlags:])
	h.entryFlags = le.Uint32(b[hOffEntryFlags:])
	h.records = le.Uint64(b[hOffRecords:])
	h.sessions = le.Uint64(b[hOffSessions:])
	h.payload = le.Uint64(b[hOffPayload:])
	switch {
	case h.fileFlags&^knownFileFlags != 0:
		return nil, formatError(hOffFileFlags, "unknown file flags %#x", h.fileFlags&^knownFileFlags)
	case le.Uint32(b[hOffReserved1:]) != 0:
		return nil, formatError(hOffReserved1, "reserved header field is not zero")
	case h.version == versionPlain && (le.Uint64(b[hOffHashes:]) != 0 || le.Uint64(b[hOffHashes+8:]) != 0):
		return nil, formatError(hOffHashes, "reserved header field is not zero")
	case h.records > MaxRecords:
		return nil, formatError(hOffRecords, "record count %d exceeds %d", h.records, uint64(MaxRecords))
	case h.sessions > MaxSessions:
		return nil, formatError(hOffSessions, "session count %d exceeds %d", h.sessions, uint64(MaxSessions))
	case h.payload > size:
		return nil, formatError(hOffPayload, "payload total %d exceeds the file size %d", h.payload, size)
	}
	for i := range h.sec {
		h.sec[i] = section{le.Uint64(b[hOffSections+16*i:]), le.Uint64(b[hOffSections+16*i+8:])}
	}
	// Bound the two free sizes first so that layout's sums cannot overflow.
	if s := h.sec[secStrings].size; s > align8(maxStrings) || s%8 != 0 {
		return nil, formatError(hOffSections+16*secStrings+8, "strings section size %d is not a multiple of 8 up to %d", s, align8(maxStrings))
	}
	if s := h.sec[secMeta].size; s > align8(MaxMetaSize) || s%8 != 0 || s == 0 {
		return nil, formatError(hOffSections+16*secMeta+8, "meta section size %d is not a non-zero multiple of 8 up to %d", s, align8(MaxMetaSize))
	}
	var hashes uint64
	if h.version >= versionHashes {
		// The hashes (bodies) section's size is free too, within the file.
		least := hashesSize(h.records, 0)
		if h.version == versionBlocks {
			least = bodiesSize(h.records, 0, 0, 0)
		}
		if hashes = h.sec[secHashes].size; hashes > size || hashes%8 != 0 || hashes < least {
			return nil, formatError(hOffHashes+8, "%s section size %d is not a multiple of 8 from %d up to the file size %d", sectionName(h.version), hashes, least, size)
		}
	}
	grouped := h.fileFlags&fileGrouped != 0
	want := layout(h.records, h.sessions, h.payload, h.sec[secStrings].size, h.sec[secMeta].size, hashes, grouped)
	for i, s := range h.sec {
		if s != want[i] {
			return nil, formatError(uint64(hOffSections+16*i), "%s section is at %d with %d bytes, want at %d with %d bytes for %d records and %d sessions",
				sectionNames[i], s.off, s.size, want[i].off, want[i].size, h.records, h.sessions)
		}
	}
	if end := sectionsEnd(&want); end != size-trailerSize {
		return nil, formatError(end, "sections end at %d but the trailer starts at %d", end, size-trailerSize)
	}

	// Every section lies inside the file now; slice it up.
	r.n, r.ns = int(h.records), int(h.sessions)
	n := h.records
	idx := h.sec[secIndex].off
	for c, w := range colWidth {
		off := idx + colOffset(n, c)
		r.cols[c] = b[off : off+uint64(w)*n : off+uint64(w)*n]
	}
	ss := h.sec[secSessions].off
	k := 4 * (h.sessions + 1)
	r.start = b[ss : ss+k : ss+k]
	r.idoff = b[ss+align8(k) : ss+align8(k)+k : ss+align8(k)+k]
	st := h.sec[secStrings]
	r.strings = b[st.off:st.end():st.end()]
	if !grouped {
		lo := h.sec[secLookup].off
		r.lookup = b[lo : lo+4*n : lo+4*n]
	}

	if err := r.checkPayloads(); err != nil {
		return nil, err
	}
	if err := r.checkSessions(); err != nil {
		return nil, err
	}
	if err := r.checkLookup(); err != nil {
		return nil, err
	}
	if hashes > 0 && h.version == versionHashes {
		if err := r.parseHashes(); err != nil {
			return nil, err
		}
	}
	if h.version == versionBlocks {
		if err := r.parseBodies(); err != nil {
			return nil, err
		}
	}
	m, err := parseMeta(b[h.sec[secMeta].off:h.sec[secMeta].end()], h.sec[secMeta].off)
	if err != nil {
		return nil, err
	}
	r.meta = m
	if r.info, err = ParseMeta(m); err != nil {
		return nil, formatError(h.sec[secMeta].off, "%v", err)
	}
	r.sum = [32]byte(b[size-trailerSize:])
	return r, nil
}

// checkPayloads checks that the payloads lie back to back from the start of
// the data section and end at exactly P: in bounds, ordered, not overlapping.
// It reads 12 bytes per record and no payload.
func (r *Reader) checkPayloads() error {
	offs, lens := r.cols[colOff], r.cols[colLen]
	end := headerSize + r.h.payload
	if ok, pos := backToBack(offs, lens, headerSize); ok && pos == end {
		return nil
	}
	// Find the first bad entry, for the message.
	pos := uint64(headerSize)
	for i := 0; len(offs) >= 8 && len(lens) >= 4; i++ {
		off, n := le.Uint64(offs), le.Uint32(lens)
		if off != pos {
			return formatError(r.h.sec[secIndex].off+8*uint64(i),
				"index entry %d: payload offset %d, want %d (payloads are stored back to back)", i, off, pos)
		}
		pos += uint64(n)
		if pos > end {
			return formatError(r.h.sec[secIndex].off+colOffset(r.h.records, colLen)+4*uint64(i),
				"index entry %d: payload of %d bytes at %d ends past the payload data (ends at %d)", i, n, off, end)
		}
		offs, lens = offs[8:], lens[4:]
	}
	if pos != end {
		return formatError(hOffPayload, "payloads total %d bytes, header says %d", pos-headerSize, r.h.payload)
	}
	return nil
}

// checkSessions checks the start and idoff columns.
func (r *Reader) checkSessions() error {
	base := r.h.sec[secSessions].off
	if err := checkRuns(r.start, base, "start", r.h.records); err != nil {
		return err
	}
	used := uint64(le.Uint32(r.idoff[4*r.ns:]))
	if err := checkRuns(r.idoff, base+align8(4*(r.h.sessions+1)), "idoff", used); err != nil {
		return err
	}
	if align8(used) != r.h.sec[secStrings].size {
		return formatError(base+align8(4*(r.h.sessions+1))+4*uint64(r.ns),
			"session ids take %d bytes, strings section has %d", used, r.h.sec[secStrings].size)
	}
	return nil
}

// checkRuns checks a [S+1]u32 column of run boundaries: it starts at 0, never
// decreases and ends at last.
func checkRuns(col []byte, base uint64, name string, last uint64) error {
	if ok, end := runsOK(col); ok && le.Uint32(col) == 0 && uint64(end) == last {
		return nil
	}
	if v := le.Uint32(col); v != 0 {
		return formatError(base, "session 0: %s is %d, want 0", name, v)
	}
	var prev uint32
	for i := 0; i+4 <= len(col); i += 4 {
		v := le.Uint32(col[i:])
		if v < prev {
			return formatError(base+uint64(i), "session %d: %s is %d, below the previous session's %d", i/4, name, v, prev)
		}
		prev = v
	}
	if uint64(prev) != last {
		return formatError(base+uint64(len(col)-4), "%s column ends at %d, want %d", name, prev, last)
	}
	return nil
}

// checkLookup checks that every lookup value names a record.
func (r *Reader) checkLookup() error {
	n := uint32(r.n)
	if allBelow(r.lookup, n) {
		return nil
	}
	for i := 0; i+4 <= len(r.lookup); i += 4 {
		if v := le.Uint32(r.lookup[i:]); v >= n {
			return formatError(r.h.sec[secLookup].off+uint64(i), "lookup slot %d names record %d of %d", i/4, v, n)
		}
	}
	return nil
}

// parseMeta decodes the meta section m found at file offset base.
func parseMeta(m []byte, base uint64) (map[string]string, error) {
	count := le.Uint32(m)
	pos := uint64(4)
	size := uint64(len(m))
	meta := make(map[string]string)
	prev := ""
	for i := range count {
		if size-pos < 8 {
			return nil, formatError(base+pos, "meta entry %d of %d: lengths run past the section (%d bytes)", i, count, size)
		}
		kl, vl := uint64(le.Uint32(m[pos:])), uint64(le.Uint32(m[pos+4:]))
		pos += 8
		if kl+vl > size-pos {
			return nil, formatError(base+pos-8, "meta entry %d: key of %d and value of %d bytes run past the section (%d bytes)", i, kl, vl, size)
		}
		k, v := string(m[pos:pos+kl]), string(m[pos+kl:pos+kl+vl])
		if i > 0 && k <= prev {
			return nil, formatError(base+pos, "meta key %q after %q: keys must be strictly increasing", k, prev)
		}
		meta[k], prev = v, k
		pos += kl + vl
	}
	if align8(pos) != size {
		return nil, formatError(base+pos, "meta section has %d bytes after its %d entries", size-pos, count)
	}
	for _, c := range m[pos:] {
		if c != 0 {
			return nil, formatError(base+pos, "meta padding is not zero")
		}
	}
	return meta, nil
}

// Len returns the number of records.
func (r *Reader) Len() int { return r.n }

// Entry returns the index row of record i. It panics if i is out of range.
func (r *Reader) Entry(i int) Entry {
	r.checkIndex(i)
	return Entry{
		Line:        le.Uint64(r.cols[colLine][8*i:]),
		Session:     le.Uint32(r.cols[colSession][4*i:]),
		Turn:        le.Uint32(r.cols[colTurn][4*i:]),
		TimeNS:      int64(le.Uint64(r.cols[colTime][8*i:])),
		MaxTokens:   le.Uint32(r.cols[colMaxTok][4*i:]),
		InputTokens: le.Uint32(r.cols[colInTok][4*i:]),
		Flags:       le.Uint32(r.cols[colFlags][4*i:]),
	}
}

// Payload returns the bytes added for record i, as a slice of the mapping:
// no copy, read-only (writing to it faults), valid until Close. For a
// version 3 store (see Spanned) it returns the body composed from its
// parts in a new buffer instead (AppendParts gives them without a copy).
// It panics if i is out of range.
func (r *Reader) Payload(i int) []byte {
	r.checkIndex(i)
	if r.Spanned() {
		var p [8][]byte
		b := make([]byte, 0, r.BodyLen(i))
		for _, part := range r.AppendParts(p[:0], i) {
			b = append(b, part...)
		}
		return b
	}
	off := le.Uint64(r.cols[colOff][8*i:])
	end := off + uint64(le.Uint32(r.cols[colLen][4*i:]))
	return r.b[off:end:end]
}

// WritePayload writes the payload of record i to w straight from the
// mapping, in pieces of at most payloadChunk bytes, and returns the bytes
// written. Each piece of a mapped file is dropped from this process's
// mapping once written (madvise MADV_DONTNEED: the page cache keeps it), so
// writing a record of any size, 4 GiB included, keeps the resident set
// within a piece. A concurrent reader of the same pages just maps them
// again. It panics if i is out of range.
func (r *Reader) WritePayload(w io.Writer, i int) (int64, error) {
	if r.Spanned() {
		var parts [8][]byte
		var n int64
		for _, p := range r.AppendParts(parts[:0], i) {
			m, err := w.Write(p)
			n += int64(m)
			if err != nil {
				return n, err
			}
		}
		return n, nil
	}
	p := r.Payload(i)
	// Only pages of a real mapping are dropped, and only for a large record.
	drop := r.unmap != nil && len(p) > payloadChunk
	page := os.Getpagesize()
	var start, dropped int
	if drop {
		start = int(uintptr(unsafe.Pointer(unsafe.SliceData(p))) - uintptr(unsafe.Pointer(unsafe.SliceData(r.b))))
		// The page holding the record's first byte may hold the previous
		// record's last ones: it is kept, as is the one holding its last.
		dropped = (start + page - 1) &^ (page - 1)
	}
	n := 0
	for n < len(p) {
		k := min(len(p)-n, payloadChunk)
		m, err := w.Write(p[n : n+k])
		n += m
		if err != nil {
			return int64(n), err
		}
		if end := (start + n) &^ (page - 1); drop && end > dropped {
			dropPages(r.b[dropped:end])
			dropped = end
		}
	}
	return int64(n), nil
}

// payloadChunk is the piece WritePayload writes at a time: large enough to
// amortise write(2), small against any memory budget.
const payloadChunk = 4 << 20

func (r *Reader) checkIndex(i int) {
	if uint(i) >= uint(r.n) {
		panic(fmt.Sprintf("store: record %d out of range [0, %d)", i, r.n))
	}
}

// Lookup returns the record number of turn t of session s in O(1), and
// whether the store has that turn.
func (r *Reader) Lookup(s, t uint32) (int, bool) {
	if uint64(s) >= uint64(r.ns) {
		return 0, false
	}
	a, b := le.Uint32(r.start[4*uint64(s):]), le.Uint32(r.start[4*uint64(s)+4:])
	if t >= b-a {
		return 0, false
	}
	if r.lookup == nil {
		return int(a + t), true
	}
	return int(le.Uint32(r.lookup[4*uint64(a+t):])), true
}

// NumSessions returns the number of sessions.
func (r *Reader) NumSessions() int { return r.ns }

// SessionID returns the id of session s, or "" if s is out of range.
func (r *Reader) SessionID(s uint32) string {
	if uint64(s) >= uint64(r.ns) {
		return ""
	}
	return string(r.strings[le.Uint32(r.idoff[4*uint64(s):]):le.Uint32(r.idoff[4*uint64(s)+4:])])
}

// SessionLen returns the number of turns of session s (0 if out of range).
func (r *Reader) SessionLen(s uint32) int {
	if uint64(s) >= uint64(r.ns) {
		return 0
	}
	return int(le.Uint32(r.start[4*uint64(s)+4:]) - le.Uint32(r.start[4*uint64(s):]))
}

// Meta returns a copy of the store's metadata as stored (see Metadata for
// its parsed form).
func (r *Reader) Meta() map[string]string { return maps.Clone(r.meta) }

// Version returns the file's format version.
func (r *Reader) Version() uint32 { return r.h.version }

// Size returns the file size in bytes.
func (r *Reader) Size() int64 { return int64(len(r.b)) }

// HasTimestamps reports whether any entry has FlagTimestamp.
func (r *Reader) HasTimestamps() bool { return r.h.entryFlags&FlagTimestamp != 0 }

// EntryFlags returns the OR of every entry's Flags.
func (r *Reader) EntryFlags() uint32 { return r.h.entryFlags }

// DataBytes returns the total payload bytes.
func (r *Reader) DataBytes() int64 { return int64(r.h.payload) }

// Sum returns the checksum recorded in the trailer (see Verify).
func (r *Reader) Sum() [32]byte { return r.sum }

// Close unmaps the file. It is idempotent. Afterwards the Reader is empty:
// Len and NumSessions return 0.
func (r *Reader) Close() error {
	var err error
	if r.unmap != nil {
		err = r.unmap()
		r.unmap = nil
	}
	*r = Reader{h: r.h, meta: r.meta, info: r.info}
	return err
}
