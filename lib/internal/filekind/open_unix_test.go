//go:build unix

package filekind

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenRegular: a regular file opens; a FIFO without a writer and a
// device are refused at once (the open of a FIFO waited for a writer).
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRegular(f)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	if n, err := r.Read(b); err != nil || string(b[:n]) != "x\n" {
		t.Errorf("read %q, %v", b[:n], err)
	}
	r.Close()
	fifo := filepath.Join(dir, "p")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{fifo: fifo + ": a named pipe, not a regular file", "/dev/zero": "/dev/zero: a character device, not a regular file"} {
		_, err := OpenRegular(path)
		if err == nil || err.Error() != want || !errors.Is(err, ErrNotRegular) {
			t.Errorf("OpenRegular(%s) = %v, want %q", path, err, want)
		}
	}
}
