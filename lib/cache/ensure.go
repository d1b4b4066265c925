package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/store"
)

// OutEnv names the variable that tells an ensure build (aiperf-cache
// ensure's CMD) where to write.
const OutEnv = "AIPERF_CACHE_OUT"

// A BuildFunc makes an entry's files at out: a file path named like DEST,
// or, when DEST is a folder, a folder to fill. Every non-hidden file it
// leaves there becomes the entry. An error from it is returned by Ensure
// as it is, and nothing is cached.
type BuildFunc func(out string) error

// EnsureOptions configures Ensure. The callbacks may be nil.
type EnsureOptions struct {
	// Lock is how to wait for another builder's lock on the key (its Stop
	// is Ensure's own: it stops once the entry is complete).
	Lock LockOptions
	// Restore is how DEST is restored.
	Restore RestoreOptions
	// Explain is recorded in the manifest; a store whose settings differ
	// from the key description it holds is refused (a *SettingsError).
	Explain string
	// Inputs name the inputs the key digested (Manifest.Inputs).
	Inputs []string
	// Logf is told what happens: a hit, why a lookup missed, who built the
	// entry, each file restored, what was stored.
	Logf func(format string, args ...any)
	// OnLockTimeout is told, before Ensure builds without the lock, that
	// waiting for it timed out (err wraps ErrLockTimeout).
	OnLockTimeout func(err error)
	// OnUncached is told, before Ensure builds DEST beside the cache with
	// BuildUncached, why the cache could not be written.
	OnUncached func(cause error)
}

func (o *EnsureOptions) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

func (o *EnsureOptions) logRestored(rs []Restored) {
	for _, r := range rs {
		how := "copied"
		if r.Linked {
			how = "linked"
		}
		o.logf("%s %s to %s", how, r.Name, r.Path)
	}
}

// errGone: an entry that another process built while Ensure waited for
// the lock was removed (by gc, rm or a size-capped populate) before Ensure
// could restore it.
var errGone = errors.New("entry removed before it was restored")

// ensureAttempts bounds how often Ensure starts over when an entry another
// process built is removed before Ensure restores it. The last attempt
// takes the lock whatever happens meanwhile, and under it nothing can go:
// a hit that vanishes is rebuilt, and a build restores DEST from its own
// files (Staging.PublishRestore).
const ensureAttempts = 3

// Ensure restores k's entry to dest, building it first with build if the
// cache does not have it: the get-or-build protocol. On a miss it takes
// k's lock, looks again (another process may have built the entry while it
// waited: it then restores that one), and runs build into a staging
// folder; the files build leaves are published atomically as k's entry
// and dest is restored from them. If build fails, nothing is cached.
// Should the lock or the staging folder be out of reach (a read-only or
// full cache), dest is built without caching it (see BuildUncached).
// dest's folder must exist; a folder dest (it exists, or ends in /) gets
// every file of the entry.
func (c *Cache) Ensure(ctx context.Context, k Key, dest string, build BuildFunc, opt EnsureOptions) error {
	for i := 1; ; i++ {
		err := c.ensureOnce(ctx, k, dest, build, &opt, i == ensureAttempts)
		if !errors.Is(err, errGone) {
			return err
		}
		opt.logf("%s was removed before it was restored; looking again", k)
	}
}

// tryRestore restores k's entry to dest; hit is false on a miss (the entry
// is not there, or was removed while it was restored).
func (c *Cache) tryRestore(k Key, dest string, opt *EnsureOptions) (hit bool, err error) {
	rs, err := c.Restore(k, dest, opt.Restore)
	if errors.Is(err, ErrMiss) {
		opt.logf("miss: %v", err)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	opt.logRestored(rs)
	return true, nil
}

// ensureOnce is one attempt of Ensure. last: wait for the lock even when
// the entry appears meanwhile.
func (c *Cache) ensureOnce(ctx context.Context, k Key, dest string, build BuildFunc, opt *EnsureOptions, last bool) error {
	if _, err := c.Lookup(k); err == nil {
		opt.logf("hit %s", k)
		if hit, err := c.tryRestore(k, dest, opt); hit || err != nil {
			return err
		}
		// Removed between the lookup and the restore: build it.
	}
	lockOpt := opt.Lock
	lockOpt.Stop = func() bool { _, err := c.Lookup(k); return err == nil }
	if last {
		lockOpt.Stop = nil
	}
	lk, err := c.Lock(ctx, k, lockOpt)
	switch {
	case errors.Is(err, ErrLockStopped):
		opt.logf("%s was built by another process while we waited", k)
		if hit, err := c.tryRestore(k, dest, opt); hit || err != nil {
			return err
		}
		return errGone
	case errors.Is(err, ErrLockTimeout):
		if opt.OnLockTimeout != nil {
			opt.OnLockTimeout(err)
		}
	case errors.Is(err, context.Canceled):
		return err
	case err != nil:
		return opt.buildUncached(dest, build, err)
	default:
		// Held until DEST is restored: gc and size-capped populates leave
		// the entry of a held key alone (rm does not: a hit removed now is
		// rebuilt).
		defer lk.Release()
	}
	if _, err := c.Lookup(k); err == nil {
		opt.logf("%s was built by another process while we waited", k)
		if hit, err := c.tryRestore(k, dest, opt); hit || err != nil {
			return err
		}
	}
	return c.buildEntry(k, dest, build, opt)
}

// buildEntry runs build into a staging folder and publishes what it made
// as k's entry, restoring dest from it.
func (c *Cache) buildEntry(k Key, dest string, build BuildFunc, opt *EnsureOptions) error {
	st, err := c.Stage()
	if err != nil {
		return opt.buildUncached(dest, build, err)
	}
	defer st.Abort()
	out, primary := st.Dir(), ""
	if !IsDirDest(dest) {
		primary = entryFileName(filepath.Base(dest))
		out = filepath.Join(st.Dir(), primary)
	}
	if err := build(out); err != nil {
		return err
	}
	if err := adoptOutputs(st, primary); err != nil {
		return err
	}
	st.SetInputs(opt.Inputs)
	e, stored, rs, err := st.PublishRestore(k, opt.Explain, dest, opt.Restore)
	if err != nil {
		return err
	}
	if stored {
		opt.logf("stored %s: %d file(s), %s", k, len(e.Manifest.Files), FormatSize(e.Size()))
	}
	opt.logRestored(rs)
	return nil
}

func (o *EnsureOptions) buildUncached(dest string, build BuildFunc, cause error) error {
	if o.OnUncached != nil {
		o.OnUncached(cause)
	}
	return BuildUncached(dest, build)
}

// BuildUncached builds dest without a cache (one it cannot write: a
// read-only or full filesystem, a root of another user, a damaged layout):
// build writes into a temporary folder beside dest, whose files then
// replace dest (or go into the folder dest) by renames, as a restore would
// put them.
func BuildUncached(dest string, build BuildFunc) error {
	dirDest := IsDirDest(dest)
	parent := filepath.Dir(dest)
	if dirDest {
		parent = filepath.Dir(filepath.Clean(dest))
		if err := os.MkdirAll(parent, 0o777); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(dest))+".build-")
	if err != nil {
		return fmt.Errorf("ensure: %w", err)
	}
	defer os.RemoveAll(tmp)
	if abs, err := filepath.Abs(tmp); err == nil {
		tmp = abs // the build may change its directory before it writes
	}
	if !dirDest {
		out := filepath.Join(tmp, filepath.Base(dest))
		if err := build(out); err != nil {
			return err
		}
		if fi, err := os.Lstat(out); err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("ensure: CMD succeeded but did not write $%s (%s) as a regular file", OutEnv, out)
		}
		return os.Rename(out, dest)
	}
	if err := build(tmp); err != nil {
		return err
	}
	return moveInto(tmp, dest)
}

// moveInto renames the regular, non-hidden files of tmp into the folder
// dest, making it; it is an error when there are none.
func moveInto(tmp, dest string) error {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range ents {
		if n := e.Name(); !strings.HasPrefix(n, ".") && e.Type().IsRegular() {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("ensure: CMD succeeded but wrote nothing into $%s (%s)", OutEnv, tmp)
	}
	if err := os.MkdirAll(dest, 0o777); err != nil {
		return err
	}
	for _, n := range names {
		if err := os.Rename(filepath.Join(tmp, n), filepath.Join(dest, n)); err != nil {
			return err
		}
	}
	return nil
}

// IsDirDest reports whether dest names a folder (it exists as one, or
// ends in a slash).
func IsDirDest(dest string) bool {
	if strings.HasSuffix(dest, "/") {
		return true
	}
	fi, err := os.Stat(dest)
	return err == nil && fi.IsDir()
}

// entryFileName is the name of the entry file made for a file DEST named
// base: base itself when an entry file may have it, else base without its
// leading dots, else "store.aipk" or "out", keeping a .aipk suffix (and with
// it the store check); restore puts the file at DEST under DEST's own name
// either way.
func entryFileName(base string) string {
	if ValidFileName(base) == nil {
		return base
	}
	store := strings.HasSuffix(base, ".aipk")
	if n := strings.TrimLeft(base, "."); ValidFileName(n) == nil && strings.HasSuffix(n, ".aipk") == store {
		return n
	}
	if store {
		return "store.aipk"
	}
	return "out"
}

// adoptOutputs takes what the build wrote into the staging folder into the
// entry: primary first (it must exist), then every other file by name,
// stores before anything else. Hidden files (a build's own temporaries)
// are removed.
func adoptOutputs(st *Staging, primary string) error {
	names, err := outputNames(st.Dir(), primary)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := checkStoreName(filepath.Join(st.Dir(), n)); err != nil {
			return err
		}
	}
	for _, n := range names {
		if err := st.Adopt(n); err != nil {
			return fmt.Errorf("ensure: %w", err)
		}
	}
	return nil
}

// outputNames lists the files a build left in dir in the order they join
// the entry (see adoptOutputs), removing hidden ones.
func outputNames(dir, primary string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") {
			os.RemoveAll(filepath.Join(dir, n))
			continue
		}
		if !e.Type().IsRegular() {
			return nil, fmt.Errorf("ensure: CMD left %s in %s, which is not a regular file", n, OutEnv)
		}
		if n != primary {
			names = append(names, n)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		as, bs := strings.HasSuffix(a, ".aipk"), strings.HasSuffix(b, ".aipk")
		if as != bs {
			if as {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	if primary != "" {
		if _, err := os.Lstat(filepath.Join(dir, primary)); err != nil {
			return nil, fmt.Errorf("ensure: CMD succeeded but did not write $%s (%s)", OutEnv, filepath.Join(dir, primary))
		}
		names = append([]string{primary}, names...)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("ensure: CMD succeeded but wrote nothing into $%s (%s)", OutEnv, dir)
	}
	return names, nil
}

// zstdMagic opens every zstd frame (aiperf-pack --compress writes one).
const zstdMagic = "\x28\xb5\x2f\xfd"

// checkStoreName refuses a file named *.aipk that starts neither like a
// store nor like a zstd stream (of one): an empty file a shell redirection
// left, or an error message, would otherwise be cached and served for good.
// (A file that starts like a store is checked whole when it is adopted.)
func checkStoreName(path string) error {
	if !strings.HasSuffix(path, ".aipk") {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, len(store.Magic))
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if bytes.HasPrefix(head, []byte(store.Magic)) || bytes.HasPrefix(head, []byte(zstdMagic)) {
		return nil
	}
	size := "?"
	if fi, err := f.Stat(); err == nil {
		size = strconv.FormatInt(fi.Size(), 10)
	}
	return fmt.Errorf("ensure: CMD wrote %s, which is not a store (%s bytes); nothing cached", filepath.Base(path), size)
}
