package jsonl

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type line struct {
	text string
	n    int64
}

func records(t *testing.T, r *Reader) []line {
	t.Helper()
	var out []line
	for {
		rec, n, err := r.Record()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("Record: %v", err)
		}
		out = append(out, line{string(rec), n})
	}
}

// TestRecords: terminators, blank lines (counted, skipped), a BOM, a last
// line without its newline, and lines longer than the read buffer (read a
// byte at a time, so every line crosses reads).
func TestRecords(t *testing.T) {
	long := strings.Repeat("x", 300)
	in := "\xEF\xBB\xBF{\"a\":1}\r\n\n  \t\r\n " + long + " \n{\"b\":2}"
	want := []line{{`{"a":1}`, 1}, {long, 4}, {`{"b":2}`, 5}}
	for name, r := range map[string]*Reader{
		"whole":       NewReaderSize(strings.NewReader(in), 16, 0),
		"byte a time": NewReaderSize(iotest.OneByteReader(strings.NewReader(in)), 16, 0),
		"default":     NewReader(strings.NewReader(in), 400),
	} {
		got := records(t, r)
		if len(got) != len(want) {
			t.Fatalf("%s: got %v, want %v", name, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: record %d is %v, want %v", name, i, got[i], want[i])
			}
		}
		if r.Line() != 5 {
			t.Errorf("%s: Line() = %d at the end, want 5", name, r.Line())
		}
	}
}

// TestMaxLine: a line of max bytes passes (its terminator not counted), one
// more byte is a *LineTooLongError matching ErrLineTooLong, with the line
// number, short or longer than the buffer.
func TestMaxLine(t *testing.T) {
	for _, size := range []int{16, 4096} {
		ok := strings.Repeat("a", 40)
		r := NewReaderSize(strings.NewReader(ok+"\r\n"+ok+"b\n"), size, 40)
		if rec, n, err := r.Record(); err != nil || string(rec) != ok || n != 1 {
			t.Fatalf("size %d: first line: %q %d %v", size, rec, n, err)
		}
		_, n, err := r.Record()
		var tl *LineTooLongError
		if !errors.As(err, &tl) || tl.Max != 40 || !errors.Is(err, ErrLineTooLong) || n != 2 {
			t.Fatalf("size %d: second line: %d %v, want a *LineTooLongError{40} at line 2", size, n, err)
		}
		if got := err.Error(); got != "the line is longer than 40 bytes" {
			t.Errorf("message %q", got)
		}
	}
}

// TestTake: a value taken from the buffered line survives the next read.
func TestTake(t *testing.T) {
	for _, size := range []int{16, 4096} {
		r := NewReaderSize(strings.NewReader(strings.Repeat("p", 100)+"\n"+strings.Repeat("q", 100)+"\n"), size, 0)
		rec, _, _ := r.Record()
		v := r.Take(rec)
		records(t, r)
		if string(v) != strings.Repeat("p", 100) {
			t.Errorf("size %d: taken value became %q", size, v)
		}
	}
}

// TestUnreadRest: after Record and Unread, Rest replays the input from that
// record, with blank lines standing in for the ones before it.
func TestUnreadRest(t *testing.T) {
	r := NewReader(strings.NewReader("\n\n{\"x\":1}\nnext\n"), 0)
	if _, n, err := r.Record(); n != 3 || err != nil {
		t.Fatalf("Record: %d %v", n, err)
	}
	r.Unread()
	if rec, _, _ := r.Record(); string(rec) != `{"x":1}` {
		t.Fatalf("Record after Unread: %q", rec)
	}
	r.Unread()
	b, err := io.ReadAll(r.Rest())
	if err != nil || string(b) != "\n\n{\"x\":1}\nnext\n" {
		t.Fatalf("Rest: %q %v", b, err)
	}
}

func TestAfterEnd(t *testing.T) {
	r := NewReader(strings.NewReader("end\n\n \n"), 0)
	r.Record()
	if err := r.AfterEnd("f"); err != nil {
		t.Errorf("blank lines after the end: %v", err)
	}
	r = NewReader(strings.NewReader("end\n\nmore\n"), 0)
	r.Record()
	err := r.AfterEnd("f")
	if !errors.Is(err, ErrAfterEnd) || err.Error() != "f:3: data after the end line" {
		t.Errorf("a line after the end: %v", err)
	}
}

func TestLimitLines(t *testing.T) {
	in := "short\r\n" + strings.Repeat("z", 12) + "\n" // the limit allows for a "\r" it does not see
	_, err := io.ReadAll(NewLimitLines(iotest.OneByteReader(strings.NewReader(in)), "doc.json", 10))
	if err == nil || err.Error() != "doc.json:2: the line is longer than 10 bytes" {
		t.Fatalf("got %v", err)
	}
	b, err := io.ReadAll(NewLimitLines(strings.NewReader(in), "doc.json", 12))
	if err != nil || !bytes.Equal(b, []byte(in)) {
		t.Fatalf("within the limit: %q %v", b, err)
	}
}

func TestErrorMessage(t *testing.T) {
	inner := errors.New("bad")
	for _, c := range []struct {
		e    *Error
		want string
	}{
		{&Error{File: "f", Line: 3, Field: "a[1]", Err: inner}, "f:3: a[1]: bad"},
		{&Error{File: "f", Line: 3, Err: inner}, "f:3: bad"},
		{&Error{File: "f", Err: inner}, "f: bad"},
		{&Error{Line: 2, Field: "k", Err: inner}, "line 2: k: bad"},
		{&Error{File: "f", Line: 1}, "f:1: invalid"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%#v: %q, want %q", c.e, got, c.want)
		}
	}
	if !errors.Is(&Error{Err: inner}, inner) {
		t.Error("Error does not unwrap")
	}
}

func TestAfterEndLongLine(t *testing.T) {
	r := NewReader(strings.NewReader("end\n\n"+strings.Repeat("y", 20)+"\n"), 10)
	r.Record()
	err := r.AfterEnd("f")
	var e *Error
	if !errors.As(err, &e) || e.Line != 3 || !errors.Is(err, ErrLineTooLong) {
		t.Errorf("a long line after the end: %v", err)
	}
}
