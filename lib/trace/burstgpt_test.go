package trace

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestBurstGPTRows(t *testing.T) {
	t.Parallel()
	const f = "burst.csv"
	input := "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\r\n" +
		"5,ChatGPT,472,18,490,Conversation log\r\n" +
		"45.25,\"GPT-4, big\",1087,0,1087,Conversation log\r\n" +
		"\r\n" +
		"46,ChatGPT,abc,5,5,Conversation log\r\n" + // bad cell: skipped, counted
		"47,ChatGPT,12.0,5,17,API log\r\n" + // int("12.0") fails in Python: skipped
		"48,ChatGPT,12\r\n" + // short row: skipped
		"-1,ChatGPT,1,1,2,x\r\n" + // negative timestamp: skipped
		" 49.5 ,ChatGPT, +7 ,007,14,x\r\n"
	rows, r, err := readString(f, input, Options{Type: TypeBurstGPT})
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{
		{Source: f, Line: 2, Seq: 0, HasTimestamp: true, TimestampNS: 5e9, InputLength: 472, HasOutputLength: true, OutputLength: 18},
		{Source: f, Line: 3, Seq: 1, HasTimestamp: true, TimestampNS: 45250000000, InputLength: 1087, HasOutputLength: true, OutputLength: 0},
		{Source: f, Line: 9, Seq: 6, HasTimestamp: true, TimestampNS: 49500000000, InputLength: 7, HasOutputLength: true, OutputLength: 7},
	}
	compareRows(t, "burst", rows, want)
	if s := r.Skipped(); s != 4 {
		t.Errorf("Skipped() = %d, want 4", s)
	}
}

func TestBurstGPTFilters(t *testing.T) {
	t.Parallel()
	input := "Timestamp,Request tokens,Response tokens\n1,10,10\n2,20,20\n3,30,30\n4,40,40\n"
	rows, r, err := readString("b.csv", input, Options{Type: TypeBurstGPT, StartOffsetNS: i64(2e9), EndOffsetNS: i64(4e9), MaxInputLength: 30, MaxOutputLength: 25})
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{
		{Source: "b.csv", Line: 3, Seq: 1, HasTimestamp: true, TimestampNS: 2e9, InputLength: 20, HasOutputLength: true, OutputLength: 20},
		{Source: "b.csv", Line: 4, Seq: 2, HasTimestamp: true, TimestampNS: 3e9, InputLength: 30, HasOutputLength: true, OutputLength: 25},
	}
	compareRows(t, "filters", rows, want)
	if o, l := r.Dropped(); o != 1 || l != 1 {
		t.Errorf("Dropped() = %d, %d, want 1, 1", o, l)
	}
}

func TestBurstGPTErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		input string
		line  int64
		field string
		msg   string
	}{
		{"Timestamp,Request tokens\n1,2\n", 1, "header", `missing required columns "Response tokens"`},
		{"Timestamp, Request tokens, Response tokens\n", 1, "header", `"Request tokens", "Response tokens"`},
		{"", 1, "header", `"Timestamp", "Request tokens", "Response tokens"`},
	}
	for _, tt := range tests {
		_, _, err := readString("b.csv", tt.input, Options{Type: TypeBurstGPT})
		checkError(t, tt.input, err, "b.csv", tt.line, tt.field, tt.msg)
	}
}

func TestBurstGPTReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("Timestamp,Request tokens,Response tokens\n1,2,3\n"), &failReader{boom})
	tr, err := NewReader(r, "b.csv", Options{Type: TypeBurstGPT})
	if err != nil {
		t.Fatal(err)
	}
	_, err = readRows(tr)
	if !errors.Is(err, boom) {
		t.Errorf("got %v, want an error wrapping %v", err, boom)
	}
}

type failReader struct{ err error }

func (f *failReader) Read([]byte) (int, error) { return 0, f.err }
