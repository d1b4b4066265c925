package trace

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// TestMooncakeRealData decodes the first 1,000 rows of the Mooncake FAST'25
// conversation trace (testdata/README) with the type detected.
func TestMooncakeRealData(t *testing.T) {
	t.Parallel()
	r, err := Open("testdata/mooncake_head1000.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Type() != TypeMooncake {
		t.Errorf("Type() = %q, want %q", r.Type(), TypeMooncake)
	}
	rows, err := readRows(r)
	if err != nil {
		t.Fatal(err)
	}
	var inputSum, hashCount int
	var lastTS int64
	for i, row := range rows {
		inputSum += row.InputLength
		hashCount += len(row.HashIDs)
		if row.Seq != int64(i) || row.Line != int64(i+1) || !row.HasTimestamp || !row.HasOutputLength || row.SessionID != "" {
			t.Fatalf("row %d: %s", i, fmtRow(row))
		}
		if row.TimestampNS < lastTS {
			t.Errorf("row %d: timestamp %d before %d", i, row.TimestampNS, lastTS)
		}
		lastTS = row.TimestampNS
	}
	if len(rows) != 1000 || inputSum != 13732944 || hashCount != 27305 {
		t.Errorf("got %d rows, input_length sum %d, %d hash ids; want 1000, 13732944, 27305", len(rows), inputSum, hashCount)
	}
}

// TestLongLine reads lines of 64 MiB and more: raw_payload and mooncake
// payload bodies with large inline media exist in practice.
func TestLongLine(t *testing.T) {
	t.Parallel()
	const size = 64<<20 + 123
	// The line reader on its own, at full size (cheap even with -race).
	lr := newLineReader(io.MultiReader(
		strings.NewReader("first\r\n"),
		io.LimitReader(xReader{}, size),
		strings.NewReader("\r\nlast"),
	), 0)
	for i, want := range []int{5, size, 4} {
		line, n, err := lr.Next()
		if err != nil || len(line) != want || n != int64(i+1) {
			t.Fatalf("line %d: got %d bytes, number %d, err %v; want %d bytes", i+1, len(line), n, err, want)
		}
	}
	if _, _, err := lr.Next(); err != io.EOF {
		t.Fatalf("after the last line: got %v, want io.EOF", err)
	}

	// Through the mooncake decoder, payload bytes kept exactly.
	n := size
	if raceEnabled || testing.Short() {
		n = 4 << 20
	}
	big := strings.Repeat("x", n)
	input := `{"input_length": 1}` + "\r\n" +
		`{"payload": {"prompt": "` + big + `"}, "timestamp": 7}` + "\r\n" +
		`{"input_length": 2}`
	start := time.Now()
	rows, _, err := readString("big.jsonl", input, Options{Type: TypeMooncake})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[1].Line != 2 || rows[2].Line != 3 || rows[2].InputLength != 2 {
		t.Fatalf("got %d rows", len(rows))
	}
	if got, want := string(rows[1].Payload), `{"prompt": "`+big+`"}`; got != want || rows[1].TimestampNS != 7e6 {
		t.Errorf("payload of %d bytes (want %d), timestamp %d", len(got), len(want), rows[1].TimestampNS)
	}
	t.Logf("decoded a %d-byte line in %v", n, time.Since(start))
}

// xReader is an endless stream of 'x'.
type xReader struct{}

var xs = []byte(strings.Repeat("x", 64<<10))

func (xReader) Read(p []byte) (int, error) {
	return copy(p, xs), nil // one copy, not a byte loop: cheap under -race
}

// TestLongLinesReuse reads long lines of varied lengths through one reader:
// each comes back whole and exact, whether it fits the previous line's
// buffer or needs chunks; a line at the limit is read and one byte more is
// refused with its line number.
func TestLongLinesReuse(t *testing.T) {
	t.Parallel()
	sizes := []int{3<<20 + 5, 1 << 20, 70 << 10, 5<<20 + 1, 2 << 20, 100}
	var in strings.Builder
	for i, n := range sizes {
		in.WriteString(strings.Repeat(string(rune('a'+i)), n) + "\n")
	}
	lr := newLineReader(strings.NewReader(in.String()), 0)
	for i, n := range sizes {
		line, num, err := lr.Next()
		if err != nil || num != int64(i+1) || len(line) != n || strings.Trim(string(line), string(rune('a'+i))) != "" {
			t.Fatalf("line %d: %d bytes, number %d, %v; want %d bytes of %c", i+1, len(line), num, err, n, 'a'+i)
		}
	}
	const max = 200 << 10
	lr = newLineReader(strings.NewReader(strings.Repeat("x", max)+"\r\n"+strings.Repeat("y", max+1)+"\n"), max)
	if line, _, err := lr.Next(); err != nil || len(line) != max {
		t.Fatalf("a line at the limit: %d bytes, %v", len(line), err)
	}
	_, num, err := lr.Next()
	var tl *LineTooLongError
	if !errors.As(err, &tl) || num != 2 || tl.Max != max {
		t.Fatalf("a line over the limit: line %d, %v", num, err)
	}
}
