// Package atomicfile writes files that appear complete or not at all: data goes
// to a temporary file in the destination's directory, is synced, and is renamed
// over the destination (the shape of Go's cmd/go/internal/renameio).
package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// File is a temporary file that becomes Name on Commit. It must be either
// committed or aborted; Abort after Commit is a no-op, so `defer f.Abort()`
// is the idiom.
type File struct {
	*os.File
	name string
	done bool
}

// Create starts writing name. The temporary file is named ".<base>.tmp-*" in
// the same directory so that the final rename stays on one filesystem.
func Create(name string) (*File, error) {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &File{File: f, name: name}, nil
}

// Name returns the final path of the file (not the temporary one).
func (f *File) Name() string { return f.name }

// TempName returns the path of the temporary file.
func (f *File) TempName() string { return f.File.Name() }

// Commit syncs, closes and renames the temporary file to its final name, then
// syncs the directory so the rename survives a crash.
func (f *File) Commit() error {
	if f.done {
		return errors.New("atomicfile: commit after commit or abort")
	}
	f.done = true
	tmp := f.File.Name()
	if err := f.File.Sync(); err != nil {
		f.File.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.File.Chmod(0o644); err != nil {
		f.File.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.File.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, f.name); err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(f.name))
	return nil
}

// Abort closes and removes the temporary file. It is safe to call more than once.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.File.Name())
}

// WriteFile writes the bytes read from r to name atomically.
func WriteFile(name string, r io.Reader) error {
	f, err := Create(name)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := io.Copy(f, r); err != nil {
		return err
	}
	return f.Commit()
}

func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	d.Sync() // best effort: some filesystems refuse fsync on directories
	d.Close()
}
