package trace

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestInvalidUnicode: a record whose text is not valid UTF-8, or holds half
// of a UTF-16 surrogate pair as an escape, is an error at file:line naming
// the JSON path of the value, in every format: verbatim values would carry
// the bytes to a server that refuses them, and decoded ones would turn them
// into U+FFFD silently.
func TestInvalidUnicode(t *testing.T) {
	t.Parallel()
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	sm := func(body string) string {
		return `{"captureData": {"endpointInput": {"data": "` + b64(body) + `", "encoding": "BASE64"}}, "eventMetadata": {"eventId": "e1", "inferenceTime": "2026-01-01T00:00:00Z"}}`
	}
	tests := []struct {
		name, typ, input string
		line             int64
		field            string
		msg              []string
	}{
		{"mooncake messages", TypeMooncake, "{\"timestamp\":1,\"messages\":[{\"role\":\"user\",\"content\":\"\xc3\x28\"}]}\n", 1, "messages[0].content", []string{"invalid UTF-8 (byte 0xc3) at byte offset 53"}},
		{"mooncake payload", TypeMooncake, "{\"input_length\": 1}\n{\"payload\": {\"prompt\": \"ok \xff\"}}\n", 2, "payload.prompt", []string{"invalid UTF-8 (byte 0xff)"}},
		{"mooncake extra key", TypeMooncake, "{\"input_length\": 1, \"extra\": {\"k\xc3\": 1}}", 1, "extra.k\ufffd", []string{"in a key"}},
		{"mooncake text_input", TypeMooncake, "{\"text_input\": \"a\xffb\"}", 1, "text_input", []string{"invalid UTF-8 (byte 0xff)"}},
		{"mooncake session_id", TypeMooncake, "{\"input_length\": 3, \"session_id\": \"s\\n\xfe\"}", 1, "session_id", nil},
		{"encoded surrogate bytes", TypeMooncake, "{\"input_length\": 1, \"extra\": {\"k\": \"\xed\xa0\x80\"}}", 1, "extra.k", []string{"byte 0xed"}},
		{"lone high surrogate", TypeMooncake, `{"messages": [{"role": "user", "content": "x\ud800y"}]}`, 1, "messages[0].content", []string{`lone surrogate escape \ud800`, "byte offset 44"}},
		{"lone low surrogate", TypeMooncake, `{"payload": {"prompt": "\udc00"}}`, 1, "payload.prompt", []string{`\udc00`}},
		{"reversed pair", TypeMooncake, `{"text_input": "\ude00\ud83d"}`, 1, "text_input", []string{`\ude00`}},
		{"raw payload", TypeRawPayload, "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}\n{\"messages\": [\"\xff\"]}", 2, "messages[0]", nil},
		{"raw payload surrogate", TypeRawPayload, `{"messages": [{"role": "user", "content": "\ud83d"}]}`, 1, "messages[0].content", []string{"lone surrogate"}},
		{"single_turn text", TypeSingleTurn, "{\"text\": \"\xff\"}", 1, "text", nil},
		{"single_turn role", TypeSingleTurn, "{\"text\": \"hi\", \"role\": \"u\xc0\xafser\"}", 1, "role", []string{"byte 0xc0"}},
		{"multi_turn", TypeMultiTurn, "{\"session_id\": \"a\", \"turns\": [{\"text\": \"ok\"}, {\"text\": \"\xf8\"}]}", 1, "turns[1].text", nil},
		{"bailian", TypeBailian, "{\"chat_id\": 1, \"timestamp\": 1, \"input_length\": 1, \"output_length\": 1, \"type\": \"t\xffxt\"}", 1, "type", nil},
		{"sagemaker body", TypeSageMaker, sm("{\"messages\": [{\"role\": \"user\", \"content\": \"\xc3\x28\"}]}"), 1, "captureData.endpointInput.data",
			[]string{"e1", "the decoded body at messages[0].content: invalid UTF-8 (byte 0xc3)"}},
		{"sagemaker body surrogate", TypeSageMaker, sm(`{"messages": [{"role": "user", "content": "\udbff"}]}`), 1, "captureData.endpointInput.data", []string{"lone surrogate"}},
		{"sagemaker line", TypeSageMaker, "{\"captureData\": {}, \"eventMetadata\": {\"eventId\": \"\xff\"}}", 1, "eventMetadata.eventId", nil},
		{"inputs_json", TypeInputsJSON, "{\"data\": [{\"session_id\": \"a\",\n \"payloads\": [{\"x\": 1},\n {\"prompt\": \"\xff\"}]}]}", 3, "data[0].payloads[1].prompt", nil},
		{"burst cell", TypeBurstGPT, "Timestamp,Model,Request tokens,Response tokens\n1,ok,2,3\n2,GPT\xff,2,3\n", 3, `"Model"`, []string{"byte 0xff"}},
		{"burst header", TypeBurstGPT, "Timestamp,M\xffodel,Request tokens,Response tokens\n1,ok,2,3\n", 1, "column 2", nil},
	}
	for _, tt := range tests {
		_, _, err := readString("u.jsonl", tt.input, Options{Type: tt.typ})
		checkError(t, tt.name, err, "u.jsonl", tt.line, tt.field, tt.msg...)
	}
	// Valid pairs, escaped or not, and U+FFFD itself are fine.
	rows := mustRead(t, "u.jsonl", `{"text_input": "\ud83d\ude00 \ufffd `+"\xef\xbf\xbd \xf0\x9f\x98\x80"+`"}`, Options{Type: TypeMooncake})
	if want := "\U0001F600 \ufffd \ufffd \U0001F600"; rows[0].Text != want {
		t.Errorf("text = %q, want %q", rows[0].Text, want)
	}
	// Detection still reads a first line that is not valid UTF-8; the
	// decoder then names the field.
	if typ, err := Detect([]byte("{\"text\": \"\xff\"}")); err != nil || typ != TypeSingleTurn {
		t.Errorf("Detect = %q, %v", typ, err)
	}
	_, _, err := readString("u.jsonl", "{\"timestamp\":1,\"messages\":[{\"role\":\"user\",\"content\":\"\xc3\x28\"}]}\n", Options{})
	checkError(t, "detected", err, "u.jsonl", 1, "messages[0].content", "invalid UTF-8")
	// A control character is still an error, with encoding/json's message.
	_, _, err = readString("u.jsonl", "{\"text_input\": \"\x01\xff\"}", Options{Type: TypeMooncake})
	checkError(t, "control character", err, "u.jsonl", 1, "", "invalid JSON: invalid character '\\x01' in string literal")
}

func TestMembersElements(t *testing.T) {
	t.Parallel()
	doc := []byte(` {"a\u0062": [ 1, "x" ,{}], "c": null, "ab": 2 } `)
	var got []string
	err := members(doc, func(k string, v []byte, off int) error {
		if string(doc[off:off+len(v)]) != string(v) {
			t.Errorf("member %s: offset %d does not point at %s", k, off, v)
		}
		got = append(got, k+"="+string(v))
		return nil
	})
	if err != nil || strings.Join(got, ";") != `ab=[ 1, "x" ,{}];c=null;ab=2` {
		t.Errorf("members = %q, %v", got, err)
	}
	if v := member(doc, "ab"); string(v) != "2" {
		t.Errorf("member(ab) = %s, want the last one", v)
	}
	arr := member(doc, "c")
	if !isNull(arr) || hasMember(doc, "b") || !hasMember(doc, "c") {
		t.Errorf("member(c) = %s", arr)
	}
	got = got[:0]
	arr = []byte(`[ 1, "x" ,{}]`)
	err = elements(arr, func(i int, v []byte, off int) error {
		got = append(got, string(arr[off:off+len(v)]))
		return nil
	})
	if err != nil || strings.Join(got, ";") != `1;"x";{}` {
		t.Errorf("elements = %q, %v", got, err)
	}
}
