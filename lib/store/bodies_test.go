package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// writeBlocks writes testdata/v3-blocks.aipk: three blocks, a body of a
// literal, a run and a literal, one whose adjacent runs (at two parts)
// coalesce into one span, a body without blocks, in interleaved sessions.
func writeBlocks(path string) error {
	w, err := Create(path, WriterOptions{Meta: map[string]string{"model": "m"}})
	if err != nil {
		return err
	}
	defer w.Abort()
	w.AddSession("a")
	w.AddSession("b")
	for _, t := range []string{"AAA", "BB", "C"} {
		if _, err := w.AddBlock([]byte(t)); err != nil {
			return err
		}
	}
	lit := func(s string) []byte { return []byte(s) }
	if err := w.AddSpans(Entry{Line: 1, Session: 0, Flags: FlagTimestamp, InputTokens: 5}, [][]byte{lit(`{"x":"`), nil, lit(`"}`)}, []Run{{Part: 1, First: 0, N: 2}}); err != nil {
		return err
	}
	if err := w.AddParts(Entry{Line: 2, Session: 1, TimeNS: 3, Flags: FlagTimestamp}, lit(`{"y":`), lit(`1}`)); err != nil {
		return err
	}
	if err := w.AddSpans(Entry{Line: 3, Session: 0, Turn: 1, TimeNS: 9, Flags: FlagTimestamp, InputTokens: 6}, [][]byte{lit(`{"x":"`), nil, lit(``), nil, lit(`"}`)}, []Run{{Part: 1, First: 0, N: 2}, {Part: 3, First: 2, N: 1}}); err != nil {
		return err
	}
	return w.Commit()
}

const v3Golden = "v3-blocks.aipk"

func TestGoldenBlocks(t *testing.T) {
	path := filepath.Join("testdata", v3Golden)
	if *update {
		if err := writeBlocks(path); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if got, want := hex.EncodeToString(sum[:]), "9f46939e17193991769f55617fcb4c8711ae9f4f47ee836317fd3746477f8ea9"; got != want {
		t.Errorf("sha256 of %s: got %s, want %s", path, got, want)
	}
	again := filepath.Join(t.TempDir(), "again.aipk")
	if err := writeBlocks(again); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(again); !bytes.Equal(b2, b) {
		t.Errorf("writing %s again gives other bytes", v3Golden)
	}
	r, err := Open(path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Version() != 3 || !r.Spanned() || r.NumBlocks() != 3 || r.BlockBytes() != 6 {
		t.Errorf("version %d, spanned %v, blocks %d, block bytes %d; want 3, true, 3, 6", r.Version(), r.Spanned(), r.NumBlocks(), r.BlockBytes())
	}
	want := []struct {
		parts []string
	}{
		{[]string{`{"x":"`, `AAABB`, `"}`}},
		{[]string{`{"y":1}`}},
		{[]string{`{"x":"`, `AAABBC`, `"}`}}, // two runs, adjacent blocks: one span
	}
	for i, w := range want {
		var got []string
		n := 0
		for _, p := range r.AppendParts(nil, i) {
			got = append(got, string(p))
			n += len(p)
		}
		if len(got) != len(w.parts) || n != r.BodyLen(i) {
			t.Errorf("record %d: parts %q (%d bytes), want %q (BodyLen %d)", i, got, n, w.parts, r.BodyLen(i))
			continue
		}
		for j := range got {
			if got[j] != w.parts[j] {
				t.Errorf("record %d part %d: %q, want %q", i, j, got[j], w.parts[j])
			}
		}
		var buf bytes.Buffer
		if _, err := r.WritePayload(&buf, i); err != nil || buf.String() != string(r.Payload(i)) || buf.Len() != n {
			t.Errorf("record %d: WritePayload %q (%v), Payload %q", i, buf.String(), err, r.Payload(i))
		}
	}
	if err := r.Verify(); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

// TestBlocksHostile: a span or block end that points outside its place is
// refused at Open, never read.
func TestBlocksHostile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", v3Golden))
	if err != nil {
		t.Fatal(err)
	}
	r, err := OpenBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	sec := r.h.sec[secBodies]
	n, nb := r.h.records, r.bodies.nb
	spans := sec.off + 24 + 8*(nb+1) + 8*(n+1) + 8*n
	for _, c := range []struct {
		name string
		at   uint64
		v    uint64
		want string
	}{
		{"run past the blocks", spans + 16, spanRun | 2, "outside the 3 blocks"},
		{"literal outside its record", spans, headerSize + 1000, "outside the record's data"},
		{"block end past the text", sec.off + 24 + 8, 99, "block 1 starts at 99"},
		{"body length", spans - 8, 1, "record 2's length is 1"},
		{"span count", sec.off + 8, 1 << 40, "do not make its"},
	} {
		h := bytes.Clone(b)
		le.PutUint64(h[c.at:], c.v)
		_, err := OpenBytes(h)
		if !errors.Is(err, ErrFormat) || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("%s: got %v, want ErrFormat with %q", c.name, err, c.want)
		}
	}
}
