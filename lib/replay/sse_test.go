package replay

import (
	"bytes"
	"reflect"
	"testing"
)

type event struct{ typ, data string }

// parseSSE feeds b to a fresh parser in the given pieces.
func parseSSE(pieces [][]byte) ([]event, error) {
	var p sseParser
	var out []event
	for _, b := range pieces {
		// The parser may keep slices only until feed returns: hand it a
		// copy that is overwritten afterwards, as the read buffer is.
		buf := bytes.Clone(b)
		err := p.feed(buf, func(typ, data []byte) error {
			out = append(out, event{string(typ), string(data)})
			return nil
		})
		for i := range buf {
			buf[i] = '#'
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func whole(b []byte) [][]byte { return [][]byte{b} }

func bytewise(b []byte) [][]byte {
	var out [][]byte
	for i := range b {
		out = append(out, b[i:i+1])
	}
	return out
}

var sseCases = []struct {
	name, in string
	want     []event
}{
	{"one event", "data: a\n\n", []event{{"", "a"}}},
	{"no space", "data:a\n\n", []event{{"", "a"}}},
	{"only the first space goes", "data:  a \n\n", []event{{"", " a "}}},
	{"CRLF", "data: a\r\n\r\n", []event{{"", "a"}}},
	{"CR", "data: a\rdata: b\r\r", []event{{"", "a\nb"}}},
	{"mixed line ends", "data: a\r\ndata: b\rdata: c\n\n", []event{{"", "a\nb\nc"}}},
	{"multi-line data", "data: {\"a\":\ndata: 1}\n\n", []event{{"", "{\"a\":\n1}"}}},
	{"comments", ": keep-alive\ndata: x\n: more\n\n", []event{{"", "x"}}},
	{"comment only", ": ping\n\n", nil},
	{"empty data field", "data\n\n", []event{{"", ""}}},
	{"empty data value", "data:\n\n", []event{{"", ""}}},
	{"two empty data lines", "data\ndata\n\n", []event{{"", "\n"}}},
	{"event type", "event: usage\ndata: 1\n\n", []event{{"usage", "1"}}},
	{"type resets after dispatch", "event: e\ndata: 1\n\ndata: 2\n\n", []event{{"e", "1"}, {"", "2"}}},
	{"type resets on an empty event", "event: e\n\ndata: 2\n\n", []event{{"", "2"}}},
	{"id and retry ignored", "id: 7\nretry: 100\ndata: y\n\n", []event{{"", "y"}}},
	{"unknown field ignored", "foo: bar\ndata: y\n\n", []event{{"", "y"}}},
	{"field without colon", "data\n\n", []event{{"", ""}}},
	{"BOM", "\xef\xbb\xbfdata: x\n\n", []event{{"", "x"}}},
	{"BOM only at the start", "data: x\n\n\xef\xbb\xbfdata: y\n\n", []event{{"", "x"}}},
	{"unterminated event dropped", "data: a\n\ndata: b\n", []event{{"", "a"}}},
	{"unterminated line dropped", "data: a\n\ndata: b", []event{{"", "a"}}},
	{"many events", "data: 1\n\ndata: 2\n\ndata: [DONE]\n\n", []event{{"", "1"}, {"", "2"}, {"", "[DONE]"}}},
	{"blank lines between", "\n\n\ndata: 1\n\n\n\n", []event{{"", "1"}}},
	{"colon in value", "data: a:b: c\n\n", []event{{"", "a:b: c"}}},
	{"CRLF straddling", "data: a\r\n\r\ndata: b\r\n\r\n", []event{{"", "a"}, {"", "b"}}},
}

func TestSSE(t *testing.T) {
	for _, tc := range sseCases {
		in := []byte(tc.in)
		for _, split := range []struct {
			name   string
			pieces [][]byte
		}{{"whole", whole(in)}, {"bytewise", bytewise(in)}} {
			got, err := parseSSE(split.pieces)
			if err != nil {
				t.Fatalf("%s (%s): %v", tc.name, split.name, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s (%s): %q\ngot  %q\nwant %q", tc.name, split.name, tc.in, got, tc.want)
			}
		}
		// Every split into two pieces.
		for i := 0; i <= len(in); i++ {
			got, _ := parseSSE([][]byte{in[:i], in[i:]})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s split at %d: got %q, want %q", tc.name, i, got, tc.want)
			}
		}
	}
}

// A line longer than any read buffer is assembled across reads.
func TestSSELongLine(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 3*readBufSize+17)
	in := append(append([]byte("data: "), big...), "\n\n"...)
	var pieces [][]byte
	for i := 0; i < len(in); i += readBufSize {
		pieces = append(pieces, in[i:min(i+readBufSize, len(in))])
	}
	got, err := parseSSE(pieces)
	if err != nil || len(got) != 1 || got[0].data != string(big) {
		t.Fatalf("got %d events, err %v", len(got), err)
	}
}

func TestSSEReset(t *testing.T) {
	var p sseParser
	p.feed([]byte("event: e\ndata: half"), func(_, _ []byte) error { return nil })
	p.reset()
	got := 0
	p.feed([]byte("data: x\n\n"), func(typ, data []byte) error {
		if string(typ) != "" || string(data) != "x" {
			t.Errorf("after reset: %q %q", typ, data)
		}
		got++
		return nil
	})
	if got != 1 {
		t.Fatalf("%d events", got)
	}
}

// FuzzSSE: any bytes, split anywhere, parse the same as whole, and never
// panic.
func FuzzSSE(f *testing.F) {
	for _, tc := range sseCases {
		f.Add([]byte(tc.in), uint8(3))
	}
	for _, tc := range eventRules {
		f.Add([]byte(tc.in), uint8(5))
	}
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n"), uint8(7))
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		want, werr := parseSSE(whole(in))
		n := int(step%16) + 1
		var pieces [][]byte
		for i := 0; i < len(in); i += n {
			pieces = append(pieces, in[i:min(i+n, len(in))])
		}
		got, gerr := parseSSE(pieces)
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("pieces of %d: %q (%v), whole: %q (%v)", n, got, gerr, want, werr)
		}
		for _, e := range got {
			if bytes.ContainsAny([]byte(e.data), "\r") {
				t.Fatalf("CR in data %q", e.data)
			}
		}
	})
}
