package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/cachedir"
	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"golang.org/x/sys/unix"
)

// LayoutVersion is the version of the root's layout, kept in its "version"
// file. A root with a newer version is refused: an older aiperf-cache must
// not trim, repair or publish into a layout it does not know.
const LayoutVersion = 1

const versionName = "version"

// Folders inside the root.
const (
	entriesName    = "entries"
	locksName      = "locks"
	tmpName        = "tmp"
	quarantineName = "quarantine"
)

// refreshAfter is how stale an entry's last-use time may get before a hit
// refreshes it: Go's build cache uses an hour too, which keeps hits from
// writing to the disk while keeping LRU order accurate enough for trimming.
const refreshAfter = time.Hour

// trimTarget is the fraction of the size cap a trim stops at (ccache's
// limit_multiple), so that a cache at its cap does not trim on every populate.
const trimTarget = 0.8

// ErrMiss is returned (or wrapped) when the cache holds no usable entry for a key.
var ErrMiss = errors.New("cache: miss")

// ErrNewerLayout is wrapped when the root was made by a newer aiperf-cache.
var ErrNewerLayout = errors.New("cache: newer layout")

// BadEntryError reports an entry folder that exists but cannot be used
// (damaged, incomplete, of another version). It counts as a miss.
type BadEntryError struct {
	Key    Key
	Path   string
	Reason error
}

func (e *BadEntryError) Error() string {
	return fmt.Sprintf("entry %s (%s): %v", e.Key, e.Path, e.Reason)
}

func (e *BadEntryError) Unwrap() []error { return []error{ErrMiss, e.Reason} }

// Options configures Open.
type Options struct {
	// Shared makes a new root a team cache: group-writable folders with the
	// setgid bit, group-readable files. On an existing root it says to trust
	// the group: a root or an entry of another user is refused unless the
	// root is shared, Shared is set and the file's group is the root's and
	// the caller's (see cachedir.CheckOwner); a private root is refused.
	Shared bool
	// Tool names the program and version recorded in manifests.
	Tool string
	// Now and Sleep replace the clock (for tests); nil means the real one.
	Now   func() time.Time
	Sleep func(context.Context, time.Duration) error
	// LockFile makes key locks use lock files carrying host, pid and time
	// instead of flock(2), as they do on filesystems without flock.
	LockFile bool
	// PlainCopy makes every copy a read/write loop, skipping copy_file_range
	// (for tests of the last-resort path).
	PlainCopy bool
}

// Cache is an open cache root. Every operation is safe for many processes
// (on one or more machines sharing the folder) at once: entries appear by
// one rename of a complete folder, so a reader sees a whole entry or none.
// A Cache is safe for use by one goroutine at a time.
type Cache struct {
	root   string
	dir    *dir
	ents   *dir
	locks  *dir
	tmp    *dir
	quar   *dir
	shared bool
	trust  bool // --shared on a shared root: trust the files of the root's group
	gid    int  // the root's group
	cfg    Config
	opt    Options
	host   string
}

// Open opens the cache root (creating it and its folders if needed) and
// checks its layout version.
func Open(root string, opt Options) (*Cache, error) {
	shared, err := cachedir.Create(root, opt.Shared)
	if err != nil {
		return nil, err
	}
	d, err := openRootDir(root)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	c := &Cache{root: root, dir: d, shared: shared, trust: shared && opt.Shared, opt: opt}
	if st, err := d.stat(); err == nil {
		c.gid = int(st.Gid)
	}
	if c.opt.Now == nil {
		c.opt.Now = time.Now
	}
	if c.opt.Sleep == nil {
		c.opt.Sleep = sleep
	}
	if c.opt.Tool == "" {
		c.opt.Tool = "aiperf-cache"
	}
	c.host, _ = os.Hostname()
	if err := c.open(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Cache) open() error {
	if err := c.checkVersion(); err != nil {
		return err
	}
	b, err := readSmall(c.dir, configName, 64<<10)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("cache: %w", err)
	default:
		if c.cfg, err = ParseConfig(c.dir.join(configName), b); err != nil {
			return fmt.Errorf("cache: %w", err)
		}
	}
	for _, s := range []struct {
		name string
		d    **dir
	}{{entriesName, &c.ents}, {locksName, &c.locks}, {tmpName, &c.tmp}, {quarantineName, &c.quar}} {
		if *s.d, err = c.dir.mkSub(s.name, cachedir.DirMode(c.shared)); err != nil {
			return fmt.Errorf("cache: %w", err)
		}
	}
	return nil
}

func (c *Cache) checkVersion() error {
	b, err := readSmall(c.dir, versionName, 64)
	if errors.Is(err, fs.ErrNotExist) {
		err := c.writeFile(c.dir, versionName, []byte(strconv.Itoa(LayoutVersion)+"\n"), c.fileMode(false))
		if err == nil || errors.Is(err, fs.ErrExist) {
			return c.checkVersion()
		}
		return fmt.Errorf("cache: %w", err)
	}
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	switch {
	case err != nil || v < 1:
		return fmt.Errorf("cache: %s holds %q, not a layout version", c.dir.join(versionName), strings.TrimSpace(string(b)))
	case v > LayoutVersion:
		return fmt.Errorf("%w: %s has layout version %d, this aiperf-cache knows %d: use a newer aiperf-cache or another --dir",
			ErrNewerLayout, c.root, v, LayoutVersion)
	}
	return nil
}

// Close releases the open folders.
func (c *Cache) Close() error {
	for _, d := range []*dir{c.ents, c.locks, c.tmp, c.quar, c.dir} {
		d.close()
	}
	return nil
}

// Root returns the root folder.
func (c *Cache) Root() string { return c.root }

// Shared reports whether the root is a team cache.
func (c *Cache) Shared() bool { return c.shared }

// Config returns the root's settings.
func (c *Cache) Config() Config { return c.cfg }

func (c *Cache) now() time.Time { return c.opt.Now() }

// fileMode is the mode of a file the cache writes: read-only ones (entry
// files, manifests) are 0444 in either kind of root, so that a hard link
// handed out by restore cannot be written through by accident.
func (c *Cache) fileMode(writable bool) fs.FileMode {
	m := cachedir.FileMode(c.shared)
	if !writable {
		m &^= 0o222
		m |= 0o444
	}
	return m
}

// owned checks that st, of path inside the root, is the caller's, or the
// root's group's when that group is trusted (see Options.Shared).
func (c *Cache) owned(path string, st *unix.Stat_t) error {
	return cachedir.CheckOwner(path, st.Uid, st.Gid, c.trust, c.gid)
}

// readSmall reads the regular file name inside d, at most max bytes.
func readSmall(d *dir, name string, max int64) ([]byte, error) {
	f, err := d.open(name, unix.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", f.Name())
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is %d bytes, more than %d", f.Name(), fi.Size(), max)
	}
	return io.ReadAll(io.LimitReader(f, max+1))
}

// writeFile writes data to name inside d through a temporary file, fsync
// and a rename, unless name exists (fs.ErrExist).
func (c *Cache) writeFile(d *dir, name string, data []byte, mode fs.FileMode) error {
	path := atomicfile.TempName(d.join(name))
	defer atomicfile.Release(path)
	tmp := filepath.Base(path)
	f, err := d.create(tmp, mode)
	if err != nil {
		return err
	}
	defer d.unlink(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// link(2) rather than rename(2): it fails if name appeared meanwhile.
	if err := unix.Linkat(d.fd, tmp, d.fd, name, 0); err != nil {
		if err == unix.EEXIST {
			return fs.ErrExist
		}
		return &os.LinkError{Op: "link", Old: d.join(tmp), New: d.join(name), Err: err}
	}
	return d.sync()
}

func randName() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
