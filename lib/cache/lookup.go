package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Entry is a complete entry found in the cache.
type Entry struct {
	Key      Key
	Dir      string // the entry's folder
	Manifest *Manifest
	LastUsed time.Time // the folder's mtime
}

// Path returns the path of the entry's first file (its store).
func (e *Entry) Path() string { return filepath.Join(e.Dir, e.Manifest.Files[0].Name) }

// Size returns the total size of the entry's files.
func (e *Entry) Size() int64 { return e.Manifest.Size() }

// Lookup returns the entry for k, or an error wrapping ErrMiss when there is
// none or it is incomplete, unparseable, of another version or has a file of
// the wrong size. It reads the manifest and stats each file: O(1) in the
// size of the files. A hit older than an hour gets its last-use time
// refreshed.
func (c *Cache) Lookup(k Key) (*Entry, error) {
	h, err := c.use(k)
	if err != nil {
		return nil, err
	}
	defer h.close()
	return h.e, nil
}

// noEntryError is the miss of a key that has no entry folder at all (a
// damaged one is a BadEntryError).
type noEntryError struct {
	Key  Key
	Path string
	gone bool // it was there, and was removed while it was read
}

func (e *noEntryError) Error() string {
	if e.gone {
		return fmt.Sprintf("the entry for %s (%s) was removed while it was restored", e.Key, e.Path)
	}
	return fmt.Sprintf("no entry for %s (%s)", e.Key, e.Path)
}

func (e *noEntryError) Is(target error) bool { return target == ErrMiss }

// found is an entry that passed Lookup's checks, with its folders open.
type found struct {
	sh, ed *dir
	e      *Entry
}

func (h *found) close() {
	h.ed.close()
	h.sh.close()
}

// use is find for a read that uses the entry (Lookup, Restore, Export): it
// also refreshes the entry's last-use time (its folder's mtime), at most
// once every refreshAfter so that hits stay reads. A refresh that fails
// (another user's entry in a shared root) leaves the old time, which only
// makes the entry older to trim.
func (c *Cache) use(k Key) (*found, error) {
	h, err := c.find(k)
	if err != nil {
		return nil, err
	}
	if now := c.now(); now.Sub(h.e.LastUsed) > refreshAfter {
		if h.sh.touch(k.name(), now) == nil {
			h.e.LastUsed = now
		}
	}
	return h, nil
}

// find opens k's shard and entry folder and checks the entry. The caller
// closes the result.
func (c *Cache) find(k Key) (*found, error) {
	sh, err := c.ents.sub(k.shard())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &noEntryError{Key: k, Path: filepath.Join(c.ents.join(k.shard()), k.name())}
		}
		return nil, &BadEntryError{Key: k, Path: c.ents.join(k.shard()), Reason: err}
	}
	ed, e, err := c.check(sh, k.name(), k)
	if err != nil {
		sh.close()
		return nil, err
	}
	return &found{sh: sh, ed: ed, e: e}, nil
}

// check opens the entry folder name inside shard sh and validates it
// against key k. On success the caller closes the folder.
func (c *Cache) check(sh *dir, name string, k Key) (*dir, *Entry, error) {
	ed, err := sh.sub(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, &noEntryError{Key: k, Path: sh.join(name)}
		}
		return nil, nil, &BadEntryError{Key: k, Path: sh.join(name), Reason: err}
	}
	e, err := c.checkDir(ed, k)
	if err != nil {
		ed.close()
		return nil, nil, err
	}
	return ed, e, nil
}

func (c *Cache) checkDir(ed *dir, k Key) (*Entry, error) {
	bad := func(format string, args ...any) error {
		return &BadEntryError{Key: k, Path: ed.path, Reason: fmt.Errorf(format, args...)}
	}
	st, err := ed.stat()
	if err != nil {
		return nil, bad("%w", err)
	}
	if err := c.owned(ed.path, &st); err != nil {
		return nil, bad("%w", err)
	}
	if mst, err := ed.lstat(manifestName); err == nil {
		if err := c.owned(ed.join(manifestName), &mst); err != nil {
			return nil, bad("%w", err)
		}
	}
	b, err := readSmall(ed, manifestName, maxManifestSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, bad("no manifest (incomplete entry)")
		}
		return nil, bad("%w", err)
	}
	m, err := ParseManifest(b)
	if err != nil {
		return nil, bad("%w", err)
	}
	if m.Key != k.String() {
		return nil, bad("manifest is for key %s", m.Key)
	}
	for _, f := range m.Files {
		fst, err := ed.lstat(f.Name)
		if err != nil {
			return nil, bad("%s: %w", f.Name, unwrapPath(err))
		}
		if !isReg(&fst) {
			return nil, bad("%s is %s, not a regular file", f.Name, fileType(&fst))
		}
		if fst.Size != f.Size {
			return nil, bad("%s is %d bytes, the manifest says %d", f.Name, fst.Size, f.Size)
		}
		if err := c.owned(ed.join(f.Name), &fst); err != nil {
			return nil, bad("%w", err)
		}
	}
	return &Entry{Key: k, Dir: ed.path, Manifest: m, LastUsed: mtime(&st)}, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if pe.Err == unix.ENOENT {
			return errors.New("missing")
		}
		return pe.Err
	}
	return err
}
