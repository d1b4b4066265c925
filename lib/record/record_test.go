package record

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

func decodeAll(t *testing.T, in string) ([]Record, error) {
	t.Helper()
	d := NewDecoder(strings.NewReader(in), "in.jsonl")
	var out []Record
	for {
		var r Record
		err := d.Next(&r)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		r.Raw = append([]byte(nil), r.Raw...)
		out = append(out, r)
	}
}

func TestRoundTrip(t *testing.T) {
	recs := []Record{
		{Line: 1, SessionID: "s\"1", Session: 0, Turn: 0, HasTimestamp: true, TimestampNS: 1234500000, InputTokens: 7, HasMaxTokens: true, MaxTokens: 9, Kind: KindPrompt, Raw: []byte(`"hi\n"`)},
		{Line: 5, Session: -1, Turn: 3, HasDelay: true, DelayNS: 1, Kind: KindMessages, Raw: []byte(`[{"role":"user","content":"x"}]`), Tools: []byte(`[{"type":"function"}]`)},
		{Line: 6, Session: -1, Kind: KindPayload, Raw: []byte(`{"a":1}`)},
		{Line: 7, Session: -1, Kind: KindPrompt, Raw: []byte(`""`), Extra: []byte(`{"seed":1}`)},
		{Line: 8, Session: 2, Turn: 1, Kind: KindMessages, Raw: []byte(`[{"role":"user"}]`), ContextMode: ContextDeltas},
		{Line: 9, Session: 3, Kind: KindPayload, Raw: []byte(`{"a":1}`), ContextMode: ContextMessageArray},
		{Line: 10, Session: 4, InputTokens: 1000, Kind: KindPrompt, Raw: []byte(`"p"`), HashIDs: []uint64{0, 7, 1<<64 - 1}, BlockSize: 512},
	}
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	for i := range recs {
		if err := e.Encode(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.End(); err != nil {
		t.Fatal(err)
	}
	got, err := decodeAll(t, buf.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("got %d records, want %d", len(got), len(recs))
	}
	for i := range recs {
		g, w := got[i], recs[i]
		if string(Append(nil, &g)) != string(Append(nil, &w)) {
			t.Errorf("record %d: got %s, want %s", i, Append(nil, &g), Append(nil, &w))
		}
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{`{"v":1,"line":1,"prompt":"a"}` + "\n", `in.jsonl:2: stream ends without its end line`},
		{`{"v":3,"line":1,"prompt":"a"}` + "\n", `in.jsonl:1: v: unknown records version 3`},
		{`{"line":1,"prompt":"a"}` + "\n", `in.jsonl:1: v: missing`},
		{"\n\n" + `{"v":1,"line":1,"prompt":"a",}` + "\n", `in.jsonl:3: malformed JSON`},
		{`[1]` + "\n", `in.jsonl:1: not a JSON object`},
		{`{"v":1,"line":1,"prompt":"a"} x` + "\n", `in.jsonl:1: malformed JSON: data after the object`},
		{`{"v":1,"line":1,"payload":[1]}` + "\n", `in.jsonl:1: payload: not a JSON object`},
		{`{"v":1,"line":1,"messages":[]}` + "\n", `in.jsonl:1: messages: not a non-empty array`},
		{`{"v":1,"line":1,"prompt":1}` + "\n", `in.jsonl:1: prompt: not a string`},
		{`{"v":1,"line":1,"prompt":"a","tools":[]}` + "\n", `in.jsonl:1: tools: only allowed with messages`},
		{`{"v":1,"line":1,"payload":{},"extra":{}}` + "\n", `in.jsonl:1: extra: not allowed with payload`},
		{`{"v":1,"line":1,"prompt":"a","timestamp_ms":1,"delay_ms":2}` + "\n", `in.jsonl:1: delay_ms: given together with timestamp_ms`},
		{`{"v":1,"line":-1,"prompt":"a"}` + "\n", `in.jsonl:1: line: not a non-negative integer: -1`},
		{`{"v":1,"line":1,"session":4294967296,"prompt":"a"}` + "\n", `in.jsonl:1: session: not a session number`},
		{`{"v":1,"end":true}` + "\n", `in.jsonl:1: records: missing on the end line`},
		{`{"v":1,"end":true,"records":0}` + "\n" + `{"v":1,"line":1,"prompt":"a"}` + "\n", `in.jsonl:2: data after the end line`},
		{`{"v":1,"line":1,"prompt":"a","hash_ids":[1,2]}` + "\n", `in.jsonl:1: block_size: missing: hash_ids need the block size`},
		{`{"v":1,"line":1,"prompt":"a","block_size":16}` + "\n", `in.jsonl:1: hash_ids: missing or empty, but block_size is given`},
		{`{"v":1,"line":1,"prompt":"a","hash_ids":[],"block_size":16}` + "\n", `in.jsonl:1: hash_ids: missing or empty`},
		{`{"v":1,"line":1,"prompt":"a","hash_ids":[1,-2],"block_size":16}` + "\n", `in.jsonl:1: hash_ids[1]: not an unsigned 64-bit integer: -2`},
		{`{"v":1,"line":1,"prompt":"a","hash_ids":[18446744073709551616],"block_size":16}` + "\n", `in.jsonl:1: hash_ids[0]: not an unsigned`},
		{`{"v":1,"line":1,"prompt":"a","hash_ids":{},"block_size":16}` + "\n", `in.jsonl:1: hash_ids: not an array`},
		{`{"v":1,"line":1,"prompt":"a","hash_ids":[1],"block_size":0}` + "\n", `in.jsonl:1: block_size: must be positive`},
	} {
		_, err := decodeAll(t, c.in)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("decode %q: got error %v, want prefix %q", c.in, err, c.want)
			continue
		}
		var re *Error
		if !errors.As(err, &re) {
			t.Errorf("decode %q: error %T is not *record.Error", c.in, err)
		}
	}
}

func TestCRLFAndLongLines(t *testing.T) {
	long := strings.Repeat("x", 3<<20)
	in := `{"v":1,"line":1,"prompt":"` + long + `"}` + "\r\n" + `{"v":1,"end":true,"records":1}` + "\r\n"
	got, err := decodeAll(t, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Raw) != len(long)+2 {
		t.Fatalf("got %d records, raw %d bytes", len(got), len(got[0].Raw))
	}
}

func TestNoEndMarker(t *testing.T) {
	d := NewDecoder(strings.NewReader(`{"v":1,"line":1,"prompt":"a"}`), "x")
	d.RequireEnd = false
	var r Record
	if err := d.Next(&r); err != nil {
		t.Fatal(err)
	}
	if err := d.Next(&r); err != io.EOF {
		t.Fatalf("got %v, want EOF", err)
	}
}

func TestContextModeErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"v":1,"line":1,"context_mode":"deltas_with_responses","prompt":"x"}`, `in.jsonl:1: context_mode: must be "deltas_without_responses" or "message_array_with_responses", got "deltas_with_responses"`},
		{`{"v":1,"line":1,"context_mode":"DELTAS_WITHOUT_RESPONSES","prompt":"x"}`, `in.jsonl:1: context_mode: must be`},
		{`{"v":1,"line":1,"context_mode":1,"prompt":"x"}`, `in.jsonl:1: context_mode: not a string`},
		{`{"v":1,"line":1,"context_mode":"deltas_without_responses","payload":{"a":1}}`, `in.jsonl:1: context_mode: "deltas_without_responses" is not allowed with payload`},
		{`{"v":1,"line":1,"context_mode":"message_array_with_responses","context_mode":"message_array_with_responses","prompt":"x"}`, `in.jsonl:1: context_mode: appears twice`},
	} {
		_, err := decodeAll(t, c.line+"\n"+`{"v":1,"end":true,"records":1}`)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %s...", c.line, err, c.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"v":1,"line":1,"session_id":"a","turn":0,"timestamp_ms":1.5,"prompt":"x"}` + "\n" + `{"v":1,"end":true,"records":1}` + "\n"))
	f.Add([]byte(`{"v":1,"line":2,"messages":[{"role":"user"}],"tools":[],"max_tokens":null}`))
	f.Add([]byte(`{"v":1,"line":3,"payload":{"a":[1,{"b":"\u00e9"}]},"max_tokens":5}`))
	f.Add([]byte(`{"v":1,"line":4,"session":0,"turn":0,"context_mode":"deltas_without_responses","messages":[{"role":"user"}]}`))
	f.Add([]byte(`{"v":1,"line":5,"context_mode":"message_array_with_responses","payload":{}}`))
	f.Add([]byte(`{"v":1,"line":6,"input_tokens":600,"prompt":"x","block_size":512,"hash_ids":[1,2]}` + "\n" + `{"v":1,"line":7,"prompt":"y","hash_ids":[ 3 , 18446744073709551615 ],"block_size":16}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := NewDecoder(bytes.NewReader(b), "f")
		for i := 0; i < 1000; i++ {
			var r Record
			err := d.Next(&r)
			if err == io.EOF {
				return
			}
			if err != nil {
				var re *Error
				if !errors.As(err, &re) || re.Line < 1 {
					t.Fatalf("error without a line: %v", err)
				}
				return
			}
			// A decoded record re-encodes and decodes to the same line.
			line := Append(nil, &r)
			var r2 Record
			if _, _, _, err := parse(bytes.TrimRight(line, "\n"), &r2); err != nil {
				t.Fatalf("re-encoded record %s does not parse: %v", line, err)
			}
			if got := Append(nil, &r2); !bytes.Equal(got, line) {
				t.Fatalf("re-encode mismatch:\n%s\n%s", line, got)
			}
		}
	})
}

func BenchmarkDecodeLarge(b *testing.B) {
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	prompt := []byte(`"` + strings.Repeat("The quick brown fox jumps over the lazy dog. ", 2000) + `"`)
	for i := 0; i < 100; i++ {
		e.Encode(&Record{Line: uint64(i + 1), Session: int64(i), Kind: KindPrompt, Raw: prompt, HasMaxTokens: true, MaxTokens: 100})
	}
	e.End()
	in := buf.Bytes()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		d := NewDecoder(bytes.NewReader(in), "b")
		var r Record
		for d.Next(&r) == nil {
		}
	}
}

func TestMaxLine(t *testing.T) {
	long := `{"v":1,"line":2,"prompt":"` + strings.Repeat("x", 100) + `"}` + "\n"
	for _, c := range []struct {
		name string
		max  int
		in   string
		want string // error prefix; "" for success
	}{
		{"short line fits", 200, `{"v":1,"line":1,"prompt":"a"}` + "\n" + long + `{"v":1,"end":true,"records":2}` + "\n", ""},
		{"short line too long", 100, `{"v":1,"line":1,"prompt":"a"}` + "\n" + long, "in.jsonl:2: line too long: more than 100 bytes"},
		{"CRLF does not count", len(long) - 1, strings.Replace(long, "\n", "\r\n", 1) + `{"v":1,"end":true,"records":1}` + "\n", ""},
		{"pieces", 2 << 20, `{"v":1,"line":1,"prompt":"` + strings.Repeat("y", 3<<20) + `"}` + "\n", "in.jsonl:1: line too long: more than 2097152 bytes"},
		{"pieces fit", 4 << 20, `{"v":1,"line":1,"prompt":"` + strings.Repeat("y", 3<<20) + `"}` + "\n" + `{"v":1,"end":true,"records":1}`, ""},
	} {
		d := NewDecoder(strings.NewReader(c.in), "in.jsonl")
		d.MaxLine = c.max
		var err error
		for err == nil {
			var r Record
			err = d.Next(&r)
		}
		if c.want == "" {
			if err != io.EOF {
				t.Errorf("%s: got %v, want EOF", c.name, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || !errors.Is(err, ErrLineTooLong) {
			t.Errorf("%s: got %v, want %q wrapping ErrLineTooLong", c.name, err, c.want)
		}
	}
}

// TestLongLineMemory: a line far longer than the read buffer costs about
// twice its size in allocations (its pieces, then one buffer of its exact
// size), not the series of copies that growing one slice makes.
func TestLongLineMemory(t *testing.T) {
	const size = 32 << 20
	line := make([]byte, 0, size+64)
	line = append(line, `{"v":1,"line":1,"prompt":"`...)
	line = append(line, bytes.Repeat([]byte("z"), size)...)
	line = append(line, "\"}\n"...)
	d := NewDecoder(bytes.NewReader(line), "in")
	d.RequireEnd = false
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var r Record
	if err := d.Next(&r); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if len(r.Raw) != size+2 {
		t.Fatalf("prompt of %d bytes, want %d", len(r.Raw), size+2)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 2*size+4<<20 {
		t.Errorf("decoding a %d MiB line allocated %d MiB, want at most twice the line", size>>20, got>>20)
	}
}

func BenchmarkDecodeSmall(b *testing.B) {
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	prompt := []byte(`"` + strings.Repeat("the quick brown fox ", 10) + `"`)
	for i := 0; i < 10000; i++ {
		e.Encode(&Record{Line: uint64(i + 1), Session: int64(i), HasTimestamp: true, TimestampNS: int64(i) * 1e6, Kind: KindPrompt, Raw: prompt, HasMaxTokens: true, MaxTokens: 100, InputTokens: 50})
	}
	e.End()
	in := buf.Bytes()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		d := NewDecoder(bytes.NewReader(in), "b")
		var r Record
		for d.Next(&r) == nil {
		}
	}
}

// TestEndSettings: the end line carries the producer's settings, which the
// decoder hands out after the end; a stream without them (older producers,
// hand-made records) reads as before, and "settings" on a record line is
// an unknown field to it.
func TestEndSettings(t *testing.T) {
	settings := "aiperf-cachekey v1\ntokenize.seed=\"0\"\n"
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	e.Settings = settings
	e.Encode(&Record{Line: 1, Session: -1, Kind: KindPrompt, Raw: []byte(`"a"`)})
	if err := e.End(); err != nil {
		t.Fatal(err)
	}
	if want := `{"v":1,"end":true,"records":1,"settings":"aiperf-cachekey v1\ntokenize.seed=\"0\"\n"}` + "\n"; !strings.HasSuffix(buf.String(), want) {
		t.Errorf("end line:\n%s\nwant:\n%s", buf.String(), want)
	}
	for _, c := range []struct{ in, want string }{
		{buf.String(), settings},
		{`{"v":1,"line":1,"prompt":"a"}` + "\n" + `{"v":1,"end":true,"records":1}` + "\n", ""},
		{`{"v":1,"line":1,"prompt":"a","settings":7}` + "\n" + `{"v":1,"settings":"s","records":1,"end":true}` + "\n", "s"},
	} {
		d := NewDecoder(strings.NewReader(c.in), "in.jsonl")
		var r Record
		for {
			err := d.Next(&r)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%q: %v", c.in, err)
			}
		}
		if d.Settings() != c.want {
			t.Errorf("%q: Settings %q, want %q", c.in, d.Settings(), c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{`{"v":1,"end":true,"records":0,"settings":1}` + "\n", `in.jsonl:1: settings: not a string`},
		{`{"v":1,"end":true,"records":0,"settings":"a","settings":"b"}` + "\n", `in.jsonl:1: settings: appears twice`},
	} {
		if _, err := decodeAll(t, c.in); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("decode %q: got %v, want %q", c.in, err, c.want)
		}
	}
}
