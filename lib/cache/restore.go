package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"golang.org/x/sys/unix"
)

// RestoreOptions configures Restore.
type RestoreOptions struct {
	// Copy makes every restored file an independent, writable copy instead
	// of a hard link to the entry's (read-only) file.
	Copy bool
}

// Restored tells where a file of an entry went and how.
type Restored struct {
	Name   string // the file's name in the entry
	Path   string
	Linked bool // a hard link (else a copy)
}

// Restore puts k's entry at dest. When dest is a folder (it exists, or ends
// in a slash: it is then created), every file of the entry goes into it
// under its own name; otherwise dest becomes the entry's first file (its
// store). Each file appears at once
// and complete: it is linked or copied to a temporary name beside its
// destination, then renamed over it.
//
// A restored file is a hard link to the entry's file (O(1), no space) unless
// opt.Copy is set or the destination is on another filesystem, in which case
// it is copied (copy_file_range(2), then read and write). The hazard of a
// link: writing into the restored file in place would write into the cached
// entry too, so entry files are read-only (0444) and a link inherits that.
// Replacing the file (write a new one and rename it, as every aiperf tool
// does) is safe. Use opt.Copy for a file that will be modified in place.
//
// Either way a restored file's mtime is the time of the restore (for a link,
// the shared inode's), so make sees DEST as new: where that time cannot be
// set (another user's entry in a shared root), the file is copied.
func (c *Cache) Restore(k Key, dest string, opt RestoreOptions) ([]Restored, error) {
	h, err := c.use(k)
	if err != nil {
		return nil, err
	}
	defer h.close()
	e := h.e
	ps, err := c.prepareRestore(h.ed, e.Manifest.Files, dest, opt)
	if err != nil {
		if errors.Is(err, errVanished) {
			return nil, &noEntryError{Key: k, Path: e.Dir, gone: true}
		}
		return nil, err
	}
	return ps.commit()
}

// errVanished is wrapped when an entry's file disappeared while it was
// being restored (gc or rm removed the entry meanwhile).
var errVanished = errors.New("entry removed while it was restored")

// pending is a restore whose files wait beside their destinations under
// temporary names, complete, for commit to rename them into place.
type pending []pendingFile

type pendingFile struct {
	Restored
	tmp string
}

// prepareRestore links or copies the files of the entry folder ed to
// temporary names beside their places at dest (see Restore).
func (c *Cache) prepareRestore(ed *dir, files []File, dest string, opt RestoreOptions) (pending, error) {
	var targets []string
	fi, serr := os.Stat(dest)
	if strings.HasSuffix(dest, "/") || (serr == nil && fi.IsDir()) {
		if err := os.MkdirAll(dest, 0o777); err != nil {
			return nil, err
		}
		for _, f := range files {
			targets = append(targets, filepath.Join(dest, f.Name))
		}
	} else {
		files, targets = files[:1], []string{dest}
	}
	var ps pending
	for i, f := range files {
		p, err := c.prepareFile(ed, f, targets[i], opt.Copy)
		if err != nil {
			ps = append(ps, p) // its temporary name, if it got one
			ps.abort()
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// commit renames every file into place, in order.
func (ps pending) commit() ([]Restored, error) {
	out := make([]Restored, 0, len(ps))
	for i, p := range ps {
		err := os.Rename(p.tmp, p.Path)
		// When the target already is a link to the entry's file (a second
		// restore to one DEST), rename(2) succeeds and does nothing,
		// leaving tmp: remove it (a no-op once it was renamed).
		os.Remove(p.tmp)
		atomicfile.Release(p.tmp)
		if err != nil {
			ps[i+1:].abort()
			if errors.Is(err, fs.ErrExist) {
				return nil, fmt.Errorf("restore: %s exists and is not a file: %w", p.Path, err)
			}
			return nil, err
		}
		out = append(out, p.Restored)
	}
	return out, nil
}

// abort removes the temporary files.
func (ps pending) abort() {
	for _, p := range ps {
		if p.tmp != "" {
			os.Remove(p.tmp)
			atomicfile.Release(p.tmp)
		}
	}
}

// touchNow sets the mtime of the file at path (a link to an entry's file)
// to now, so that DEST is new to make whenever it is restored: a rule whose
// prerequisite was touched but whose key did not change must not stay out of
// date (and rerun, with everything downstream, on every make). The link
// shares its inode with the entry, whose last use is its folder's mtime, so
// the cache does not read this time. It fails for an entry of another user
// in a shared root (utimensat needs the owner, or write access the 0444 file
// does not give); restore then copies instead. Tests replace it.
var touchNow = func(path string) error {
	now := unix.Timespec{Nsec: unix.UTIME_NOW}
	omit := unix.Timespec{Nsec: unix.UTIME_OMIT}
	return unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{omit, now}, unix.AT_SYMLINK_NOFOLLOW)
}

// prepareFile puts the entry file f of ed, linked or copied, at a temporary
// name beside target. A file of the entry that is gone (the entry was
// removed meanwhile) is errVanished.
func (c *Cache) prepareFile(ed *dir, f File, target string, forceCopy bool) (pendingFile, error) {
	p := pendingFile{Restored: Restored{Name: f.Name, Path: target}}
	tdir, base := filepath.Split(target)
	if tdir == "" {
		tdir = "."
	}
	if base == "" {
		return p, fmt.Errorf("restore: destination %q names a folder", target)
	}
	p.tmp = atomicfile.TempName(filepath.Join(tdir, base))
	vanished := func(err error) error {
		if _, serr := os.Stat(tdir); serr != nil {
			return serr // DEST's folder is what is missing
		}
		return fmt.Errorf("%s: %w (%w)", ed.join(f.Name), errVanished, err)
	}
	if !forceCopy {
		// Flags 0: the entry's name itself, never a link's target.
		err := unix.Linkat(ed.fd, f.Name, unix.AT_FDCWD, p.tmp, 0)
		if err == nil && touchNow(p.tmp) != nil {
			// Another user's entry: a link would keep the build's time,
			// which make takes as out of date on every run. Copy.
			os.Remove(p.tmp)
			err = unix.EPERM
		}
		switch {
		case err == nil:
			p.Linked = true
			return p, nil
		case err == unix.ENOENT:
			return p, vanished(err)
		case err == unix.EXDEV || err == unix.EPERM || err == unix.EMLINK || err == unix.EOPNOTSUPP || err == unix.EACCES:
		default:
			return p, &os.LinkError{Op: "link", Old: ed.join(f.Name), New: p.tmp, Err: err}
		}
	}
	src, err := ed.open(f.Name, unix.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return p, vanished(err)
	}
	if err != nil {
		return p, err
	}
	defer src.Close()
	dst, err := os.OpenFile(p.tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return p, err
	}
	if err := copyFile(dst, src, c.opt.PlainCopy); err != nil {
		dst.Close()
		os.Remove(p.tmp)
		return p, err
	}
	if fi, err := dst.Stat(); err == nil && fi.Size() != f.Size {
		dst.Close()
		os.Remove(p.tmp)
		return p, fmt.Errorf("restore: copied %d bytes of %s, want %d", fi.Size(), f.Name, f.Size)
	}
	// No fsync: DEST is the user's file, not the cache's, and a copy of an
	// entry that stays in the cache; like cp, restore leaves writeback to
	// the kernel. The rename makes DEST appear complete to every reader.
	if err := dst.Close(); err != nil {
		os.Remove(p.tmp)
		return p, err
	}
	return p, nil
}
