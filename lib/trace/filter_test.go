package trace

import "testing"

func TestMooncakeFilters(t *testing.T) {
	t.Parallel()
	const f = "m.jsonl"
	input := `{"session_id": "s", "timestamp": 0, "input_length": 10, "output_length": 500}
{"session_id": "s", "timestamp": 1000, "input_length": 10, "output_length": 5}
{"session_id": "s", "timestamp": 1500.5, "input_length": 99, "output_length": 5}
{"session_id": "s", "timestamp": 2000, "input_length": 10, "output_length": 800}
{"session_id": "s", "timestamp": 2000.000001, "input_length": 10}
{"input_length": 10, "delay": 5}
`
	rows, r, err := readString(f, input, Options{
		Type:          TypeMooncake,
		StartOffsetNS: i64(1000e6), EndOffsetNS: i64(2000e6), // inclusive
		MaxInputLength: 50, MaxOutputLength: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{
		// Turns count the rows kept, as aiperf groups after filtering.
		{Source: f, Line: 2, Seq: 1, SessionID: "s", Turn: 0, HasTimestamp: true, TimestampNS: 1000e6, InputLength: 10, HasOutputLength: true, OutputLength: 5},
		{Source: f, Line: 4, Seq: 3, SessionID: "s", Turn: 1, HasTimestamp: true, TimestampNS: 2000e6, InputLength: 10, HasOutputLength: true, OutputLength: 100},
		// Rows without a timestamp are not dropped by the offsets.
		{Source: f, Line: 6, Seq: 5, InputLength: 10, HasDelay: true, DelayNS: 5e6},
	}
	compareRows(t, "filters", rows, want)
	if o, l := r.Dropped(); o != 2 || l != 1 {
		t.Errorf("Dropped() = %d, %d; want 2, 1", o, l)
	}
	if c := r.Capped(); c != 1 {
		t.Errorf("Capped() = %d; want 1", c)
	}
}
