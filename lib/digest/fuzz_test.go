package digest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// FuzzParseList: the -c list parser never panics, and every entry it
// returns survives FormatLine and a second parse unchanged.
func FuzzParseList(f *testing.F) {
	for _, tc := range listCases {
		f.Add([]byte(strings.Join(tc.lines, "\n") + "\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lr := NewListReader(bytes.NewReader(data), false)
		for n := 0; ; n++ {
			e, err := lr.Next()
			if err == io.EOF {
				return
			}
			if errors.Is(err, ErrListFormat) {
				continue
			}
			if err != nil {
				t.Fatalf("error from an in-memory list: %v", err)
			}
			if n > len(data) {
				t.Fatalf("more entries than bytes")
			}
			if strings.IndexByte(e.Name, 0) >= 0 {
				t.Fatalf("name with a NUL: %q", e.Name)
			}
			if e.Name == "" {
				continue // only the tagged form can say "", and FormatLine writes the untagged one
			}
			line := FormatLine(e.Sum, e.Name)
			again, err := NewListReader(strings.NewReader(line), false).Next()
			if err != nil || again.Name != e.Name || again.Sum != e.Sum {
				t.Fatalf("%q: formatted as %q, parsed back as %+v %v", e.Name, line, again, err)
			}
		}
	})
}

// FuzzMemoDecode: the memo decoder never panics, accepts only lines in
// their canonical spelling (each decoded entry encodes to the very line it
// came from), and lookups agree with it.
func FuzzMemoDecode(f *testing.F) {
	f.Add([]byte(memoHeader))
	f.Add(append([]byte(memoHeader), encodeMemoLine(memoEntry{key: fileKey(fileID{1, 2, 3, 4, 5}), sum: Sum{1}, written: 6, used: 7})...))
	f.Add(append([]byte(memoHeader), encodeMemoLine(memoEntry{key: dirKey(Sum{2}), sum: Sum{3}, written: -1, used: 0})...))
	f.Add([]byte("garbage\n"))
	f.Add([]byte("f 1 2 3 4 5 " + Sum{1}.String() + " 6 7"))
	f.Add([]byte("d " + Sum{1}.String() + " " + Sum{2}.String() + " -6 7"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries := decodeMemo(data)
		for k, e := range entries {
			if k != e.key {
				t.Fatalf("key %q holds %+v", k, e)
			}
			line := encodeMemoLine(e)
			if !bytes.Contains(data, line) {
				// newer() merged duplicates: the used time may come from
				// another line, but the key and sum must be there.
				if !bytes.Contains(data, []byte(e.key+" "+e.sum.String()+" ")) {
					t.Fatalf("entry %+v not in the input", e)
				}
			}
			back, ok := decodeMemoLine(line)
			if !ok || back != e {
				t.Fatalf("%q decodes to %+v %v", line, back, ok)
			}
		}
		for rest := data; len(rest) > 0; {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				break
			}
			if e, ok := decodeMemoLine(rest[:i+1]); ok && !bytes.Equal(encodeMemoLine(e), rest[:i+1]) {
				t.Fatalf("%q decodes but is not canonical", rest[:i+1])
			}
			rest = rest[i+1:]
		}
		// The field syntax behind a valid checksum: sign data as a line body.
		if bytes.IndexByte(data, '\n') < 0 {
			signed := fmt.Appendf(bytes.Clone(data), " %08x\n", lineCheck(data))
			if e, ok := decodeMemoLine(signed); ok && !bytes.Equal(encodeMemoLine(e), signed) {
				t.Fatalf("%q decodes to %+v but is not canonical", signed, e)
			}
		}
		m := &Memo{read: true, data: data}
		if !bytes.HasPrefix(data, []byte(memoHeader)) {
			return
		}
		rest, _ := bytes.CutPrefix(data, []byte(memoHeader))
		for len(rest) > 0 {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				break
			}
			line := rest[:i+1]
			rest = rest[i+1:]
			l, ok := decodeMemoLine(line)
			if !ok {
				continue
			}
			e, inMap := entries[l.key]
			got, found := m.find(l.key)
			if found != inMap || found && got.sum != e.sum {
				t.Fatalf("find(%q) = %+v %v, decodeMemo has %+v %v", l.key, got, found, e, inMap)
			}
		}
	})
}
