package trace

import (
	"encoding/json"
	"testing"
)

func TestMooncakeRows(t *testing.T) {
	t.Parallel()
	const f = "trace.jsonl"
	tests := []struct {
		name  string
		input string
		want  []Row
	}{
		{
			name:  "synthesised",
			input: `{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2]}` + "\n",
			want: []Row{{Source: f, Line: 1, Seq: 0, HasTimestamp: true, TimestampNS: 0, InputLength: 6758,
				HasOutputLength: true, OutputLength: 500, HashIDs: []uint64{0, 1, 2}}},
		},
		{
			name:  "fractional milliseconds are exact",
			input: `{"timestamp": 1234.5, "input_length": 1}` + "\n" + `{"timestamp": 0.000001, "input_length": 1}` + "\n" + `{"timestamp": 1.5e3, "input_length": 1}`,
			want: []Row{
				{Source: f, Line: 1, Seq: 0, HasTimestamp: true, TimestampNS: 1234500000, InputLength: 1},
				{Source: f, Line: 2, Seq: 1, HasTimestamp: true, TimestampNS: 1, InputLength: 1},
				{Source: f, Line: 3, Seq: 2, HasTimestamp: true, TimestampNS: 1500000000, InputLength: 1},
			},
		},
		{
			name:  "max uint64 hash id round-trips",
			input: `{"input_length": 5, "hash_ids": [18446744073709551615, 9007199254740993]}`,
			want:  []Row{{Source: f, Line: 1, InputLength: 5, HashIDs: []uint64{18446744073709551615, 9007199254740993}}},
		},
		{
			// integral numbers written as floats, as input_length and pydantic's list[int] take them
			name:  "hash ids written 1.0 and 1e3",
			input: `{"input_length": 5, "hash_ids": [1.0, 1e3, 7]}`,
			want:  []Row{{Source: f, Line: 1, InputLength: 5, HashIDs: []uint64{1, 1000, 7}}},
		},
		{
			name:  "text_input",
			input: `{"text_input": "Hello <world> & you", "output_length": 4}`,
			want:  []Row{{Source: f, Line: 1, Text: "Hello <world> & you", HasText: true, HasOutputLength: true, OutputLength: 4}},
		},
		{
			name:  "empty text_input is a prompt",
			input: `{"text_input": ""}`,
			want:  []Row{{Source: f, Line: 1, HasText: true}},
		},
		{
			name:  "messages and tools verbatim",
			input: `{"messages": [ {"role": "user", "content": "Hi"} ], "tools": [{"type":"function"}], "delay": 2.25}`,
			want: []Row{{Source: f, Line: 1, Messages: json.RawMessage(`[ {"role": "user", "content": "Hi"} ]`),
				Tools: json.RawMessage(`[{"type":"function"}]`), HasDelay: true, DelayNS: 2250000, ContextMode: ContextMessageArray}},
		},
		{
			name:  "payload keeps its exact bytes",
			input: `{"payload": {"prompt" :  "Hello\u0021",  "max_tokens": 50.0}, "timestamp": 1000, "extra": {"top_p": 0.5}}`,
			want: []Row{{Source: f, Line: 1, Payload: json.RawMessage(`{"prompt" :  "Hello\u0021",  "max_tokens": 50.0}`),
				HasTimestamp: true, TimestampNS: 1000000000, Extra: json.RawMessage(`{"top_p": 0.5}`), ContextMode: ContextMessageArray}},
		},
		{
			name: "sessions count turns; blank lines and CRLF count as lines",
			input: "{\"session_id\": \"a\", \"input_length\": 10}\r\n\r\n" +
				"{\"session_id\": \"b\", \"input_length\": 11, \"delay\": 5}\r\n" +
				"   \n" +
				"{\"session_id\": \"a\", \"input_length\": 12, \"delay\": 7}\r\n" +
				"{\"input_length\": 13}",
			want: []Row{
				{Source: f, Line: 1, Seq: 0, SessionID: "a", Turn: 0, InputLength: 10},
				{Source: f, Line: 3, Seq: 1, SessionID: "b", Turn: 0, InputLength: 11, HasDelay: true, DelayNS: 5000000},
				{Source: f, Line: 5, Seq: 2, SessionID: "a", Turn: 1, InputLength: 12, HasDelay: true, DelayNS: 7000000},
				{Source: f, Line: 6, Seq: 3, InputLength: 13},
			},
		},
		{
			name:  "null is absent and unknown fields are ignored",
			input: `{"input_length": 3, "text_input": null, "hash_ids": null, "timestamp": null, "session_id": null, "whatever": [1, {"x": "}"}]}`,
			want:  []Row{{Source: f, Line: 1, InputLength: 3}},
		},
		{
			name:  "integral floats are integers",
			input: `{"input_length": 3.0, "output_length": 2e1}`,
			want:  []Row{{Source: f, Line: 1, InputLength: 3, HasOutputLength: true, OutputLength: 20}},
		},
		{
			name:  "delta messages",
			input: `{"session_id": "s", "message_mode": "delta", "messages": [{"role": "user", "content": "Hi"}]}`,
			want: []Row{{Source: f, Line: 1, SessionID: "s", DeltaMessages: true, ContextMode: ContextDeltas,
				Messages: json.RawMessage(`[{"role": "user", "content": "Hi"}]`)}},
		},
		{
			name: "context_mode is read case-insensitively and overrides the inferred mode",
			input: `{"session_id": "s", "context_mode": "DELTAS_WITHOUT_RESPONSES", "input_length": 4}` + "\n" +
				`{"session_id": "s", "context_mode": "deltas_without_responses", "input_length": 5}` + "\n" +
				`{"context_mode": "Message_Array_With_Responses", "messages": [{"role": "user"}]}` + "\n" +
				`{"context_mode": "message_array_with_responses", "text_input": "x"}` + "\n" +
				`{"context_mode": null, "input_length": 6}`,
			want: []Row{
				{Source: f, Line: 1, Seq: 0, SessionID: "s", InputLength: 4, ContextMode: ContextDeltas},
				{Source: f, Line: 2, Seq: 1, SessionID: "s", Turn: 1, InputLength: 5, ContextMode: ContextDeltas},
				{Source: f, Line: 3, Seq: 2, Messages: json.RawMessage(`[{"role": "user"}]`), ContextMode: ContextMessageArray},
				{Source: f, Line: 4, Seq: 3, Text: "x", HasText: true, ContextMode: ContextMessageArray},
				{Source: f, Line: 5, Seq: 4, InputLength: 6},
			},
		},
		{
			name: "message_mode delta with the matching context_mode",
			input: `{"session_id": "s", "message_mode": "delta", "context_mode": "deltas_without_responses", "messages": [{"role": "user"}]}` + "\n" +
				`{"session_id": "s", "message_mode": "delta", "messages": [{"role": "user"}]}`,
			want: []Row{
				{Source: f, Line: 1, SessionID: "s", DeltaMessages: true, ContextMode: ContextDeltas, Messages: json.RawMessage(`[{"role": "user"}]`)},
				{Source: f, Line: 2, Seq: 1, SessionID: "s", Turn: 1, DeltaMessages: true, ContextMode: ContextDeltas, Messages: json.RawMessage(`[{"role": "user"}]`)},
			},
		},
		{
			name:  "escaped keys are decoded",
			input: `{"input\u005flength": 7}`,
			want:  []Row{{Source: f, Line: 1, InputLength: 7}},
		},
		{
			name:  "empty input",
			input: "\n\n",
		},
	}
	for _, tt := range tests {
		got := mustRead(t, f, tt.input, Options{Type: TypeMooncake})
		compareRows(t, tt.name, got, tt.want)
	}
}

func TestMooncakeErrors(t *testing.T) {
	t.Parallel()
	const f = "trace.jsonl"
	ok := `{"input_length": 1}` + "\n"
	tests := []struct {
		input string
		line  int64
		field string
		msg   string
	}{
		{ok + `{"input_length": 1, "hash_ids": [1, 2, -3]}`, 2, "hash_ids[2]", "not an unsigned 64-bit integer"},
		{`{"input_length": 1, "hash_ids": [1.5]}`, 1, "hash_ids[0]", "not an unsigned 64-bit integer"},
		{`{"input_length": 1, "hash_ids": [1e-3]}`, 1, "hash_ids[0]", "not an unsigned 64-bit integer"},
		{`{"input_length": 1, "hash_ids": [18446744073709551616]}`, 1, "hash_ids[0]", "not an unsigned 64-bit integer"},
		{`{"input_length": 1, "hash_ids": ["1"]}`, 1, "hash_ids[0]", "not an unsigned 64-bit integer"},
		{`{"input_length": 1, "hash_ids": 5}`, 1, "hash_ids", "must be an array"},
		{ok + ok + `{"output_length": 3}`, 3, "", "exactly one of input_length, text_input, messages or payload"},
		{`{"input_length": 3, "text_input": "x"}`, 1, "text_input", "mutually exclusive"},
		{`{"messages": [{"role":"user"}], "payload": {"a": 1}}`, 1, "payload", "mutually exclusive"},
		{`{"text_input": "x", "hash_ids": [1]}`, 1, "hash_ids", "only allowed with input_length"},
		{`{"input_length": 3, "tools": [{}]}`, 1, "tools", "only allowed with messages"},
		{`{"messages": [{"role":"user"}], "tools": []}`, 1, "tools", "non-empty"},
		{`{"messages": [{"role":"user"}], "tools": [1]}`, 1, "tools[0]", "must be an object"},
		{`{"messages": []}`, 1, "messages", "non-empty"},
		{`{"messages": [{"role":"user"}, {"content": "x"}]}`, 1, "messages[1]", `"role"`},
		{`{"messages": [{"role":"user"}, "hi"]}`, 1, "messages[1]", `"role"`},
		{`{"messages": {"role":"user"}}`, 1, "messages", "got object"},
		{`{"payload": {}}`, 1, "payload", "non-empty object"},
		{`{"payload": "body"}`, 1, "payload", "non-empty object"},
		{`{"input_length": 0}`, 1, "input_length", "greater than 0"},
		{`{"input_length": -4}`, 1, "input_length", "negative"},
		{`{"input_length": 2.5}`, 1, "input_length", "must be an integer"},
		{`{"input_length": "12"}`, 1, "input_length", "got string"},
		{`{"input_length": 1, "output_length": -1}`, 1, "output_length", "negative"},
		{`{"input_length": 1, "output_length": true}`, 1, "output_length", "got boolean"},
		{`{"input_length": 1, "timestamp": -5}`, 1, "timestamp", "negative"},
		{`{"input_length": 1, "timestamp": "5"}`, 1, "timestamp", "must be a number"},
		{`{"input_length": 1, "timestamp": 1e300}`, 1, "timestamp", "out of range"},
		{`{"input_length": 1, "delay": -0.5}`, 1, "delay", "negative"},
		{`{"input_length": 1, "session_id": 7}`, 1, "session_id", "must be a string"},
		{`{"input_length": 1, "extra": [1]}`, 1, "extra", "must be an object"},
		{`{"input_length": 1, "message_mode": "delta"}`, 1, "message_mode", "only supported with messages"},
		{`{"input_length": 1, "message_mode": "full"}`, 1, "message_mode", `"history" or "delta"`},
		{`{"messages": [{"role":"user"}], "message_mode": "delta", "extra": {"messages": []}}`, 1, "extra.messages", "not allowed"},
		{`{"session_id": "s", "input_length": 1}` + "\n" + `{"session_id": "s", "messages": [{"role":"user"}]}`, 2, "session_id", "mixes input_length/text_input rows with messages rows"},
		{`{"session_id": "s", "payload": {"a":1}}` + "\n\n" + `{"session_id": "s", "messages": [{"role":"user"}]}`, 3, "session_id", "mixes payload rows with messages rows"},
		{`{"messages": [{"role":"user"}], "message_mode": "Delta"}`, 1, "message_mode", `"history" or "delta", got "Delta"`},
		{`{"messages": [{"role":"user"}], "message_mode": "message_array"}`, 1, "message_mode", `"history" or "delta"`},
		{`{"messages": [{"role":"user"}], "message_mode": 1}`, 1, "message_mode", "must be a string"},
		{`{"session_id": "s", "message_mode": "delta", "messages": [{"role":"user"}]}` + "\n" + `{"session_id": "s", "messages": [{"role":"user"}]}`, 2, "message_mode",
			`session "s" is message_array_with_responses (from its messages input) here but deltas_without_responses (from message_mode) on line 1`},
		{`{"session_id": "s", "messages": [{"role":"user"}]}` + "\n" + `{"session_id": "s", "message_mode": "delta", "messages": [{"role":"user"}]}`, 2, "message_mode",
			`is deltas_without_responses (from message_mode) here but message_array_with_responses (from its messages input) on line 1`},
		{`{"session_id": "s", "input_length": 1}` + "\n" + `{"session_id": "s", "input_length": 1, "context_mode": "deltas_without_responses"}`, 2, "context_mode",
			`is deltas_without_responses (from context_mode) here but none (from its input_length/text_input input) on line 1`},
		{`{"input_length": 1, "context_mode": "deltas_with_responses"}`, 1, "context_mode", "not supported: it accumulates the trace's turns without the server's replies"},
		{`{"input_length": 1, "context_mode": "MESSAGE_ARRAY_WITHOUT_RESPONSES"}`, 1, "context_mode", "not supported: the Python aiperf does not implement it either"},
		{`{"input_length": 1, "context_mode": "history"}`, 1, "context_mode", `must be deltas_without_responses or message_array_with_responses, got "history"`},
		{`{"input_length": 1, "context_mode": ""}`, 1, "context_mode", "must be deltas_without_responses or"},
		{`{"input_length": 1, "context_mode": 2}`, 1, "context_mode", "must be a string"},
		{`{"messages": [{"role":"user"}], "message_mode": "delta", "context_mode": "message_array_with_responses"}`, 1, "context_mode", `contradicts message_mode "delta"`},
		{`{"payload": {"a": 1}, "context_mode": "deltas_without_responses"}`, 1, "context_mode", "not allowed with payload"},
		{ok + `{"input_length": 1`, 2, "", "invalid JSON"},
		{ok + `[1, 2]`, 2, "", "must be a JSON object, got array"},
		{ok + `not json`, 2, "", "invalid JSON"},
		{"\n\n" + `{"input_length": 1,}`, 3, "", "invalid JSON"},
	}
	for _, tt := range tests {
		_, _, err := readString(f, tt.input, Options{Type: TypeMooncake})
		checkError(t, tt.input, err, f, tt.line, tt.field, tt.msg)
	}
}

func TestMooncakeStopsAtFirstError(t *testing.T) {
	t.Parallel()
	r, err := NewReader(stringsReader(`{"input_length": 1}`+"\n"+`{}`+"\n"+`{"input_length": 2}`), "x", Options{Type: TypeMooncake})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != nil {
		t.Fatalf("row 1: %v", err)
	}
	_, err1 := r.Next()
	_, err2 := r.Next()
	if err1 == nil || err2 != err1 {
		t.Errorf("got errors %v then %v, want the same error twice", err1, err2)
	}
}
