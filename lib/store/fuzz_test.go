package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen feeds arbitrary bytes to OpenBytes: it must never panic, must
// reject with ErrFormat, and when it accepts, every accessor must stay in
// range. With the checksum resealed, Verify must judge the structure without
// panicking either.
func FuzzOpen(f *testing.F) {
	for _, g := range goldens {
		b, err := os.ReadFile(filepath.Join("testdata", g.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	if b, err := os.ReadFile(filepath.Join("testdata", v3Golden)); err == nil {
		f.Add(b)
	}
	base, _ := hostileBase(f)
	f.Add(base)
	f.Add(image(f, &Spec{}))
	f.Add(image(f, genSpec(16, 5, 3, 30, true)))
	f.Add([]byte(Magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := OpenBytes(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("OpenBytes: got %v, want nil or an error wrapping ErrFormat", err)
			}
			return
		}
		exercise(t, r)
		if err := r.Verify(); err != nil && !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrFormat) {
			t.Fatalf("Verify: got %v, want nil, ErrChecksum or ErrFormat", err)
		}
		c := bytes.Clone(b)
		reseal(c)
		r, err = OpenBytes(c)
		if err != nil {
			t.Fatalf("OpenBytes after resealing an accepted file: %v", err)
		}
		if err := r.Verify(); err != nil && !errors.Is(err, ErrFormat) {
			t.Fatalf("Verify after reseal: got %v, want nil or ErrFormat", err)
		}
	})
}

// exercise calls every accessor of r over its whole range.
func exercise(t *testing.T, r *Reader) {
	var total int64
	for i := range r.Len() {
		r.Entry(i)
		n := 0
		for _, p := range r.AppendParts(nil, i) {
			n += len(p)
		}
		if n != r.BodyLen(i) || len(r.Payload(i)) != n {
			t.Fatalf("record %d: parts of %d bytes, BodyLen %d, Payload %d", i, n, r.BodyLen(i), len(r.Payload(i)))
		}
		if !r.Spanned() {
			total += int64(n)
		}
	}
	if !r.Spanned() && total != r.DataBytes() {
		t.Fatalf("payloads total %d bytes, DataBytes is %d", total, r.DataBytes())
	}
	if _, err := r.Tree(); err != nil && r.Meta()[MetaTree] == "" {
		t.Fatalf("Tree: %v without a tree", err)
	}
	for s := range uint32(r.NumSessions()) {
		r.SessionID(s)
		n := r.SessionLen(s)
		for turn := range uint32(n) {
			if j, ok := r.Lookup(s, turn); !ok || j < 0 || j >= r.Len() {
				t.Fatalf("Lookup(%d, %d): got %d, %v, want a record in [0, %d)", s, turn, j, ok, r.Len())
			}
		}
		if _, ok := r.Lookup(s, uint32(n)); ok {
			t.Fatalf("Lookup(%d, %d) past the session's %d turns: got ok", s, n, n)
		}
	}
	r.Meta()
	r.HasTimestamps()
	r.Sum()
	var ids []uint64
	for i := range r.Len() {
		ids = r.AppendHashIDs(ids[:0], i)
		if len(ids) != r.NumHashIDs(i) {
			t.Fatalf("record %d: %d hash ids, NumHashIDs says %d", i, len(ids), r.NumHashIDs(i))
		}
		if len(ids) > 0 && r.BlockSize() <= 0 {
			t.Fatalf("record %d has hash ids but the block size is %d", i, r.BlockSize())
		}
	}
}

// specFromBytes derives a spec from fuzz input: up to 8 sessions, up to 3
// metadata pairs, and records whose sessions, flags, times and payloads are
// read from the bytes. Turns follow the writer's rule, so every spec is
// writable.
func specFromBytes(data []byte) *Spec {
	take := func() byte {
		if len(data) == 0 {
			return 0
		}
		c := data[0]
		data = data[1:]
		return c
	}
	takeN := func(n int) []byte {
		n = min(n, len(data))
		b := data[:n:n]
		data = data[n:]
		return b
	}
	spec := &Spec{}
	ns := int(take() % 9)
	for range ns {
		spec.Sessions = append(spec.Sessions, string(takeN(int(take()%6))))
	}
	if nm := int(take() % 4); nm > 0 {
		spec.Meta = map[string]string{}
		for range nm {
			k := string(takeN(int(take() % 5)))
			spec.Meta[k] = string(takeN(int(take() % 9)))
		}
	}
	if ns == 0 {
		return spec
	}
	next := make([]uint32, ns)
	for line := uint64(1); len(data) > 0 && len(spec.Records) < 2000; line++ {
		s := uint32(take()) % uint32(ns)
		flags := uint32(take())
		n := int(take())
		if n >= 0xf0 {
			n = (n - 0xef) << 12 // now and then a payload of many KiB
		}
		e := Entry{
			Line:        line,
			Session:     s,
			Turn:        next[s],
			TimeNS:      int64(take()) << 20 * int64(int8(flags)),
			MaxTokens:   uint32(take()) << 4,
			InputTokens: uint32(take()) << 8,
			Flags:       flags & 0xf,
		}
		next[s]++
		p := takeN(n)
		if len(p) < n { // pad short payloads with a pattern of the record
			p = append(bytes.Clone(p), payloadFor(len(spec.Records), n-len(p))...)
		}
		rec := Record{Entry: e, Payload: p}
		if flags&0x10 != 0 { // a record with hash ids
			for range take() % 5 {
				rec.HashIDs = append(rec.HashIDs, uint64(take())<<56|uint64(take()))
			}
			if len(rec.HashIDs) > 0 {
				spec.BlockSize = 16 + uint32(flags>>5)
			}
		}
		spec.Records = append(spec.Records, rec)
	}
	return spec
}

// FuzzRoundTrip derives a spec from the input, writes it, opens it and
// checks that everything comes back, that Verify passes and that the bytes
// are the same when written twice.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'})
	f.Add([]byte("\x03\x02ab\x01c\x00\x01\x01k\x02vv\x00\x01\x05abcde\x02\x00\x00\x01\x03\x04xyz\x01\x07\x00"))
	f.Add(bytes.Repeat([]byte{7, 3, 200, 9, 1, 2, 250}, 40))
	f.Add([]byte("\x02\x01a\x01b\x00\x01\x30\x02\x00\x00\x00\x02hi\x03\x01\x02\x03\x04\x05\x06\x00\x10\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec := specFromBytes(data)
		dir := t.TempDir()
		path := filepath.Join(dir, "s.aipk")
		if err := WriteSpec(path, spec); err != nil {
			t.Fatalf("WriteSpec: %v", err)
		}
		r, err := Open(path, OpenOptions{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer r.Close()
		if d := specDiff(ReadSpec(r), spec); d != "" {
			t.Fatal(d)
		}
		exercise(t, r)
		if err := r.Verify(); err != nil {
			t.Fatalf("Verify: %v", err)
		}
		for i, rec := range spec.Records {
			if j, ok := r.Lookup(rec.Session, rec.Turn); !ok || j != i {
				t.Fatalf("Lookup(%d, %d): got %d, %v, want %d, true", rec.Session, rec.Turn, j, ok, i)
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteSpec(path+"2", spec); err != nil {
			t.Fatal(err)
		}
		b2, err := os.ReadFile(path + "2")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, b2) {
			t.Fatalf("two writes of one spec differ")
		}
	})
}
