package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// payloadFor returns n bytes that identify record i: a header naming the
// record followed by a pattern derived from i, so that a payload served for
// the wrong record, or shifted, or cut short, cannot pass a comparison.
func payloadFor(i, n int) []byte {
	b := make([]byte, n)
	head := fmt.Appendf(nil, "{\"record\":%d,", i)
	k := copy(b, head)
	x := uint32(i)*2654435761 + 1
	for j := k; j < n; j++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[j] = 'a' + byte(x%26)
	}
	return b
}

// genSpec builds a spec of sessions with 1..maxTurns turns each. When
// interleave is set, the turns of different sessions are shuffled together
// (keeping each session's own order); payload sizes are drawn from
// [0, maxPayload].
func genSpec(seed uint64, sessions, maxTurns, maxPayload int, interleave bool) *Spec {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s := &Spec{Meta: map[string]string{"seed": fmt.Sprint(seed)}}
	var order []uint32
	for i := range sessions {
		s.Sessions = append(s.Sessions, fmt.Sprintf("session-%d-%x", i, rng.Uint32()))
		turns := 1 + rng.IntN(maxTurns)
		for range turns {
			order = append(order, uint32(i))
		}
	}
	if interleave {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	next := make([]uint32, sessions)
	for i, ses := range order {
		e := Entry{
			Line:        uint64(i + 1),
			Session:     ses,
			Turn:        next[ses],
			InputTokens: rng.Uint32N(100000),
		}
		next[ses]++
		switch rng.IntN(3) {
		case 0:
			e.Flags |= FlagTimestamp
			e.TimeNS = int64(i) * 1e6
		case 1:
			e.Flags |= FlagDelay
			e.TimeNS = rng.Int64N(1e9)
		}
		if rng.IntN(2) == 0 {
			e.Flags |= FlagMaxTokens
			e.MaxTokens = rng.Uint32N(4096)
		}
		n := 0
		if maxPayload > 0 {
			n = rng.IntN(maxPayload + 1)
		}
		s.Records = append(s.Records, Record{Entry: e, Payload: payloadFor(i, n)})
	}
	return s
}

// writeTemp writes spec to a new file in a temporary directory.
func writeTemp(t testing.TB, spec *Spec) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.aipk")
	if err := WriteSpec(path, spec); err != nil {
		t.Fatalf("WriteSpec: %v", err)
	}
	return path
}

// openTemp writes spec and opens it; the reader is closed at cleanup.
func openTemp(t testing.TB, spec *Spec, opt OpenOptions) (*Reader, string) {
	t.Helper()
	path := writeTemp(t, spec)
	r, err := Open(path, opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r, path
}

// specDiff describes the first difference between two specs, or "".
func specDiff(got, want *Spec) string {
	if len(got.Meta) != len(want.Meta) {
		return fmt.Sprintf("meta: got %v, want %v", got.Meta, want.Meta)
	}
	for k, v := range want.Meta {
		if g, ok := got.Meta[k]; !ok || g != v {
			return fmt.Sprintf("meta[%q]: got %q (present %v), want %q", k, g, ok, v)
		}
	}
	if !slices.Equal(got.Sessions, want.Sessions) {
		return fmt.Sprintf("sessions: got %q, want %q", got.Sessions, want.Sessions)
	}
	if got.BlockSize != want.BlockSize {
		return fmt.Sprintf("block size: got %d, want %d", got.BlockSize, want.BlockSize)
	}
	if len(got.Records) != len(want.Records) {
		return fmt.Sprintf("records: got %d, want %d", len(got.Records), len(want.Records))
	}
	for i := range want.Records {
		g, w := got.Records[i], want.Records[i]
		if g.Entry != w.Entry {
			return fmt.Sprintf("record %d: got %+v, want %+v", i, g.Entry, w.Entry)
		}
		if !bytes.Equal(g.Payload, w.Payload) {
			return fmt.Sprintf("record %d payload: got %d bytes %.40q, want %d bytes %.40q", i, len(g.Payload), g.Payload, len(w.Payload), w.Payload)
		}
		if !slices.Equal(g.HashIDs, w.HashIDs) {
			return fmt.Sprintf("record %d hash ids: got %v, want %v", i, g.HashIDs, w.HashIDs)
		}
	}
	return ""
}

// checkReader checks every accessor of r against spec.
func checkReader(t testing.TB, r *Reader, spec *Spec) {
	t.Helper()
	if d := specDiff(ReadSpec(r), spec); d != "" {
		t.Fatal(d)
	}
	if got, want := r.Len(), len(spec.Records); got != want {
		t.Errorf("Len: got %d, want %d", got, want)
	}
	if got, want := r.NumSessions(), len(spec.Sessions); got != want {
		t.Errorf("NumSessions: got %d, want %d", got, want)
	}
	var data int64
	var ts bool
	turns := make([]int, len(spec.Sessions))
	for i, rec := range spec.Records {
		data += int64(len(rec.Payload))
		ts = ts || rec.Flags&FlagTimestamp != 0
		j, ok := r.Lookup(rec.Session, rec.Turn)
		if !ok || j != i {
			t.Fatalf("Lookup(%d, %d): got %d, %v, want %d, true", rec.Session, rec.Turn, j, ok, i)
		}
		turns[rec.Session]++
	}
	for s, n := range turns {
		if got := r.SessionLen(uint32(s)); got != n {
			t.Errorf("SessionLen(%d): got %d, want %d", s, got, n)
		}
		if j, ok := r.Lookup(uint32(s), uint32(n)); ok {
			t.Errorf("Lookup(%d, %d) past the last turn: got %d, true, want false", s, n, j)
		}
	}
	ns := uint32(len(spec.Sessions))
	if j, ok := r.Lookup(ns, 0); ok {
		t.Errorf("Lookup(%d, 0) past the last session: got %d, true, want false", ns, j)
	}
	if got := r.SessionID(ns); got != "" {
		t.Errorf("SessionID(%d): got %q, want \"\"", ns, got)
	}
	if got := r.SessionLen(ns); got != 0 {
		t.Errorf("SessionLen(%d): got %d, want 0", ns, got)
	}
	if got := r.DataBytes(); got != data {
		t.Errorf("DataBytes: got %d, want %d", got, data)
	}
	if got := r.HasTimestamps(); got != ts {
		t.Errorf("HasTimestamps: got %v, want %v", got, ts)
	}
	wantVersion := uint32(1) // a store without hash ids keeps version 1
	if spec.BlockSize != 0 {
		wantVersion = 2
	}
	if got := r.Version(); got != wantVersion {
		t.Errorf("Version: got %d, want %d", got, wantVersion)
	}
	if err := r.Verify(); err != nil {
		t.Errorf("Verify: %v", err)
	}
	sum := r.Sum()
	if !bytes.Equal(sum[:], r.b[len(r.b)-trailerSize:len(r.b)-8]) {
		t.Errorf("Sum: got %x, want the trailer's %x", sum, r.b[len(r.b)-trailerSize:len(r.b)-8])
	}
}

// image writes spec and returns the file's bytes.
func image(t testing.TB, spec *Spec) []byte {
	t.Helper()
	b, err := os.ReadFile(writeTemp(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reseal recomputes the trailer checksum of a (modified) image.
func reseal(b []byte) {
	h := sha256.New()
	h.Write(b[headerSize : len(b)-trailerSize])
	h.Write(b[:headerSize])
	copy(b[len(b)-trailerSize:], h.Sum(nil))
}

func put32(b []byte, off uint64, v uint32) { binary.LittleEndian.PutUint32(b[off:], v) }
func put64(b []byte, off uint64, v uint64) { binary.LittleEndian.PutUint64(b[off:], v) }
func get32(b []byte, off uint64) uint32    { return binary.LittleEndian.Uint32(b[off:]) }
func get64(b []byte, off uint64) uint64    { return binary.LittleEndian.Uint64(b[off:]) }

// sec reads section i of an image's section table.
func sec(b []byte, i int) section {
	return section{get64(b, uint64(hOffSections+16*i)), get64(b, uint64(hOffSections+16*i+8))}
}

// dirNames lists a directory.
func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// writeBytes writes b to a new temporary file.
func writeBytes(t testing.TB, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.aipk")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
