package result

import (
	"bytes"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestBiggestRecordReadsBack: the largest record a replay can write (the
// most chunk offsets it keeps, each of the widest value, with long error
// text and ids) is shorter than MaxLine and reads back equal, with a
// small record after it. (A record over 64 MiB, the bound before, was
// written but refused by report.)
func TestBiggestRecordReadsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a line of some 90 MB")
	}
	offs := make([]int64, MaxChunks-1)
	for i := range offs {
		offs[i] = math.MaxInt64 - MaxChunks + int64(i) // 19 digits and a comma each
	}
	big := Record{Record: math.MaxInt32, Session: strings.Repeat("s", 64<<10), Turn: math.MaxInt32, RequestID: strings.Repeat("r", 40),
		CorrelationID: strings.Repeat("c", 1<<10), Phase: PhaseProfiling, IntendedNS: math.MaxInt64, SentNS: math.MaxInt64 - 3,
		FirstByteNS: math.MaxInt64 - 2, FirstTokenNS: math.MaxInt64 - 1, FirstOutputNS: math.MaxInt64, EndNS: math.MaxInt64,
		ChunkOffsetsNS: offs, Status: math.MaxInt32,
		Err:         &Error{Code: math.MaxInt32, Type: strings.Repeat("\"", 200), Message: strings.Repeat("\u0001", 2000) + "..."},
		InputTokens: math.MaxInt64, MaxTokens: math.MaxInt64, OutputTokens: math.MaxInt64, ReasoningTokens: math.MaxInt64,
		OutputSource: SourceClient, Usage: &Usage{math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64}}
	line := Append(nil, &big)
	if len(line) > MaxLine {
		t.Fatalf("the biggest record is %d bytes, above MaxLine %d", len(line), MaxLine)
	}
	if len(line) <= 64<<20 {
		t.Fatalf("the biggest record is %d bytes: not the case the old bound refused", len(line))
	}
	small := Record{Record: 1, SentNS: 5, EndNS: 6}
	in := append(line, Append(nil, &small)...)
	d := NewDecoder(bytes.NewReader(in), "records.jsonl")
	var got Record
	if err := d.Next(&got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, big) {
		t.Error("the biggest record read back differs")
	}
	if err := d.Next(&got); err != nil || !reflect.DeepEqual(got, small) {
		t.Errorf("the record after it: %v %+v", err, got)
	}
	if err := d.Next(&got); err != io.EOF {
		t.Errorf("end: %v", err)
	}
}
