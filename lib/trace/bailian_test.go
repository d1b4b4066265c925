package trace

import "testing"

func TestBailianSessions(t *testing.T) {
	t.Parallel()
	const f = "bailian.jsonl"
	input := `{"chat_id": 159, "parent_chat_id": -1, "timestamp": 61.114, "input_length": 521, "output_length": 132, "type": "text", "turn": 1, "hash_ids": [1089, 1090]}
{"chat_id": 7, "timestamp": 1.5, "input_length": 10, "output_length": 1}
{"chat_id": 161, "parent_chat_id": 160, "timestamp": 63, "input_length": 3, "output_length": 3, "turn": 3}
{"chat_id": 160, "parent_chat_id": 159, "timestamp": 62.5, "input_length": 400, "output_length": 80, "turn": 2, "hash_ids": [18446744073709551615]}

{"chat_id": 300, "parent_chat_id": 999, "timestamp": 0, "input_length": 1, "output_length": 0}
{"chat_id": 400, "parent_chat_id": 401, "timestamp": 0, "input_length": 1, "output_length": 0, "turn": 2}
{"chat_id": 401, "parent_chat_id": 400, "timestamp": 0, "input_length": 1, "output_length": 0, "turn": 1}
`
	got := mustRead(t, f, input, Options{Type: TypeBailian})
	want := []Row{
		// Session 159 (first seen on line 1), sorted by turn.
		{Source: f, Line: 1, Seq: 0, SessionID: "159", Turn: 0, HasTimestamp: true, TimestampNS: 61114000000, InputLength: 521, HasOutputLength: true, OutputLength: 132, HashIDs: []uint64{1089, 1090}},
		{Source: f, Line: 4, Seq: 3, SessionID: "159", Turn: 1, HasTimestamp: true, TimestampNS: 62500000000, InputLength: 400, HasOutputLength: true, OutputLength: 80, HashIDs: []uint64{18446744073709551615}},
		{Source: f, Line: 3, Seq: 2, SessionID: "159", Turn: 2, HasTimestamp: true, TimestampNS: 63000000000, InputLength: 3, HasOutputLength: true, OutputLength: 3},
		{Source: f, Line: 2, Seq: 1, SessionID: "7", Turn: 0, HasTimestamp: true, TimestampNS: 1500000000, InputLength: 10, HasOutputLength: true, OutputLength: 1},
		// A missing parent ends the walk: 300 is its own root.
		{Source: f, Line: 6, Seq: 4, SessionID: "300", HasTimestamp: true, InputLength: 1, HasOutputLength: true},
		// A cycle ends the walk where it closes: both land in session 400.
		{Source: f, Line: 8, Seq: 6, SessionID: "400", Turn: 0, HasTimestamp: true, InputLength: 1, HasOutputLength: true},
		{Source: f, Line: 7, Seq: 5, SessionID: "400", Turn: 1, HasTimestamp: true, InputLength: 1, HasOutputLength: true},
	}
	compareRows(t, "bailian", got, want)
}

func TestBailianFilterBeforeGrouping(t *testing.T) {
	t.Parallel()
	// The parent (t=1s) is dropped by the start offset, so the child
	// becomes the root of its own session, as in aiperf.
	input := `{"chat_id": 1, "timestamp": 1, "input_length": 5, "output_length": 900}
{"chat_id": 2, "parent_chat_id": 1, "timestamp": 2, "input_length": 5, "output_length": 900, "turn": 2}
{"chat_id": 3, "timestamp": 3, "input_length": 50, "output_length": 1}
`
	rows, r, err := readString("b.jsonl", input, Options{Type: TypeBailian, StartOffsetNS: i64(1500e6), MaxInputLength: 10, MaxOutputLength: 100})
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{{Source: "b.jsonl", Line: 2, Seq: 1, SessionID: "2", HasTimestamp: true, TimestampNS: 2e9, InputLength: 5, HasOutputLength: true, OutputLength: 100}}
	compareRows(t, "filtered", rows, want)
	if o, l := r.Dropped(); o != 1 || l != 1 {
		t.Errorf("Dropped() = %d, %d, want 1, 1", o, l)
	}
	if c := r.Capped(); c != 1 {
		t.Errorf("Capped() = %d, want 1", c)
	}
}

func TestBailianErrors(t *testing.T) {
	t.Parallel()
	const f = "b.jsonl"
	ok := `{"chat_id": 1, "timestamp": 1, "input_length": 5, "output_length": 9}` + "\n"
	tests := []struct {
		input string
		line  int64
		field string
		msg   string
	}{
		{ok + `{"timestamp": 1, "input_length": 5, "output_length": 9}`, 2, "chat_id", "required"},
		{`{"chat_id": 1, "input_length": 5, "output_length": 9}`, 1, "timestamp", "required"},
		{`{"chat_id": 1, "timestamp": 1, "output_length": 9}`, 1, "input_length", "required"},
		{`{"chat_id": 1, "timestamp": 1, "input_length": 9}`, 1, "output_length", "required"},
		{`{"chat_id": "1", "timestamp": 1, "input_length": 5, "output_length": 9}`, 1, "chat_id", "got string"},
		{`{"chat_id": 1, "timestamp": -1, "input_length": 5, "output_length": 9}`, 1, "timestamp", "negative"},
		{`{"chat_id": 1, "timestamp": 1, "input_length": 5, "output_length": 9, "hash_ids": [-1]}`, 1, "hash_ids[0]", "unsigned 64-bit"},
		{`{"chat_id": 1, "timestamp": 1, "input_length": 5, "output_length": 9, "turn": 1.5}`, 1, "turn", "integer"},
		{`{"chat_id": 1, "timestamp": 1, "input_length": 5, "output_length": 9, "type": 3}`, 1, "type", "string"},
		{ok + ok + "{", 3, "", "invalid JSON"},
	}
	for _, tt := range tests {
		_, _, err := readString(f, tt.input, Options{Type: TypeBailian})
		checkError(t, tt.input, err, f, tt.line, tt.field, tt.msg)
	}
}
