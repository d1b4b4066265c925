package result

import (
	"bytes"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
)

// biggest is the largest record a replay can write: the most chunk
// offsets it keeps, each of the widest value, with the longest error text
// (clipped by lib/replay), the largest token counts a reader takes
// (MaxTokens) and ids of sess bytes.
func biggest(chunks int, sess string) Record {
	offs := make([]int64, chunks)
	for i := range offs {
		offs[i] = math.MaxInt64 - MinTimeNS - MaxChunks + int64(i) // 19 digits and a comma each, all before the end
	}
	return Record{Record: math.MaxInt32, Session: sess, Turn: math.MaxInt32, RequestID: strings.Repeat("r", 40),
		CorrelationID: strings.Repeat("c", 1<<10), Phase: PhaseProfiling, IntendedNS: math.MaxInt64, SentNS: MinTimeNS,
		FirstByteNS: math.MaxInt64 - 2, FirstTokenNS: math.MaxInt64 - 1, FirstOutputNS: math.MaxInt64, EndNS: math.MaxInt64,
		ChunkOffsetsNS: offs, Status: math.MaxInt32,
		Err:         &Error{Code: math.MaxInt32, Type: strings.Repeat("\"", 200), Message: strings.Repeat("\u0001", 2000) + "..."},
		InputTokens: MaxTokens, MaxTokens: MaxTokens, OutputTokens: MaxTokens, ReasoningTokens: MaxTokens,
		OutputSource: SourceClient, Usage: &Usage{MaxTokens, MaxTokens, MaxTokens, MaxTokens, MaxTokens, true}}
}

// TestBiggestRecordFits: the largest record a replay writes (with a 64 KiB
// session id) is shorter than MaxLine.
func TestBiggestRecordFits(t *testing.T) {
	big := biggest(MaxChunks-1, strings.Repeat("s", 64<<10))
	if n := len(Append(nil, &big)); n > MaxLine {
		t.Fatalf("the biggest record is %d bytes, above MaxLine %d", n, MaxLine)
	}
}

// TestBigRecordReadsBack: a record of more than 64 MiB (the decoder's
// bound before, which refused records a replay had written, leaving the
// run without exports) reads back equal, with a small record after it.
func TestBigRecordReadsBack(t *testing.T) {
	big := biggest(1000, strings.Repeat("s", 65<<20))
	line := Append(nil, &big)
	if len(line) <= 64<<20 {
		t.Fatalf("the record is %d bytes: not the case the old bound refused", len(line))
	}
	small := Record{Record: 1, SentNS: 5, EndNS: 6}
	in := append(line, Append(nil, &small)...)
	d := NewDecoder(bytes.NewReader(in), "records.jsonl")
	var got Record
	if err := d.Next(&got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, big) {
		t.Error("the big record read back differs")
	}
	if err := d.Next(&got); err != nil || !reflect.DeepEqual(got, small) {
		t.Errorf("the record after it: %v %+v", err, got)
	}
	if err := d.Next(&got); err != io.EOF {
		t.Errorf("end: %v", err)
	}
}
