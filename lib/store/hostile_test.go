package store

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// hostileBase is a small valid store with a lookup table, several sessions
// and metadata: the file every mutation below starts from.
func hostileBase(t testing.TB) ([]byte, *Spec) {
	spec := &Spec{
		Meta:     map[string]string{"endpoint": "/v1/chat/completions", "model": "m"},
		Sessions: []string{"s0", "s1", "s2"},
		Records: []Record{
			{Entry: Entry{Line: 1, Session: 1}, Payload: []byte("one")},
			{Entry: Entry{Line: 2, Session: 0}, Payload: []byte("zero")},
			{Entry: Entry{Line: 3, Session: 1, Turn: 1}, Payload: []byte("one.one")},
			{Entry: Entry{Line: 4, Session: 2}, Payload: []byte("two")},
			{Entry: Entry{Line: 5, Session: 0, Turn: 1}, Payload: []byte("zero.one")},
		},
	}
	return image(t, spec), spec
}

// offsets of interesting fields in an image.
type layoutOf struct {
	n, s                                uint64
	off, lenc, sesc, start, idoff, look uint64
	meta, strings                       section
}

func locate(b []byte) layoutOf {
	n, s := get64(b, hOffRecords), get64(b, hOffSessions)
	idx := sec(b, secIndex).off
	ss := sec(b, secSessions).off
	return layoutOf{
		n: n, s: s,
		off:     idx,
		lenc:    idx + colOffset(n, colLen),
		sesc:    idx + colOffset(n, colSession),
		start:   ss,
		idoff:   ss + align8(4*(s+1)),
		look:    sec(b, secLookup).off,
		meta:    sec(b, secMeta),
		strings: sec(b, secStrings),
	}
}

func TestOpenHostile(t *testing.T) {
	base, _ := hostileBase(t)
	L := locate(base)
	secOff := func(i int) uint64 { return uint64(hOffSections + 16*i) }
	tests := []struct {
		name   string
		mutate func(b []byte) []byte
		want   string // in the error message
	}{
		{"empty", func(b []byte) []byte { return nil }, "shorter than a header"},
		{"header only", func(b []byte) []byte { return b[:headerSize] }, "shorter than a header"},
		{"wrong magic", func(b []byte) []byte { b[0] = 'X'; return b }, "magic"},
		{"wrong end marker", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, "end marker"},
		{"version 0", func(b []byte) []byte { put32(b, hOffVersion, 0); return b }, "version 0"},
		{"newer version", func(b []byte) []byte { put32(b, hOffVersion, FormatVersion+1); return b }, "format version 4"},
		{"unknown file flag", func(b []byte) []byte { put32(b, hOffFileFlags, 1<<7); return b }, "unknown file flags"},
		{"grouped flag on a file with a lookup table", func(b []byte) []byte { put32(b, hOffFileFlags, fileGrouped); return b }, "lookup section"},
		{"reserved field 1", func(b []byte) []byte { put32(b, hOffReserved1, 1); return b }, "reserved"},
		{"reserved field 2", func(b []byte) []byte { b[hOffHashes+15] = 1; return b }, "reserved"},
		{"record count huge", func(b []byte) []byte { put64(b, hOffRecords, 1<<40); return b }, "record count"},
		{"record count max", func(b []byte) []byte { put64(b, hOffRecords, math.MaxUint32); return b }, "index section"},
		{"record count +1", func(b []byte) []byte { put64(b, hOffRecords, L.n+1); return b }, "index section"},
		{"record count -1", func(b []byte) []byte { put64(b, hOffRecords, L.n-1); return b }, "index section"},
		{"session count huge", func(b []byte) []byte { put64(b, hOffSessions, math.MaxUint64); return b }, "session count"},
		{"session count +1", func(b []byte) []byte { put64(b, hOffSessions, L.s+1); return b }, "section"},
		{"payload total huge", func(b []byte) []byte { put64(b, hOffPayload, math.MaxUint64-3); return b }, "payload total"},
		{"payload total +1", func(b []byte) []byte { put64(b, hOffPayload, get64(b, hOffPayload)+1); return b }, "payloads total"},
		{"index offset past the end", func(b []byte) []byte { put64(b, secOff(secIndex), uint64(len(b))+8); return b }, "index section"},
		{"index offset near 2^64", func(b []byte) []byte { put64(b, secOff(secIndex), math.MaxUint64-7); return b }, "index section"},
		{"index size huge", func(b []byte) []byte { put64(b, secOff(secIndex)+8, 1<<62); return b }, "index section"},
		{"data size short", func(b []byte) []byte { put64(b, secOff(secData)+8, 0); return b }, "data section"},
		{"strings size odd", func(b []byte) []byte { put64(b, secOff(secStrings)+8, 12); return b }, "strings section size"},
		{"strings size huge", func(b []byte) []byte { put64(b, secOff(secStrings)+8, math.MaxUint64&^7); return b }, "strings section size"},
		{"meta size 0", func(b []byte) []byte { put64(b, secOff(secMeta)+8, 0); return b }, "meta section size"},
		{"meta size huge", func(b []byte) []byte { put64(b, secOff(secMeta)+8, 1<<40); return b }, "meta section size"},
		{"meta larger, file unchanged", func(b []byte) []byte { put64(b, secOff(secMeta)+8, L.meta.size+8); return b }, "trailer starts"},
		{"extra bytes before trailer", func(b []byte) []byte {
			return append(b[:len(b)-trailerSize:len(b)-trailerSize], append(make([]byte, 8), b[len(b)-trailerSize:]...)...)
		}, "trailer starts"},
		{"first payload offset moved", func(b []byte) []byte { put64(b, L.off, headerSize+1); return b }, "index entry 0: payload offset"},
		{"payloads overlap", func(b []byte) []byte { put64(b, L.off+8, get64(b, L.off)); return b }, "index entry 1: payload offset"},
		{"payload gap", func(b []byte) []byte { put64(b, L.off+16, get64(b, L.off+16)+1); return b }, "index entry 2"},
		{"payload length grows into next", func(b []byte) []byte { put32(b, L.lenc, get32(b, L.lenc)+1); return b }, "index entry 1: payload offset"},
		{"last payload past the data", func(b []byte) []byte {
			put32(b, L.lenc+4*(L.n-1), math.MaxUint32)
			return b
		}, "index entry 4: payload of 4294967295 bytes"},
		{"payload offset past the file", func(b []byte) []byte { put64(b, L.off+8*(L.n-1), 1<<62); return b }, "index entry 4"},
		{"payloads short of total", func(b []byte) []byte { put32(b, L.lenc+4*(L.n-1), get32(b, L.lenc+4*(L.n-1))-1); return b }, "payloads total"},
		{"lookup value = N", func(b []byte) []byte { put32(b, L.look, uint32(L.n)); return b }, "lookup slot 0 names record 5 of 5"},
		{"lookup value max", func(b []byte) []byte { put32(b, L.look+4*(L.n-1), math.MaxUint32); return b }, "lookup slot 4"},
		{"session start not 0", func(b []byte) []byte { put32(b, L.start, 1); return b }, "start is 1, want 0"},
		{"session start decreasing", func(b []byte) []byte { put32(b, L.start+4, 4); put32(b, L.start+8, 3); return b }, "session 2: start is 3, below"},
		{"session start past N", func(b []byte) []byte { put32(b, L.start+4*L.s, uint32(L.n+1)); return b }, "start column ends at 6, want 5"},
		{"session start huge", func(b []byte) []byte { put32(b, L.start+4*L.s, math.MaxUint32); return b }, "start column ends"},
		{"session id offset not 0", func(b []byte) []byte { put32(b, L.idoff, 1); return b }, "idoff is 1, want 0"},
		{"session id offsets decreasing", func(b []byte) []byte { put32(b, L.idoff+8, 1); return b }, "session 2: idoff is 1"},
		{"session id past strings", func(b []byte) []byte { put32(b, L.idoff+4*L.s, uint32(L.strings.size)+1); return b }, "strings section has"},
		{"session ids short of strings", func(b []byte) []byte { put32(b, L.idoff+4*L.s, 0); return b }, "below the previous"},
		{"meta count huge", func(b []byte) []byte { put32(b, L.meta.off, math.MaxUint32); return b }, "meta entry"},
		{"meta count 0 with entries", func(b []byte) []byte { put32(b, L.meta.off, 0); return b }, "after its 0 entries"},
		{"meta key length huge", func(b []byte) []byte { put32(b, L.meta.off+4, math.MaxUint32); return b }, "meta entry 0: key of 4294967295"},
		{"meta value length huge", func(b []byte) []byte { put32(b, L.meta.off+8, math.MaxUint32-7); return b }, "run past the section"},
		{"meta keys unsorted", func(b []byte) []byte {
			// "endpoint" becomes "zndpoint", after "model".
			b[L.meta.off+12] = 'z'
			return b
		}, "strictly increasing"},
		{"meta padding", func(b []byte) []byte { b[L.meta.end()-1] = 1; return b }, "meta padding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.mutate(bytes.Clone(base))
			for _, img := range [][]byte{b, unaligned(b)} {
				checkHostile(t, img, tt.want)
			}
		})
	}
}

// unaligned copies b to an address that is not 4-byte aligned, which sends
// Open's checks down their portable path.
func unaligned(b []byte) []byte {
	return append(make([]byte, 1, len(b)+1), b...)[1:]
}

func checkHostile(t *testing.T, b []byte, want string) {
	t.Helper()
	r, err := OpenBytes(b)
	if err == nil {
		t.Fatalf("OpenBytes: got a reader of %d records, want an error containing %q", r.Len(), want)
	}
	if !errors.Is(err, ErrFormat) {
		t.Errorf("OpenBytes: got %v, want an error wrapping ErrFormat", err)
	}
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "at offset") {
		t.Errorf("OpenBytes: got %q, want it to contain %q and the offset", err, want)
	}
}

func TestOpenNewerVersionWrapsErrVersion(t *testing.T) {
	b, _ := hostileBase(t)
	put32(b, hOffVersion, 7)
	_, err := OpenBytes(b)
	if !errors.Is(err, ErrVersion) || !errors.Is(err, ErrFormat) {
		t.Errorf("got %v, want an error wrapping ErrVersion and ErrFormat", err)
	}
}

// TestOpenTruncated cuts the file at every length, which includes every
// section boundary.
func TestOpenTruncated(t *testing.T) {
	base, _ := hostileBase(t)
	for k := range len(base) {
		_, err := OpenBytes(bytes.Clone(base[:k]))
		if !errors.Is(err, ErrFormat) {
			t.Fatalf("truncated to %d of %d bytes: got %v, want an error wrapping ErrFormat", k, len(base), err)
		}
	}
	// The same through Open, at each section boundary.
	for i := range numSections {
		s := sec(base, i)
		for _, k := range []uint64{s.off, s.end()} {
			path := writeBytes(t, base[:k])
			if _, err := Open(path, OpenOptions{Prefault: true}); !errors.Is(err, ErrFormat) {
				t.Errorf("Open truncated at %s boundary %d: got %v, want an error wrapping ErrFormat", sectionNames[i], k, err)
			}
		}
	}
}

// TestVerifyCatches flips bytes that Open does not read (payloads, columns it
// does not check) and checks that Verify reports a checksum mismatch; after
// resealing the checksum, it reports the inconsistency as ErrFormat.
func TestVerifyCatches(t *testing.T) {
	base, _ := hostileBase(t)
	L := locate(base)
	tests := []struct {
		name   string
		mutate func(b []byte)
		want   string // Verify's error after resealing; "" if the file stays valid
	}{
		{"payload byte", func(b []byte) { b[headerSize+1] ^= 0x20 }, ""},
		{"data padding", func(b []byte) { b[sec(b, secData).end()-1] = 1 }, "data padding"},
		{"session column", func(b []byte) { put32(b, L.sesc, 2) }, "record 0: session 2 turn 0 looks up record 3"},
		{"session out of range", func(b []byte) { put32(b, L.sesc, 9) }, "session 9 turn 0 is not in the session table"},
		{"lookup swapped", func(b []byte) {
			v0, v1 := get32(b, L.look), get32(b, L.look+4)
			put32(b, L.look, v1)
			put32(b, L.look+4, v0)
		}, "looks up record"},
		{"entry flags", func(b []byte) { put32(b, hOffEntryFlags, FlagDelay) }, "entry flags"},
		{"session id byte", func(b []byte) { b[L.strings.off] = 'S' }, ""},
		{"header line", func(b []byte) { b[L.off+8*L.n*2] = 9 }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bytes.Clone(base)
			tt.mutate(b)
			r, err := OpenBytes(b)
			if err != nil {
				t.Fatalf("OpenBytes: %v", err)
			}
			if err := r.Verify(); !errors.Is(err, ErrChecksum) {
				t.Errorf("Verify: got %v, want an error wrapping ErrChecksum", err)
			}
			reseal(b)
			r, err = OpenBytes(b)
			if err != nil {
				t.Fatalf("OpenBytes after reseal: %v", err)
			}
			err = r.Verify()
			if tt.want == "" {
				if err != nil {
					t.Errorf("Verify after reseal: got %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Verify after reseal: got %v, want ErrFormat containing %q", err, tt.want)
			}
		})
	}
}
