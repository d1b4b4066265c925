package rundir

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/result"
)

// How a file ends, as report's warnings tell it: an end line, none, or a
// last line cut short, whatever that line's length.
func TestLastEnd(t *testing.T) {
	dir := t.TempDir()
	first := result.Append(nil, &result.Record{Run: &result.RunInfo{ID: "r1"}, SentNS: 1})
	long := result.Append(nil, &result.Record{SentNS: 2, Session: strings.Repeat("s", 200<<10)}) // past the 64 KiB first read
	end := result.AppendEnd(nil, &result.End{RunID: "r1", Results: 2})
	for _, tc := range []struct {
		name    string
		content []byte
		end     bool
		cut     bool
	}{
		{"ended", bytes.Join([][]byte{first, long, end}, nil), true, false},
		{"no end line", bytes.Join([][]byte{first, long}, nil), false, false},
		{"long last line without its newline", bytes.Join([][]byte{first, long[:len(long)-1]}, nil), false, false},
		{"long last line cut", bytes.Join([][]byte{first, long[:len(long)-100]}, nil), false, true},
		{"short last line cut", bytes.Join([][]byte{first, end[:20]}, nil), false, true},
		{"end line, then 100 KiB of blank lines", bytes.Join([][]byte{first, end, bytes.Repeat([]byte("\n"), 100<<10)}, nil), true, false},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
		if err := os.WriteFile(p, tc.content, 0o644); err != nil {
			t.Fatal(err)
		}
		got := Ends([]string{p}, []*result.RunInfo{{ID: "r1"}})[0]
		if (got.End != nil) != tc.end || got.Cut != tc.cut {
			t.Errorf("%s: end %+v, cut %v; want end %v, cut %v", tc.name, got.End, got.Cut, tc.end, tc.cut)
		}
	}
}
