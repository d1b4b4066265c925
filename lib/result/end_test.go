package result

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// decodeAll reads every record of in and returns their sent times and the
// decoder's End after io.EOF.
func decodeAll(t *testing.T, in []byte) ([]int64, *End, error) {
	t.Helper()
	d := NewDecoder(bytes.NewReader(in), "f")
	var sent []int64
	for {
		var r Record
		err := d.Next(&r)
		if err == io.EOF {
			return sent, d.End(), nil
		}
		if err != nil {
			return sent, d.End(), err
		}
		sent = append(sent, r.SentNS)
	}
}

func TestEndLine(t *testing.T) {
	first := Append(nil, &Record{Run: &RunInfo{ID: "a1"}, SentNS: 1})
	second := Append(nil, &Record{SentNS: 2})
	end := AppendEnd(nil, &End{RunID: "a1", Results: 2, Interrupted: true})
	if want := `{"v":1,"end":true,"run_id":"a1","results":2,"interrupted":true}` + "\n"; string(end) != want {
		t.Fatalf("end line %q, want %q", end, want)
	}
	runA := bytes.Join([][]byte{first, second, end}, nil)

	// the end line is no request; End returns it
	sent, e, err := decodeAll(t, runA)
	if err != nil || len(sent) != 2 || e == nil || *e != (End{RunID: "a1", Results: 2, Interrupted: true}) {
		t.Fatalf("got %v %+v %v", sent, e, err)
	}
	// a run without an end line: End is nil, even after another run's
	runB := Append(nil, &Record{Run: &RunInfo{ID: "b2"}, SentNS: 3})
	sent, e, err = decodeAll(t, append(append([]byte(nil), runA...), runB...))
	if err != nil || len(sent) != 3 || e != nil {
		t.Fatalf("two runs, the last without an end: got %v %+v %v", sent, e, err)
	}
	// keys in any order; "end" must be true
	if _, e, err = decodeAll(t, []byte(`{"interrupted":false,"results":0,"end":true,"v":1}`)); err != nil || e == nil || e.Interrupted {
		t.Fatalf("reordered end line: %+v %v", e, err)
	}
	if _, _, err = decodeAll(t, []byte(`{"v":1,"end":1}`)); err == nil || !strings.Contains(err.Error(), "f:1: end: not a boolean") {
		t.Fatalf("end:1: %v", err)
	}
	// the end line's members are foreign keys on a record, ignored as any
	// unknown key is
	rec := `{"v":1,"sent_unix_ns":5,"results":"x","interrupted":3,"run_id":7,"end":false}`
	if sent, e, err := decodeAll(t, []byte(rec)); err != nil || len(sent) != 1 || sent[0] != 5 || e != nil {
		t.Fatalf("a record with the end line's keys: %v %+v %v", sent, e, err)
	}
}

func TestCutLastLine(t *testing.T) {
	whole := append(Append(nil, &Record{Run: &RunInfo{ID: "a"}, SentNS: 1}), Append(nil, &Record{SentNS: 2})...)
	cut := whole[:len(whole)-10] // the second line cut mid-way, no newline
	sent, _, err := decodeAll(t, cut)
	if err != nil || len(sent) != 1 {
		t.Fatalf("a cut last line is left out: got %v, %v", sent, err)
	}
	// the same bytes with a newline are a bad line, not a cut one
	if _, _, err := decodeAll(t, append(cut, '\n')); err == nil {
		t.Fatal("a malformed line that ends in a newline was accepted")
	}
	// a file of one cut line holds no record: an error
	if _, _, err := decodeAll(t, whole[:20]); err == nil || !strings.Contains(err.Error(), "f:1") {
		t.Fatalf("one cut line: %v", err)
	}
}
