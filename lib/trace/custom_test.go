package trace

import (
	"encoding/json"
	"testing"
)

func TestSingleTurnRows(t *testing.T) {
	t.Parallel()
	const f = "st.jsonl"
	tests := []struct {
		name  string
		input string
		want  Row
	}{
		{
			name:  "one text is a plain string",
			input: `{"text": "What is <deep> learning?"}`,
			want: Row{HasText: true, Text: "What is <deep> learning?",
				Messages: json.RawMessage(`[{"role":"user","content":"What is <deep> learning?"}]`)},
		},
		{
			name:  "a one-element texts list is a plain string too",
			input: `{"texts": ["Hi"], "role": "system", "timestamp": 1000.25, "output_length": 9, "extra": {"seed": 1}}`,
			want: Row{HasText: true, Text: "Hi", HasTimestamp: true, TimestampNS: 1000250000, HasOutputLength: true, OutputLength: 9,
				Extra: json.RawMessage(`{"seed": 1}`), Messages: json.RawMessage(`[{"role":"system","content":"Hi"}]`)},
		},
		{
			name:  "two texts are parts, empty ones skipped",
			input: `{"texts": ["Who are you?", "", "Hello"], "delay": 3}`,
			want: Row{HasDelay: true, DelayNS: 3000000,
				Messages: json.RawMessage(`[{"role":"user","content":[{"type":"text","text":"Who are you?"},{"type":"text","text":"Hello"}]}]`)},
		},
		{
			name:  "text with media",
			input: `{"text": "What is in the image?", "image": "https://x.test/a.png", "audio": "wav,UklGRg==", "video": "data:video/mp4;base64,AAAA"}`,
			want: Row{Messages: json.RawMessage(`[{"role":"user","content":[` +
				`{"type":"text","text":"What is in the image?"},` +
				`{"type":"image_url","image_url":{"url":"https://x.test/a.png"}},` +
				`{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}},` +
				`{"type":"video_url","video_url":{"url":"data:video/mp4;base64,AAAA"}}]}]`)},
		},
		{
			name:  "named objects and a data:audio URI",
			input: `{"texts": [{"name": "a", "contents": ["x", "y"]}, {"name": "b", "contents": ["z"]}], "audios": ["data:audio/mp3;base64,SUQz"]}`,
			want: Row{Messages: json.RawMessage(`[{"role":"user","content":[{"type":"text","text":"x"},{"type":"text","text":"y"},{"type":"text","text":"z"},` +
				`{"type":"input_audio","input_audio":{"data":"SUQz","format":"mp3"}}]}]`)},
		},
		{
			name:  "image uuids",
			input: `{"text": "t", "images": ["data:image/png;base64,AA", "https://x.test/b.png"], "image_uuids": ["u1", "u2"]}`,
			want: Row{Messages: json.RawMessage(`[{"role":"user","content":[{"type":"text","text":"t"},` +
				`{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"},"uuid":"u1"},` +
				`{"type":"image_url","image_url":{"url":"https://x.test/b.png"},"uuid":"u2"}]}]`)},
		},
		{
			name:  "uuid-only images are empty slots",
			input: `{"text": "t", "image_uuids": ["u1"]}`,
			want: Row{Messages: json.RawMessage(`[{"role":"user","content":[{"type":"text","text":"t"},` +
				`{"type":"image_url","image_url":{"url":""},"uuid":"u1"}]}]`)},
		},
		{
			name:  "only empty media degrades to an empty string",
			input: `{"images": [""], "text": null}`,
			want:  Row{Messages: json.RawMessage(`[{"role":"user","content":""}]`)},
		},
		{
			name:  "a zero timestamp does not conflict with a delay",
			input: `{"text": "x", "timestamp": 0, "delay": 5}`,
			want: Row{HasText: true, Text: "x", HasTimestamp: true, HasDelay: true, DelayNS: 5000000,
				Messages: json.RawMessage(`[{"role":"user","content":"x"}]`)},
		},
	}
	for _, tt := range tests {
		got := mustRead(t, f, tt.input, Options{Type: TypeSingleTurn})
		tt.want.Source, tt.want.Line = f, 1
		compareRows(t, tt.name, got, []Row{tt.want})
	}
}

func TestSingleTurnSessions(t *testing.T) {
	t.Parallel()
	const f = "st.jsonl"
	input := `{"text": "a", "session_id": "s"}
{"text": "b"}
{"text": "c", "session_id": "s"}
`
	got := mustRead(t, f, input, Options{Type: TypeSingleTurn, StartOffsetNS: i64(5)}) // ignored: not a trace format
	want := []Row{
		// a session's entries go out as they are, without history, as the Python aiperf sends them
		{Source: f, Line: 1, Seq: 0, SessionID: "s", Turn: 0, HasText: true, Text: "a", Messages: json.RawMessage(`[{"role":"user","content":"a"}]`), ContextMode: ContextMessageArray},
		{Source: f, Line: 2, Seq: 1, HasText: true, Text: "b", Messages: json.RawMessage(`[{"role":"user","content":"b"}]`)},
		{Source: f, Line: 3, Seq: 2, SessionID: "s", Turn: 1, HasText: true, Text: "c", Messages: json.RawMessage(`[{"role":"user","content":"c"}]`), ContextMode: ContextMessageArray},
	}
	compareRows(t, "sessions", got, want)
}

func TestSingleTurnErrors(t *testing.T) {
	t.Parallel()
	const f = "st.jsonl"
	tests := []struct {
		input string
		field string
		msg   string
	}{
		{`{"text": "a", "texts": ["b"]}`, "texts", "text and texts cannot be set together"},
		{`{"image": "https://x.test/a", "images": ["https://x.test/b"], "text": "x"}`, "images", "cannot be set together"},
		{`{"role": "user"}`, "", "at least one of text"},
		{`{"text": ""}`, "", "at least one of text"},
		{`{"texts": []}`, "", "at least one of text"},
		{`{"text": "x", "timestamp": 1, "delay": 2}`, "delay", "cannot be set together"},
		{`{"text": "x", "timestamp": -1}`, "timestamp", "negative"},
		{`{"text": "x", "output_length": 0}`, "output_length", "greater than 0"},
		{`{"text": 5}`, "text", "must be a string"},
		{`{"texts": "x"}`, "texts", "must be an array"},
		{`{"texts": ["x", {"contents": ["y"]}]}`, "texts[1]", "mixes strings and objects"},
		{`{"texts": [{"contents": [1]}]}`, "texts[0].contents[0]", "must be a string"},
		{`{"text": "x", "image": "/tmp/cat.png"}`, "image", "local files are not read"},
		{`{"text": "x", "images": ["file:///tmp/cat.png"]}`, "images[0]", "scheme and host"},
		{`{"text": "x", "audio": "https://x.test/a.wav"}`, "audio", "wav,<base64>"},
		{`{"text": "x", "image": "https://x.test/a", "image_uuids": ["u"]}`, "image_uuids", "singular image"},
		{`{"text": "x", "images": ["https://x.test/a"], "image_uuids": ["u", "v"]}`, "image_uuids", "must match"},
		{`{"text": "x", "image_uuids": [""]}`, "image_uuids[0]", "must not be empty"},
		{`{"text": "x", "extra": 1}`, "extra", "must be an object"},
		{`{"text": "x", "role": 1}`, "role", "must be a string"},
		{`[1]`, "", "must be a JSON object"},
	}
	for _, tt := range tests {
		_, _, err := readString(f, tt.input, Options{Type: TypeSingleTurn})
		checkError(t, tt.input, err, f, 1, tt.field, tt.msg)
	}
}

func TestMultiTurn(t *testing.T) {
	t.Parallel()
	const f = "mt.jsonl"
	input := `{"session_id": "s-1", "turns": [{"text": "Hello", "delay": 0}, {"text": "Hi there", "delay": 1000}]}

{"turns": [{"text": "a", "session_id": "ignored"}, {"text": "b", "timestamp": 2}]}
{"session_id": "s-1", "turns": [{"text": "more"}]}
`
	got := mustRead(t, f, input, Options{Type: TypeMultiTurn})
	msg := func(s string) json.RawMessage { return json.RawMessage(`[{"role":"user","content":"` + s + `"}]`) }
	want := []Row{
		{Source: f, Line: 1, Seq: 0, SessionID: "s-1", Turn: 0, HasDelay: true, HasText: true, Text: "Hello", Messages: msg("Hello")},
		{Source: f, Line: 1, Seq: 1, SessionID: "s-1", Turn: 1, HasDelay: true, DelayNS: 1e9, HasText: true, Text: "Hi there", Messages: msg("Hi there")},
		{Source: f, Line: 3, Seq: 2, SessionID: "mt.jsonl:3", SessionGenerated: true, Turn: 0, HasText: true, Text: "a", Messages: msg("a")},
		{Source: f, Line: 3, Seq: 3, SessionID: "mt.jsonl:3", SessionGenerated: true, Turn: 1, HasTimestamp: true, TimestampNS: 2e6, HasText: true, Text: "b", Messages: msg("b")},
		{Source: f, Line: 4, Seq: 4, SessionID: "s-1", Turn: 2, HasText: true, Text: "more", Messages: msg("more")},
	}
	compareRows(t, "multi_turn", got, want)

	for _, tt := range []struct {
		input string
		field string
		msg   string
	}{
		{`{"session_id": "s"}`, "turns", "required"},
		{`{"turns": []}`, "turns", "at least one turn"},
		{`{"turns": {}}`, "turns", "must be an array"},
		{`{"turns": [{"text": "a"}, 3]}`, "turns[1]", "must be an object"},
		{`{"turns": [{"text": "a"}, {"text": "b", "texts": ["c"]}]}`, "turns[1].texts", "cannot be set together"},
		{`{"turns": [{"text": "a", "images": ["x.png"]}]}`, "turns[0].images[0]", "local files"},
		{`{"session_id": 4, "turns": [{"text": "a"}]}`, "session_id", "must be a string"},
	} {
		_, _, err := readString(f, tt.input, Options{Type: TypeMultiTurn})
		checkError(t, tt.input, err, f, 1, tt.field, tt.msg)
	}
}
