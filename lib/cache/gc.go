package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Info is one folder found in entries/: a complete entry, or a bad one.
type Info struct {
	Key      Key    // zero for a folder whose name is no key
	Shard    string // the shard folder it is in
	Name     string // the folder's name, inside its shard
	Dir      string
	Manifest *Manifest // nil when Err is set
	Err      error     // why the entry cannot be used, or nil
	Size     int64     // bytes on disk (the manifest's sizes for a good entry)
	LastUsed time.Time
}

// List walks entries/ and reports every entry folder, sorted by key (bad
// folders last). Only entries/ is read: memo/ and the other folders of
// the root are not entries.
func (c *Cache) List() ([]Info, error) {
	shards, err := c.ents.names()
	if err != nil {
		return nil, err
	}
	slices.Sort(shards)
	var out []Info
	for _, s := range shards {
		if !isShardName(s) {
			continue // not ours; left alone
		}
		sh, err := c.ents.sub(s)
		if err != nil {
			continue // a link or worse where a shard should be: not ours
		}
		names, err := sh.names()
		if err != nil {
			sh.close()
			return nil, err
		}
		slices.Sort(names)
		for _, n := range names {
			out = append(out, c.info(sh, s, n))
		}
		sh.close()
	}
	slices.SortStableFunc(out, func(a, b Info) int {
		if (a.Err == nil) != (b.Err == nil) {
			if a.Err == nil {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key.String(), b.Key.String())
	})
	return out, nil
}

func isShardName(s string) bool {
	return len(s) == 2 && isHexByte(s[0]) && isHexByte(s[1])
}

func isHexByte(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

func (c *Cache) info(sh *dir, shard, name string) Info {
	in := Info{Shard: shard, Name: name, Dir: sh.join(name)}
	st, err := sh.lstat(name)
	if err == nil {
		in.LastUsed = mtime(&st)
	}
	k, ok := keyFromName(name)
	if !ok || k.shard() != shard {
		in.Err = fmt.Errorf("%s: not an entry folder name", in.Dir)
		in.Size = diskUsage(sh, name)
		return in
	}
	in.Key = k
	ed, e, err := c.check(sh, name, k)
	if err != nil {
		in.Err = err
		in.Size = diskUsage(sh, name)
		return in
	}
	ed.close()
	in.Manifest, in.Size, in.LastUsed = e.Manifest, e.Size(), e.LastUsed
	return in
}

// diskUsage adds up the sizes of the regular files in the folder name
// inside d, one level deep (entries have no subfolders), never following links.
func diskUsage(d *dir, name string) int64 {
	st, err := d.lstat(name)
	if err != nil {
		return 0
	}
	if !isDir(&st) {
		return st.Size
	}
	sub, err := d.sub(name)
	if err != nil {
		return 0
	}
	defer sub.close()
	names, _ := sub.names()
	var n int64
	for _, f := range names {
		if st, err := sub.lstat(f); err == nil && isReg(&st) {
			n += st.Size
		}
	}
	return n
}

// TrimOptions configures Trim.
type TrimOptions struct {
	MaxSize int64         // trim to TrimTarget of it when the total exceeds it; 0: no cap
	MaxAge  time.Duration // remove entries unused for longer; 0: no cap
	DryRun  bool          // report, remove nothing
	Keep    Key           // never remove this key (the entry just published)
}

// TrimResult reports what Trim removed and what is left.
type TrimResult struct {
	Removed   []Info
	Freed     int64
	Kept      int
	KeptSize  int64
	Garbage   int   // abandoned staging folders and idle lock files removed
	GarbageSz int64 // their bytes
}

// Trim removes entries unused for longer than MaxAge, then, if the total
// size exceeds MaxSize, the least recently used ones until the total is at
// most 80% of it (ccache's rule: a full cache does not trim on every
// populate). It never touches an entry being built: those live in tmp/
// until complete. Staging folders whose builder died are removed too. What
// it fails to remove is reported by a *TrimError, with the result.
func (c *Cache) Trim(opt TrimOptions) (TrimResult, error) {
	var res TrimResult
	var errs []error
	all, err := c.List()
	if err != nil {
		return res, err
	}
	slices.SortStableFunc(all, func(a, b Info) int { return a.LastUsed.Compare(b.LastUsed) })
	var total int64
	for _, in := range all {
		total += in.Size
	}
	now := c.now()
	target := int64(float64(opt.MaxSize) * trimTarget)
	overCap := opt.MaxSize > 0 && total > opt.MaxSize
	for _, in := range all {
		keep := !in.Key.IsZero() && in.Key == opt.Keep
		old := opt.MaxAge > 0 && now.Sub(in.LastUsed) > opt.MaxAge
		big := overCap && total > target
		if keep || !(old || big) {
			res.Kept++
			res.KeptSize += in.Size
			continue
		}
		if !opt.DryRun {
			release, busy := c.holdKey(in.Key)
			if busy {
				res.Kept++
				res.KeptSize += in.Size
				continue
			}
			moved, err := c.removeEntry(in)
			release()
			if err != nil {
				errs = append(errs, err)
			}
			if !moved {
				res.Kept++
				res.KeptSize += in.Size
				continue
			}
		}
		total -= in.Size
		res.Removed = append(res.Removed, in)
		res.Freed += in.Size
	}
	if !opt.DryRun {
		n, sz, gerr := c.collectGarbage()
		res.Garbage, res.GarbageSz = n, sz
		errs = append(errs, gerr...)
	}
	if len(errs) > 0 {
		return res, &TrimError{Errs: errs}
	}
	return res, nil
}

// TrimError reports what Trim could not remove (a read-only root, a folder
// without write permission); the TrimResult returned with it is still true.
type TrimError struct{ Errs []error }

func (e *TrimError) Error() string {
	return fmt.Sprintf("cache: could not remove %d thing(s): %v", len(e.Errs), errors.Join(e.Errs...))
}

func (e *TrimError) Unwrap() []error { return e.Errs }

// removeEntry removes the entry folder in describes. moved reports whether
// it left entries/ (the entry is gone, even if deleting its files failed).
func (c *Cache) removeEntry(in Info) (moved bool, err error) {
	sh, err := c.ents.sub(in.Shard)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil // removed meanwhile
	}
	if err != nil {
		return false, err
	}
	defer sh.close()
	trash := "rm-" + randName()
	if err := sh.rename(in.Name, c.tmp, trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
		return false, err
	}
	return true, c.tmp.removeTree(trash)
}

// holdKey takes k's lock without waiting, for a removal: busy when someone
// holds it (an ensure between the build and the restore of DEST, which must
// not lose its entry). A key without a lock file is free; so is every key
// where flock does not work, but for a lock file of lock-file mode, which
// keeps its entry until it is released or broken. release is never nil.
func (c *Cache) holdKey(k Key) (release func(), busy bool) {
	nothing := func() {}
	if k.IsZero() {
		return nothing, false // a bad folder: no key, no lock
	}
	sh, err := c.locks.sub(k.shard())
	if err != nil {
		return nothing, false
	}
	if _, err := sh.lstat(k.name() + ".held"); err == nil {
		sh.close()
		return nothing, true
	}
	f, err := sh.open(k.name(), unix.O_RDONLY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotRegular):
		// No lock file, or something nobody can lock (Lock refuses it).
		sh.close()
		return nothing, false
	case err != nil:
		sh.close()
		return nothing, true
	}
	ok, err := tryLock(f)
	switch {
	case err != nil && noFlock(err):
		f.Close()
		sh.close()
		return nothing, false
	case err != nil || !ok || !c.sameFile(f, sh, k.name()):
		unlockFile(f)
		sh.close()
		return nothing, true
	}
	return func() { unlockFile(f); sh.close() }, false
}

// AutoTrim applies the root's size cap, if its config sets one, keeping k.
func (c *Cache) AutoTrim(k Key) (TrimResult, error) {
	if c.cfg.MaxSize <= 0 {
		return TrimResult{}, nil
	}
	return c.Trim(TrimOptions{MaxSize: c.cfg.MaxSize, Keep: k})
}

// staleStaging is how old a staging folder must be before gc removes it on
// a filesystem where its lock cannot tell whether its builder is alive.
const staleStaging = 24 * time.Hour

// collectGarbage removes staging folders whose builders are gone (their
// lock is free, or missing), leftover removals (tmp/rm-*), and lock files
// nobody holds. It returns how many it removed and their bytes.
func (c *Cache) collectGarbage() (n int, size int64, errs []error) {
	names, err := c.tmp.names()
	if err != nil {
		return 0, 0, []error{err}
	}
	have := make(map[string]bool, len(names))
	for _, nm := range names {
		have[nm] = true
	}
	for _, nm := range names {
		if strings.HasSuffix(nm, ".lock") {
			continue
		}
		st, err := c.tmp.lstat(nm)
		if err != nil {
			continue
		}
		// Look for the lock now, not in the listing: a listing made while
		// a builder starts can hold its folder and miss its lock (made
		// first). A builder makes its lock before its folder and removes
		// it after the folder is published or gone, so a folder seen
		// before its lock was found missing is abandoned, or was renamed
		// away meanwhile (and then nothing of it is left here to remove).
		var lk *os.File
		_, lerr := c.tmp.lstat(nm + ".lock")
		locked := lerr == nil
		if locked {
			var busy bool
			lk, busy = c.tryIdle(c.tmp, nm+".lock", &st)
			if busy {
				continue
			}
		}
		sz := diskUsage(c.tmp, nm)
		if err := c.tmp.removeTree(nm); err != nil {
			errs = append(errs, err)
		} else {
			n++
			size += sz
		}
		if locked {
			c.tmp.unlink(nm + ".lock")
		}
		unlockFile(lk)
	}
	// Lock files of staging folders that are gone.
	for _, nm := range names {
		base, ok := strings.CutSuffix(nm, ".lock")
		if !ok || have[base] {
			continue
		}
		if _, err := c.tmp.lstat(base); err == nil {
			continue // its folder appeared since the listing
		}
		st, err := c.tmp.lstat(nm)
		if err != nil {
			continue
		}
		if lk, busy := c.tryIdle(c.tmp, nm, &st); !busy {
			errs = appendGone(errs, c.tmp.unlink(nm))
			unlockFile(lk)
		}
	}
	// Key lock files nobody holds.
	shards, _ := c.locks.names()
	for _, s := range shards {
		if !isShardName(s) {
			continue
		}
		sh, err := c.locks.sub(s)
		if err != nil {
			continue
		}
		lnames, _ := sh.names()
		for _, nm := range lnames {
			if strings.Contains(nm, ".held") {
				continue // lock files of lock-file mode go when released or broken
			}
			if lk, busy := c.tryIdle(sh, nm, nil); !busy {
				errs = appendGone(errs, sh.unlink(nm))
				unlockFile(lk)
			}
		}
		sh.close()
	}
	return n, size, errs
}

// appendGone appends err unless it is nil or says the name is gone.
func appendGone(errs []error, err error) []error {
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return errs
	}
	return append(errs, err)
}

// tryIdle reports whether the lock file name inside d is held. When it is
// not, and flock works here, it returns the lock, still held, so that the
// caller can remove the file before anyone else takes it. Where flock does
// not work, a lock is taken as idle when what it guards (st) is older than
// staleStaging (a key's lock, st nil, never is). Something other than a
// regular file in a lock file's place holds no lock: it is idle, and
// returned as nil.
func (c *Cache) tryIdle(d *dir, name string, st *unix.Stat_t) (*os.File, bool) {
	f, err := d.open(name, unix.O_RDONLY, 0)
	switch {
	case errors.Is(err, errNotRegular):
		return nil, false
	case err != nil:
		return nil, true
	}
	ok, err := tryLock(f)
	switch {
	case err != nil && noFlock(err):
		f.Close()
		return nil, st == nil || c.now().Sub(mtime(st)) < staleStaging
	case err != nil || !ok:
		f.Close()
		return nil, true
	case !c.sameFile(f, d, name):
		unlockFile(f)
		return nil, true
	}
	return f, false
}

// Remove deletes k's entry, good or bad. It returns ErrMiss when there is none.
func (c *Cache) Remove(k Key) error {
	sh, err := c.ents.sub(k.shard())
	if errors.Is(err, fs.ErrNotExist) {
		return ErrMiss
	}
	if err != nil {
		return err
	}
	defer sh.close()
	trash := "rm-" + randName()
	if err := sh.rename(k.name(), c.tmp, trash); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return ErrMiss
		}
		return err
	}
	// Moved out of entries/: removed, whoever deletes the rest (a gc
	// running meanwhile deletes leftovers of removals too).
	return c.tmp.removeTree(trash)
}

// Quarantine moves the folder of a bad entry (as List reports it) into
// quarantine/, out of the cache's way but kept for a look, and returns its
// new path.
func (c *Cache) Quarantine(in Info) (string, error) {
	if !isShardName(in.Shard) {
		return "", fmt.Errorf("cache: %s is not inside a shard", in.Dir)
	}
	sh, err := c.ents.sub(in.Shard)
	if err != nil {
		return "", err
	}
	defer sh.close()
	to := fmt.Sprintf("%s-%d", in.Name, c.now().UnixNano())
	if err := sh.rename(in.Name, c.quar, to); err != nil {
		return "", err
	}
	return c.quar.join(to), nil
}
