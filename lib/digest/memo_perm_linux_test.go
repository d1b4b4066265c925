package digest

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestMemoPermUnderUmask: in a shared cache root (Perm 0664) the memo file
// and its lock are group-writable whatever the umask, so that every member
// of the group can take the lock and update the memo; with a umask of 022
// the lock file used to be created 0644, and the others' Flush failed.
func TestMemoPermUnderUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	f := writeFile(t, filepath.Join(t.TempDir(), "f"), []byte("x"))
	m := OpenMemo(dir)
	m.Perm = 0o664
	h := &Hasher{Memo: m, clock: func() time.Time { return time.Now().Add(time.Hour) }}
	if _, err := h.File(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{MemoFile, MemoFile + ".lock"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o664 {
			t.Errorf("%s: mode %v, want 0664", name, got)
		}
	}
}
