package trace

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
)

// fuzzRows decodes data completely and checks the invariants every decoder
// keeps: no panic, errors are *Error values at the named file (with a line
// when requireLine), rows have a line and increasing Seq when inOrder.
func fuzzRows(t *testing.T, data []byte, opt Options, requireLine, inOrder bool) []*Row {
	const name = "fuzz.in"
	r, err := NewReader(bytes.NewReader(data), name, opt)
	if err != nil {
		checkFuzzError(t, err, name, false)
		return nil
	}
	var rows []*Row
	lastSeq := int64(-1)
	for {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			checkFuzzError(t, err, name, requireLine)
			if _, err2 := r.Next(); err2 != err {
				t.Fatalf("Next after error %v returned %v", err, err2)
			}
			break
		}
		if row.Line < 1 || row.Source != name {
			t.Fatalf("row without a place: %s", fmtRow(row))
		}
		if inOrder && row.Seq <= lastSeq {
			t.Fatalf("Seq %d after %d", row.Seq, lastSeq)
		}
		lastSeq = row.Seq
		if row.TimestampNS < 0 || row.DelayNS < 0 || row.InputLength < 0 || row.OutputLength < 0 || row.Turn < 0 {
			t.Fatalf("negative value in %s", fmtRow(row))
		}
		rows = append(rows, row)
	}
	return rows
}

func checkFuzzError(t *testing.T, err error, name string, requireLine bool) {
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is %T, not *trace.Error", err, err)
	}
	if e.File != name {
		t.Fatalf("error %v names %q, want %q", err, e.File, name)
	}
	if requireLine && e.Line < 1 {
		t.Fatalf("error %v has no line", err)
	}
}

func FuzzMooncake(f *testing.F) {
	for _, s := range []string{
		`{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3]}`,
		`{"timestamp": 1234.5, "input_length": 5, "hash_ids": [18446744073709551615]}` + "\r\n\r\n" + `{"input_length": 1, "hash_ids": [-1]}`,
		`{"session_id": "a", "text_input": "hi", "delay": 1e3}` + "\n" + `{"session_id": "a", "messages": [{"role": "user"}]}`,
		`{"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}], "extra": {"a": [1, "]"]}}`,
		`{"payload": {"prompt": "x\"y\\"}, "timestamp": 1e300}`,
		`{"input_length": 1, "message_mode": "delta"}` + "\n" + `{`,
		"\xef\xbb\xbf{\"input\\u005flength\": 2.0}\n[]\n",
		`{"session_id": "s", "context_mode": "DELTAS_WITHOUT_RESPONSES", "messages": [{"role": "user"}], "message_mode": "delta"}` + "\n" +
			`{"session_id": "s", "messages": [{"role": "user"}], "message_mode": "delta"}` + "\n" + `{"payload": {"a": 1}, "context_mode": "message_array_with_responses"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows := fuzzRows(t, data, Options{Type: TypeMooncake, MaxOutputLength: 100}, true, true)
		turns := map[string]int{}
		ctx := map[string]string{}
		for _, row := range rows {
			switch row.ContextMode {
			case "", ContextDeltas, ContextMessageArray:
			default:
				t.Fatalf("context mode %q in %s", row.ContextMode, fmtRow(row))
			}
			if row.SessionID != "" {
				if c, ok := ctx[row.SessionID]; ok && c != row.ContextMode {
					t.Fatalf("session %q: context mode %q after %q", row.SessionID, row.ContextMode, c)
				}
				ctx[row.SessionID] = row.ContextMode
			}
			if row.SessionID != "" {
				if row.Turn != turns[row.SessionID] {
					t.Fatalf("session %q: turn %d, want %d", row.SessionID, row.Turn, turns[row.SessionID])
				}
				turns[row.SessionID]++
			}
			if row.OutputLength > 100 {
				t.Fatalf("output_length %d not capped", row.OutputLength)
			}
			modes := 0
			for _, set := range []bool{row.InputLength > 0, row.HasText, row.Messages != nil, row.Payload != nil} {
				if set {
					modes++
				}
			}
			if modes != 1 {
				t.Fatalf("%d input modes in %s", modes, fmtRow(row))
			}
		}
	})
}

func FuzzDetect(f *testing.F) {
	for _, s := range []string{
		`{"timestamp": 0, "input_length": 1}`,
		`{"chat_id": 1, "timestamp": 1, "input_length": 2, "output_length": 3}`,
		`{"captureData": {}, "eventMetadata": {}}`,
		`{"model": "m", "messages": []}`,
		`{"data": [{"session_id": "s", "payloads": [{}]}]}`,
		`{"text": "x"}`,
		`{"turns": []}`,
		"Timestamp,Model,Request tokens,Response tokens",
		`"Timestamp","Request tokens"`,
		"{",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		typ, err := Detect(data)
		if err != nil {
			if typ != "" {
				t.Fatalf("Detect returned %q with error %v", typ, err)
			}
			return
		}
		if !slices.Contains(Types, typ) {
			t.Fatalf("Detect returned unknown type %q", typ)
		}
		// Decoding a detected single record must not panic either.
		fuzzRows(t, data, Options{Type: typ}, false, false)
	})
}

func FuzzBurstGPT(f *testing.F) {
	for _, s := range []string{
		"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n45,GPT-4,1087,0,1087,API log\n",
		"Timestamp,Request tokens,Response tokens\r\n1.5,2,3\r\n\r\n-1,x,\"4\"\r\n9e2,+5,007",
		"\"Timestamp\",\"Request tokens\",\"Response tokens\"\n\"1\",\"2\n\",3\n1,2,3,4,5\n",
		"Timestamp,Request tokens\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows := fuzzRows(t, data, Options{Type: TypeBurstGPT, MaxInputLength: 1000}, false, true)
		for _, row := range rows {
			if row.Line < 2 || !row.HasTimestamp || !row.HasOutputLength || row.InputLength > 1000 {
				t.Fatalf("bad row %s", fmtRow(row))
			}
		}
	})
}

// FuzzDecode runs every decoder, and auto-detection, over arbitrary bytes.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"text": "a", "images": ["https://x.test/a"], "image_uuids": ["u"]}`), uint8(6))
	f.Add([]byte(`{"turns": [{"texts": [{"name": "n", "contents": ["a", ""]}]}]}`), uint8(7))
	f.Add([]byte(inputsDoc), uint8(5))
	f.Add([]byte(`{"chat_id": 2, "parent_chat_id": 1, "timestamp": 1, "input_length": 2, "output_length": 3}`+"\n"+`{"chat_id": 1, "parent_chat_id": 2, "timestamp": 1, "input_length": 2, "output_length": 3}`), uint8(1))
	f.Add([]byte(capture("e", "2026-01-01T00:00:00Z", `{"messages":[{"role":"user"}],"max_tokens":3}`, "BASE64", `{"usage":{"prompt_tokens":4}}`, "JSON")), uint8(3))
	f.Add([]byte(`{"messages": [{"role": "user"}]}`), uint8(4))
	f.Add([]byte("{\n\"data\": [\n"), uint8(8))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		typ := ""
		if i := int(which) % (len(Types) + 1); i < len(Types) {
			typ = Types[i]
		}
		inOrder := typ != TypeBailian && typ != TypeSageMaker && typ != ""
		fuzzRows(t, data, Options{Type: typ}, false, inOrder)
	})
}
