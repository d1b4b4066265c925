package cachekey

import (
	"strings"
	"testing"
)

// A note is its key's: ParseNote refuses one of another key, one whose
// description does not hash to its key, and input names a table could not
// show.
func TestParseNote(t *testing.T) {
	desc := Domain + "\ninput=[\"file:sha256:" + strings.Repeat("ab", 32) + "\"]\n"
	k := KeyOf(desc)
	b, err := NewNote(desc, []string{"t.jsonl"}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	n, err := ParseNote(b, k)
	if err != nil || n.Explain != desc || len(n.Inputs) != 1 || n.Inputs[0] != "t.jsonl" {
		t.Fatalf("got %+v, %v", n, err)
	}
	other := KeyOf("x")
	for name, c := range map[string]struct {
		b    string
		k    Key
		want string
	}{
		"another key": {string(b), other, "of another key"},
		"forged":      {strings.Replace(string(b), "input=", "inpuT=", 1), k, "does not hash"},
		"version":     {strings.Replace(string(b), `"v":1`, `"v":2`, 1), k, "version 2"},
		"input name":  {strings.Replace(string(b), `"t.jsonl"`, `"t\u0007"`, 1), k, "control character"},
		"not json":    {"v1 x", k, "key note"},
	} {
		if _, err := ParseNote([]byte(c.b), c.k); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error mentioning %q", name, err, c.want)
		}
	}
}
