package trace

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

// readString decodes input as the file name with the options.
func readString(name, input string, opt Options) ([]*Row, *Reader, error) {
	r, err := NewReader(strings.NewReader(input), name, opt)
	if err != nil {
		return nil, nil, err
	}
	rows, err := readRows(r)
	return rows, r, err
}

func readRows(r *Reader) ([]*Row, error) {
	var rows []*Row
	for {
		row, err := r.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
}

func mustRead(t *testing.T, name, input string, opt Options) []*Row {
	t.Helper()
	rows, _, err := readString(name, input, opt)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return rows
}

// fmtRow renders a row with its set fields only, for failure messages.
func fmtRow(r *Row) string {
	if r == nil {
		return "<nil>"
	}
	var b strings.Builder
	v := reflect.ValueOf(*r)
	tp := v.Type()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.IsZero() {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if raw, ok := f.Interface().([]byte); ok {
			fmt.Fprintf(&b, "%s=%s", tp.Field(i).Name, raw)
			continue
		}
		if raw, ok := f.Interface().(interface{ MarshalJSON() ([]byte, error) }); ok {
			j, _ := raw.MarshalJSON()
			fmt.Fprintf(&b, "%s=%s", tp.Field(i).Name, j)
			continue
		}
		fmt.Fprintf(&b, "%s=%v", tp.Field(i).Name, f.Interface())
	}
	return "{" + b.String() + "}"
}

// normalize makes empty slices nil so that literal expectations compare.
func normalize(r Row) Row {
	if len(r.HashIDs) == 0 {
		r.HashIDs = nil
	}
	if len(r.Messages) == 0 {
		r.Messages = nil
	}
	if len(r.Tools) == 0 {
		r.Tools = nil
	}
	if len(r.Payload) == 0 {
		r.Payload = nil
	}
	if len(r.Extra) == 0 {
		r.Extra = nil
	}
	return r
}

func compareRows(t *testing.T, input string, got []*Row, want []Row) {
	t.Helper()
	n := max(len(got), len(want))
	for i := 0; i < n; i++ {
		switch {
		case i >= len(got):
			t.Errorf("input %q: row %d missing, want %s", input, i, fmtRow(&want[i]))
		case i >= len(want):
			t.Errorf("input %q: extra row %d: %s", input, i, fmtRow(got[i]))
		default:
			g, w := normalize(*got[i]), normalize(want[i])
			if !reflect.DeepEqual(g, w) {
				t.Errorf("input %q: row %d:\n got %s\nwant %s", input, i, fmtRow(&g), fmtRow(&w))
			}
		}
	}
}

// checkError asserts that err is an *Error at file:line with the field and
// a message containing every substring.
func checkError(t *testing.T, input string, err error, file string, line int64, field string, substrs ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("input %q: got no error, want %s:%d: %s", input, file, line, field)
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("input %q: got %T %v, want *trace.Error", input, err, err)
		return
	}
	if e.File != file || e.Line != line || e.Field != field {
		t.Errorf("input %q: got error at %q:%d field %q (%v), want %q:%d field %q", input, e.File, e.Line, e.Field, err, file, line, field)
	}
	msg := err.Error()
	prefix := fmt.Sprintf("%s:%d: ", file, line)
	if line == 0 {
		prefix = file + ": "
	}
	if field != "" {
		prefix += field + ": "
	}
	if !strings.HasPrefix(msg, prefix) {
		t.Errorf("input %q: message %q does not start with %q", input, msg, prefix)
	}
	for _, s := range substrs {
		if !strings.Contains(msg, s) {
			t.Errorf("input %q: message %q lacks %q", input, msg, s)
		}
	}
}

func i64(v int64) *int64 { return &v }

func stringsReader(s string) io.Reader { return strings.NewReader(s) }
