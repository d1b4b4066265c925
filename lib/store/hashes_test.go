package store

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestHashesRoundTrip writes stores with and without hash ids: without, the
// file is version 1 and byte-identical to one written by Add alone; with,
// every record's ids come back, records without ids included.
func TestHashesRoundTrip(t *testing.T) {
	plain := genSpec(7, 30, 3, 50, true)
	viaHashed := image(t, plain) // WriteSpec adds through AddHashed
	path := t.TempDir() + "/add.aipk"
	w, err := Create(path, WriterOptions{Meta: plain.Meta})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range plain.Sessions {
		w.AddSession(id)
	}
	for _, rec := range plain.Records {
		if err := w.Add(rec.Entry, rec.Payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	withAdd, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(withAdd, viaHashed) || get32(withAdd, hOffVersion) != 1 {
		t.Fatalf("a store without hash ids: got version %d, want version 1 and the bytes Add writes", get32(viaHashed, hOffVersion))
	}

	hashed := genSpec(7, 30, 3, 50, true)
	hashed.BlockSize = 64
	for i := range hashed.Records {
		if i%4 != 0 { // some records have none
			for j := range i % 7 {
				hashed.Records[i].HashIDs = append(hashed.Records[i].HashIDs, uint64(i*100+j))
			}
		}
	}
	r, _ := openTemp(t, hashed, OpenOptions{})
	checkReader(t, r, hashed)
	if got := r.BlockSize(); got != 64 {
		t.Errorf("BlockSize: got %d, want 64", got)
	}
	pr, _ := openTemp(t, plain, OpenOptions{})
	if got := pr.BlockSize(); got != 0 {
		t.Errorf("BlockSize without hash ids: got %d, want 0", got)
	}
}

func TestHashesWriterErrors(t *testing.T) {
	spec := &Spec{Sessions: []string{"a"}, Records: []Record{{Entry: Entry{Line: 1}, Payload: []byte("x"), HashIDs: []uint64{1}}}}
	err := WriteSpec(t.TempDir()+"/s.aipk", spec)
	if err == nil || !strings.Contains(err.Error(), "block size is not set") {
		t.Errorf("hash ids without a block size: got %v", err)
	}
}

// TestOpenHostileHashes damages the hashes section of a valid version 2
// file: every damage is an ErrFormat naming the problem.
func TestOpenHostileHashes(t *testing.T) {
	spec := goldenHashes()
	base := image(t, spec)
	hs := sec(base, secHashes)
	n := get64(base, hOffRecords)
	tests := []struct {
		name   string
		mutate func(b []byte)
		want   string
	}{
		{"block size 0", func(b []byte) { put32(b, hs.off, 0) }, "block size 0"},
		{"reserved", func(b []byte) { put32(b, hs.off+4, 1) }, "reserved field"},
		{"first start", func(b []byte) { put64(b, hs.off+8, 1) }, "record 0 starts at id 1"},
		{"decreasing", func(b []byte) { put64(b, hs.off+8+8, 3) }, "before the previous"},
		{"past the ids", func(b []byte) { put64(b, hs.off+8+8, 99) }, "past the"},
		{"short end", func(b []byte) { put64(b, hs.off+8+8*n, 4) }, "ids end at 4"},
		{"no section in v2", func(b []byte) { put64(b, hOffHashes, 0); put64(b, hOffHashes+8, 0) }, "hashes section size 0"},
		{"odd size", func(b []byte) { put64(b, hOffHashes+8, hs.size-4) }, "not a multiple of 8"},
		{"huge size", func(b []byte) { put64(b, hOffHashes+8, 1<<62) }, "hashes section size"},
		{"v1 with a section", func(b []byte) { put32(b, hOffVersion, 1) }, "reserved header field"},
	}
	for _, tt := range tests {
		b := bytes.Clone(base)
		tt.mutate(b)
		_, err := OpenBytes(b)
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want ErrFormat with %q", tt.name, err, tt.want)
		}
	}
}
