package trace

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestInvalidUTF8 pins what the decoders inherited from encoding/json:
// invalid UTF-8 inside strings is accepted, verbatim values keep it, and
// decoded strings with escapes get U+FFFD for each bad byte.
func TestInvalidUTF8(t *testing.T) {
	t.Parallel()
	in := "{\"text_input\": \"a\xffb\", \"session_id\": \"s\\n\xfe\xfe\", \"extra\": {\"k\xc3\": \"\xed\xa0\x80\"}}\n" +
		"{\"payload\": {\"prompt\": \"\xff\"}}\n"
	rows := mustRead(t, "u.jsonl", in, Options{Type: TypeMooncake})
	if len(rows) != 2 {
		t.Fatalf("got %d rows", len(rows))
	}
	var sid string
	if err := json.Unmarshal([]byte("\"s\\n\xfe\xfe\""), &sid); err != nil {
		t.Fatal(err)
	}
	if r := rows[0]; r.Text != "a\xffb" || r.SessionID != sid || sid != "s\n\ufffd\ufffd" || string(r.Extra) != "{\"k\xc3\": \"\xed\xa0\x80\"}" {
		t.Errorf("row 1 = %s", fmtRow(r))
	}
	if r := rows[1]; string(r.Payload) != "{\"prompt\": \"\xff\"}" {
		t.Errorf("row 2 = %s", fmtRow(r))
	}
	if typ, err := Detect([]byte("{\"text\": \"\xff\"}")); err != nil || typ != TypeSingleTurn {
		t.Errorf("Detect = %q, %v", typ, err)
	}
	// A control character is still an error, with encoding/json's message.
	_, _, err := readString("u.jsonl", "{\"text_input\": \"\x01\xff\"}", Options{Type: TypeMooncake})
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
