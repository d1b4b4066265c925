// Package store reads and writes aiperf packed store files (.aipk): request
// bodies with a fixed-width index that is used straight from a read-only mmap.
package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The .aipk file format, versions 1, 2 and 3.
//
// All integers are little-endian and fixed-width. Every section starts at a
// multiple of 8 and its size is a multiple of 8; padding bytes are zero. The
// sections follow each other with no gaps, in the order below, so that a file
// has exactly one valid layout for a given content (the writer is
// deterministic and the reader can be strict).
//
//	header (160 bytes)
//	  off  size
//	    0     8  magic "AIPERFPK"
//	    8     4  format version (1)
//	   12     4  file flags; bit 0 (fileGrouped): records are grouped by
//	             session in session order, so the lookup section is empty
//	             and record(s, t) = start[s] + t. Other bits must be 0.
//	   16     4  entry flags: the OR of every record's Flags
//	   20     4  reserved, 0
//	   24     8  N, record count (at most 2^32-1)
//	   32     8  S, session count (at most 2^32-1)
//	   40     8  P, payload bytes: the sum of all payload lengths
//	   48   112  section table, seven {offset u64, size u64} pairs, in file
//	             order: data, index, sessions, strings, lookup, meta, hashes.
//	             In version 1 the hashes pair is {0, 0} (these 16 bytes were
//	             "reserved, 0"); version 2 is written exactly when the file
//	             has a hashes section, so a store without one keeps the bytes
//	             version 1 gave it.
//
//	data (at offset 160; size P rounded up to 8)
//	  the payloads of records 0..N-1, back to back, without padding between
//	  them: a payload is a byte string handed to write(2), so aligning it
//	  would buy nothing and cost up to 7 bytes per record. Zero padding
//	  follows the last payload.
//
//	index (columnar; each column padded to 8 bytes)
//	  off     [N]u64  absolute file offset of payload i; off[0] = 160 and
//	                  off[i+1] = off[i] + len[i]
//	  time    [N]i64  Entry.TimeNS
//	  line    [N]u64  Entry.Line
//	  len     [N]u32  payload length
//	  session [N]u32  Entry.Session
//	  turn    [N]u32  Entry.Turn
//	  flags   [N]u32  Entry.Flags
//	  maxtok  [N]u32  Entry.MaxTokens
//	  intok   [N]u32  Entry.InputTokens
//	  A column layout lets Open check every payload bound by reading off and
//	  len only: 12 bytes per record instead of a whole 48-byte row.
//
//	sessions (two columns, each padded to 8 bytes)
//	  start [S+1]u32  slot in the lookup table of (s, turn 0); start[0] = 0,
//	                  non-decreasing, start[S] = N; session s has
//	                  start[s+1]-start[s] turns
//	  idoff [S+1]u32  the id of session s is strings[idoff[s]:idoff[s+1]];
//	                  idoff[0] = 0, non-decreasing
//
//	strings (size idoff[S] rounded up to 8)
//	  session ids, back to back
//
//	lookup (size 4N rounded up to 8; 0 when fileGrouped is set)
//	  [N]u32: lookup[start[s]+t] is the record number of turn t of session s
//
//	meta (a multiple of 8)
//	  u32 count, then count times {u32 klen, u32 vlen, key, value}, keys in
//	  strictly increasing byte order, then zero padding to 8
//
//	hashes (version 2 only; size 8 + 8(N+1) + 8M)
//	  u32 block size B (tokens per hash_id block, > 0), u32 reserved 0
//	  start [N+1]u64  the hash_ids of record i are ids[start[i]:start[i+1]];
//	                  start[0] = 0, non-decreasing, start[N] = M
//	  ids   [M]u64    the trace's KV block ids (Mooncake's hash_ids) of every
//	                  record's prompt, in record order: block j of record i
//	                  holds its prompt's tokens [jB, min((j+1)B, input tokens))
//
//	bodies (version 3 only, in the seventh pair of the section table; a
//	store with blocks has no hashes section; size
//	24 + 8(B+1) + 8(N+1) + 8N + 16K + L rounded up to 8)
//	  u64 B, blocks; u64 K, spans; u64 L, bytes of block text
//	  boff   [B+1]u64  block j's text is text[boff[j]:boff[j+1]]; boff[0] = 0,
//	                   non-decreasing, boff[B] = L
//	  sstart [N+1]u64  record i's body is spans[sstart[i]:sstart[i+1]];
//	                   sstart[0] = 0, non-decreasing, sstart[N] = K
//	  blen   [N]u64    record i's body length, the sum of its spans' (its
//	                   Content-Length, known before a byte is read)
//	  spans  [K]{u64 a, u64 b}  written back to back they are the body:
//	                   a's top bit set: the blocks a&^(1<<63) .. +b-1, text
//	                   adjacent in the region, so a run of consecutive
//	                   blocks is one span (the writer coalesces them);
//	                   else the b literal bytes at file offset a, inside the
//	                   record's own bytes of the data section
//	  text   [L]       the block texts in block order, each distinct block
//	                   once, then zero padding to 8
//	  In version 3 the data section holds each record's literal bytes (the
//	  JSON around its blocks) and the index's len column their length, so
//	  the index keeps its version 1 rules; BodyLen is blen.
//
//	trailer
//	  [32]byte  SHA-256 of bytes [160, trailer) followed by bytes [0, 160)
//	  [8]byte   magic "AIPERFPK" again (a truncated file has no end marker)
//
// The checksum covers the header last because the writer only knows the
// header once every record is in, and hashing in this order lets it hash the
// body while it writes it. The same value in a shell:
//
//	(tail -c +161 F | head -c -40; head -c 160 F) | sha256sum
//
// Compared with the first sketch of this format (a 64-byte header and 16-byte
// index rows), the header grew to hold a section table and the counts, the
// index became columnar so that Open reads 12 bytes per record, payloads lost
// their 8-byte alignment, and the checksum covers the header last.
//
// Open checks the header, the section table against the file size, every
// payload bound, the session columns, every lookup value and the metadata,
// which is all that memory safety needs; it reads the index but never the
// data section. Verify recomputes the checksum and checks everything else
// (padding, that lookup and the session/turn columns agree, entry flags).
const (
	// Magic opens and closes every store file.
	Magic = "AIPERFPK"

	// FormatVersion is the newest version this package writes: 3 for a
	// store with a bodies section (blocks), 2 for one with a hashes
	// section, else 1. Readers accept every version from 1 up to it and
	// reject newer ones.
	FormatVersion uint32 = 3

	// versionPlain is the version of a store without a hashes or bodies
	// section, versionHashes of one with hashes, versionBlocks of one with
	// bodies.
	versionPlain  uint32 = 1
	versionHashes uint32 = 2
	versionBlocks uint32 = 3

	headerSize  = 160
	trailerSize = 32 + 8

	// fileGrouped marks a file whose records are grouped by session in
	// session order; its lookup section is empty.
	fileGrouped    uint32 = 1 << 0
	knownFileFlags        = fileGrouped

	// MaxRecords and MaxSessions follow from the u32 record numbers in the
	// lookup table and the u32 session numbers in the index.
	MaxRecords  = math.MaxUint32
	MaxSessions = math.MaxUint32

	// MaxPayload is the largest payload one record can hold (u32 length).
	MaxPayload = math.MaxUint32

	// maxStrings bounds the session-id bytes (u32 offsets).
	maxStrings = math.MaxUint32

	// MaxMetaSize bounds the encoded metadata: it is parsed into a map at
	// Open, so a hostile file must not make Open allocate much. 1 MiB is
	// three orders of magnitude more than an endpoint, a model name and a
	// few flags need.
	MaxMetaSize = 1 << 20
)

// Index columns, in file order.
const (
	colOff = iota
	colTime
	colLine
	colLen
	colSession
	colTurn
	colFlags
	colMaxTok
	colInTok
	numCols
)

// colWidth is the byte width of each index column.
var colWidth = [numCols]int{8, 8, 8, 4, 4, 4, 4, 4, 4}

// Sections, in file order (and in the header's section table).
const (
	secData = iota
	secIndex
	secSessions
	secStrings
	secLookup
	secMeta
	secHashes // version 2: hashes; version 3: bodies; {0, 0} in version 1
	numSections
)

// secBodies is the seventh section of a version 3 file.
const secBodies = secHashes

var sectionNames = [numSections]string{"data", "index", "sessions", "strings", "lookup", "meta", "hashes"}

// Header field offsets.
const (
	hOffVersion    = 8
	hOffFileFlags  = 12
	hOffEntryFlags = 16
	hOffReserved1  = 20
	hOffRecords    = 24
	hOffSessions   = 32
	hOffPayload    = 40
	hOffSections   = 48
	hOffHashes     = hOffSections + 16*secHashes
)

var le = binary.LittleEndian

// ErrChecksum is wrapped by the error Verify returns when the trailer
// checksum does not match the file's bytes.
var ErrChecksum = errors.New("store: checksum mismatch")

// ErrFormat is wrapped by every error about a malformed file. The message
// names the problem and the file offset where it was found.
var ErrFormat = errors.New("store: bad format")

// ErrVersion is wrapped (together with ErrFormat) when a file was written in
// a format version newer than FormatVersion: the file may be fine, this
// reader is too old for it.
var ErrVersion = errors.New("store: newer format version")

// versionError is the error for a file from a newer format version. It wraps
// both ErrFormat and ErrVersion.
type versionError uint32

func (v versionError) Error() string {
	return fmt.Sprintf("%v: file has format version %d, newer than this reader's %d; use a newer aiperf (at offset %d)",
		ErrFormat, uint32(v), FormatVersion, hOffVersion)
}

func (v versionError) Unwrap() []error { return []error{ErrFormat, ErrVersion} }

// formatError reports a structural problem at file offset off.
func formatError(off uint64, format string, args ...any) error {
	return fmt.Errorf("%w: %s (at offset %d)", ErrFormat, fmt.Sprintf(format, args...), off)
}

// section is one {offset, size} row of the section table.
type section struct{ off, size uint64 }

func (s section) end() uint64 { return s.off + s.size }

// header is the decoded fixed header.
type header struct {
	version    uint32
	fileFlags  uint32
	entryFlags uint32
	records    uint64
	sessions   uint64
	payload    uint64
	sec        [numSections]section
}

func (h *header) encode() []byte {
	b := make([]byte, headerSize)
	copy(b, Magic)
	le.PutUint32(b[hOffVersion:], h.version)
	le.PutUint32(b[hOffFileFlags:], h.fileFlags)
	le.PutUint32(b[hOffEntryFlags:], h.entryFlags)
	le.PutUint64(b[hOffRecords:], h.records)
	le.PutUint64(b[hOffSessions:], h.sessions)
	le.PutUint64(b[hOffPayload:], h.payload)
	for i, s := range h.sec {
		le.PutUint64(b[hOffSections+16*i:], s.off)
		le.PutUint64(b[hOffSections+16*i+8:], s.size)
	}
	return b
}

// align8 rounds n up to a multiple of 8. Callers keep n far below 2^64.
func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// layout computes the section table of a file with the given counts. Every
// size is derived from the counts except strings, meta and hashes, which the
// caller passes already padded (hashes 0: no hashes section). All inputs are
// bounded (records and sessions by 2^32-1, strings by 2^32, meta by
// MaxMetaSize, payload and hashes by the file size when reading), so no sum
// here can overflow a uint64.
func layout(records, sessions, payload, strings, meta, hashes uint64, grouped bool) [numSections]section {
	var sec [numSections]section
	sec[secData] = section{headerSize, align8(payload)}
	sec[secIndex] = section{sec[secData].end(), indexSize(records)}
	sec[secSessions] = section{sec[secIndex].end(), 2 * align8(4*(sessions+1))}
	sec[secStrings] = section{sec[secSessions].end(), strings}
	lookup := align8(4 * records)
	if grouped {
		lookup = 0
	}
	sec[secLookup] = section{sec[secStrings].end(), lookup}
	sec[secMeta] = section{sec[secLookup].end(), meta}
	if hashes > 0 {
		sec[secHashes] = section{sec[secMeta].end(), hashes}
	}
	return sec
}

// sectionsEnd is the end of the last section of a section table.
func sectionsEnd(t *[numSections]section) uint64 {
	if t[secHashes].size > 0 {
		return t[secHashes].end()
	}
	return t[secMeta].end()
}

// indexSize is the size of the index section for n records.
func indexSize(n uint64) uint64 {
	var size uint64
	for _, w := range colWidth {
		size += align8(uint64(w) * n)
	}
	return size
}

// colOffset is the offset of column c inside the index section.
func colOffset(n uint64, c int) uint64 {
	var off uint64
	for _, w := range colWidth[:c] {
		off += align8(uint64(w) * n)
	}
	return off
}
