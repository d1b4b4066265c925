package filekind

import (
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		m    fs.FileMode
		want string
	}{
		{0o644, "a regular file"},
		{fs.ModeDir | 0o755, "a directory"},
		{fs.ModeSymlink | 0o777, "a symbolic link"},
		{fs.ModeNamedPipe | 0o600, "a named pipe"},
		{fs.ModeSocket, "a socket"},
		{fs.ModeDevice | fs.ModeCharDevice, "a character device"},
		{fs.ModeDevice, "a block device"},
		{fs.ModeIrregular, "an irregular file"},
	} {
		if got := Of(c.m); got != c.want {
			t.Errorf("Of(%v) = %q, want %q", c.m, got, c.want)
		}
	}
}

// TestOfRealFiles names what the file system reports for real files.
func TestOfRealFiles(t *testing.T) {
	dir := t.TempDir()
	check := func(path, want string) {
		t.Helper()
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := Of(fi.Mode()); got != want {
			t.Errorf("Of(%s) = %q, want %q", path, got, want)
		}
	}
	check(dir, "a directory")
	check(os.DevNull, "a character device")
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	check(f, "a regular file")
	if err := os.Symlink(f, filepath.Join(dir, "l")); err == nil {
		check(filepath.Join(dir, "l"), "a symbolic link")
	}
	if l, err := net.Listen("unix", filepath.Join(dir, "s")); err == nil {
		defer l.Close()
		check(filepath.Join(dir, "s"), "a socket")
	}
}
