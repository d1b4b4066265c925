package term

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestNotTerminals: /dev/null (a character device), a pipe, a regular file,
// a closed file and a buffer are none of them terminals.
func TestNotTerminals(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if fi, err := null.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is not a character device here (%v): the test means nothing", os.DevNull, err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	closed, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	var nilFile *os.File
	for name, v := range map[string]any{
		"/dev/null": null, "pipe reader": pr, "pipe writer": pw, "file": file,
		"closed file": closed, "nil *os.File": nilFile, "buffer": &bytes.Buffer{}, "nil": nil,
	} {
		if Is(v) {
			t.Errorf("Is(%s) = true, want false", name)
		}
	}
}
