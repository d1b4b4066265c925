package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/aiperf/toolkit/lib/cachedir"
	"github.com/aiperf/toolkit/lib/cachekey"
	"github.com/aiperf/toolkit/lib/store"
	"golang.org/x/sys/unix"
)

// Staging is an entry being built: a folder tmp/p-RAND inside the root,
// invisible to lookups, that becomes the entry folder by one rename once
// its files are complete and synced and its manifest is written. While it
// exists its owner holds the flock of tmp/p-RAND.lock, which tells gc that
// it is in use; a staging folder whose lock is free (its owner died) is
// garbage.
type Staging struct {
	c      *Cache
	name   string
	d      *dir
	lk     *os.File // tmp/NAME.lock, flocked
	files  []File
	moved  []string // sources of --move copies, removed on publish
	inputs []string // the manifest's inputs (SetInputs)
	move   bool     // a file came in by --move
	done   bool
}

// stageAttempts bounds how often Stage starts over with a new name. Only a
// filesystem without O_TMPFILE loses races with gc at all (lockStaging), one
// in many; a run of 64 losses means something else is wrong.
const stageAttempts = 64

// Stage starts a new entry.
func (c *Cache) Stage() (*Staging, error) {
	// Names are random, so a clash is a lost race with gc (lockStaging).
	for range stageAttempts {
		name := "p-" + randName()
		lk, err := c.lockStaging(name)
		if err != nil {
			return nil, err
		}
		if lk == nil {
			continue
		}
		d, err := c.tmp.mkSub(name, cachedir.DirMode(c.shared))
		if err != nil {
			c.unlockStaging(name, lk)
			return nil, err
		}
		return &Staging{c: c, name: name, d: d, lk: lk}, nil
	}
	return nil, errors.New("cache: could not start a staging folder")
}

// lockStaging creates and locks tmp/name.lock. It returns nil, nil when it
// lost a race with gc (retry with another name). On a filesystem without
// flock it returns a file that holds no lock; gc then goes by age. The file
// appears locked (createLocked): gc removes lock files it can lock whose
// staging folder does not exist, which this one does not yet.
func (c *Cache) lockStaging(name string) (*os.File, error) {
	lk := name + ".lock"
	line := Holder{Host: c.host, PID: os.Getpid(), Since: c.now()}.line()
	f, ferr, err := c.createLocked(c.tmp, lk, line)
	switch {
	case errors.Is(err, errNoTmpfile):
		return c.lockStagingPlain(lk, line)
	case errors.Is(err, fs.ErrExist):
		return nil, nil
	case err != nil:
		return nil, err
	case ferr != nil && !noFlock(ferr):
		f.Close()
		c.tmp.unlink(lk)
		return nil, ferr
	}
	return f, nil
}

// lockStagingPlain is lockStaging where files cannot be made locked: make
// the file, then lock the descriptor that made it. gc may take the lock in
// between (then another name), but never makes the lock fail by removing
// the file, as a reopen by its path would.
func (c *Cache) lockStagingPlain(lk, line string) (*os.File, error) {
	f, err := c.tmp.create(lk, c.fileMode(true))
	if errors.Is(err, fs.ErrExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f.WriteString(line)
	ok, err := tryLock(f)
	switch {
	case err != nil && noFlock(err):
		return f, nil
	case err != nil:
		f.Close()
		c.tmp.unlink(lk)
		return nil, err
	case !ok || !c.sameFile(f, c.tmp, lk):
		// gc took it first (and removes it): another name.
		unlockFile(f)
		return nil, nil
	}
	return f, nil
}

func (c *Cache) unlockStaging(name string, lk *os.File) {
	// Remove the lock file while still holding it: anyone who then locks the
	// unlinked file sees that it is no longer the path's (sameFile).
	c.tmp.unlink(name + ".lock")
	unlockFile(lk)
}

// Dir returns the staging folder's path: a command building the entry
// writes its files there.
func (s *Staging) Dir() string { return s.d.path }

// AddOptions says how Add brings a file in.
type AddOptions struct {
	// Move renames the file into the cache instead of linking it (the
	// source name disappears); across filesystems it copies, then removes
	// the source once the entry is published.
	Move bool
	// Copy copies even when a link would do.
	Copy bool
}

// Add brings the file src into the entry under its base name. On the same
// filesystem it is a hard link (or a rename with Move): O(1), and the file
// becomes read-only (0444), since it now is the entry's file too. Otherwise
// it is copied with copy_file_range(2), or with read and write where the
// kernel cannot. src may be a symbolic link (it is outside the root).
func (s *Staging) Add(src string, opt AddOptions) error {
	name := filepath.Base(src)
	if err := validFileName(name); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if slices.ContainsFunc(s.files, func(f File) bool { return f.Name == name }) {
		return fmt.Errorf("%s: two files named %s", src, name)
	}
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", src)
	}
	placed := false
	if !opt.Copy {
		var err error
		if opt.Move {
			s.move = true
			err = unix.Renameat(unix.AT_FDCWD, src, s.d.fd, name)
		} else {
			err = unix.Linkat(unix.AT_FDCWD, src, s.d.fd, name, unix.AT_SYMLINK_FOLLOW)
		}
		switch {
		case err == nil:
			placed = true
			// The entry's files are read-only; a file we may link but not
			// chmod (another user's, in a shared cache) is copied instead.
			if err := unix.Fchmodat(s.d.fd, name, uint32(s.c.fileMode(false)), 0); err != nil && !opt.Move {
				if err := s.d.unlink(name); err != nil {
					return err
				}
				placed = false
			}
		case err == unix.EXDEV || err == unix.EPERM || err == unix.EMLINK || err == unix.EOPNOTSUPP || err == unix.EACCES:
			// Another filesystem, or one that refuses links here: copy.
		default:
			return &os.LinkError{Op: "link", Old: src, New: s.d.join(name), Err: err}
		}
	}
	if !placed {
		if err := s.copyIn(src, name); err != nil {
			return err
		}
		if opt.Move {
			s.move = true
			s.moved = append(s.moved, src) // removed once published
		}
	}
	return s.adopt(name)
}

func (s *Staging) copyIn(src, name string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := s.d.create(name, s.c.fileMode(true))
	if err != nil {
		return err
	}
	defer out.Close()
	if err := copyFile(out, in, s.c.opt.PlainCopy); err != nil {
		return fmt.Errorf("copy %s into the cache: %w", src, err)
	}
	return nil
}

// Adopt takes the file name, already written inside the staging folder,
// into the entry.
func (s *Staging) Adopt(name string) error {
	if err := validFileName(name); err != nil {
		return err
	}
	return s.adopt(name)
}

// adopt records the digest of the staged file name and makes it read-only.
func (s *Staging) adopt(name string) error {
	f, err := s.d.open(name, unix.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", s.d.join(name))
	}
	if err := f.Chmod(s.c.fileMode(false)); err != nil {
		return err
	}
	file, err := digest(f, name, fi.Size())
	if err != nil {
		return err
	}
	// The data must be on disk before the manifest that vouches for it
	// (see publish). fdatasync: a linked file's data is usually clean
	// already (its writer synced it), and then this costs one device flush;
	// its new link and mode need not be durable (a lost link is a miss).
	if err := datasync(f); err != nil {
		return err
	}
	s.files = append(s.files, file)
	return nil
}

// SetInputs names the inputs the entry's key digested, for its manifest
// (see Manifest.Inputs); names that cannot be recorded are left out.
func (s *Staging) SetInputs(names []string) {
	s.inputs = nil
	for _, n := range names {
		if cachekey.CheckInputName(n) == nil && len(s.inputs) < cachekey.MaxNoteInputs {
			s.inputs = append(s.inputs, n)
		}
	}
}

// relabel sets the model and endpoint of the staged stores from their own
// metadata (an import's manifest says what its writer claimed).
func (s *Staging) relabel() error {
	for i := range s.files {
		f := &s.files[i]
		if f.DigestKind != DigestAipkTrailer {
			continue
		}
		h, err := s.d.open(f.Name, unix.O_RDONLY, 0)
		if err != nil {
			return err
		}
		err = withStore(h, f.Size, false, func(r *store.Reader, _ []byte) error {
			f.Model, f.Endpoint = "", ""
			if m := r.Metadata(); label(m.Model) && label(m.Endpoint) {
				f.Model, f.Endpoint = m.Model, m.Endpoint
			}
			return nil
		})
		h.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// Files returns the files added so far.
func (s *Staging) Files() []File { return slices.Clone(s.files) }

// Publish writes the manifest and renames the staging folder into place as
// k's entry. If a complete entry for k appeared meanwhile, it wins: the
// staged files are dropped and Publish returns that entry with stored
// false. A damaged entry in the way is replaced. When the root's config
// sets a size cap, a published entry is followed by a trim to it (as ccache
// trims after every write), which never removes the new entry. When explain
// is a key's description (aiperf-hash key --explain), every staged store
// must record the same settings, else Publish returns a *SettingsError.
func (s *Staging) Publish(k Key, explain string) (*Entry, bool, error) {
	if s.done {
		return nil, false, errors.New("cache: publish after publish or abort")
	}
	if len(s.files) == 0 {
		return nil, false, errors.New("cache: an entry needs at least one file")
	}
	// A store that records other settings than explain describes is
	// refused (see SettingsError).
	if err := s.checkStaged(k, explain); err != nil {
		return nil, false, err
	}
	m := &Manifest{V: ManifestVersion, Key: k.String(), CreatedUnixNS: s.c.now().UnixNano(), Tool: s.c.opt.Tool, Files: s.files, Explain: explain, Inputs: s.inputs}
	return s.publish(k, m)
}

// PublishRestore publishes the staged files as k's entry (see Publish) and
// puts them at dest as Restore would, from the staged files themselves:
// they wait beside DEST, linked or copied, before the entry appears, so
// that a gc or rm removing the entry right after its publication cannot
// leave DEST missing. When another complete entry won, DEST gets that
// entry's files, or these should it be gone already.
func (s *Staging) PublishRestore(k Key, explain, dest string, opt RestoreOptions) (*Entry, bool, []Restored, error) {
	if s.done {
		return nil, false, nil, errors.New("cache: publish after publish or abort")
	}
	ps, err := s.c.prepareRestore(s.d, s.files, dest, opt)
	if err != nil {
		return nil, false, nil, err
	}
	e, stored, err := s.Publish(k, explain)
	if err != nil {
		ps.abort()
		return nil, false, nil, err
	}
	if !stored {
		rs, err := s.c.Restore(k, dest, opt)
		if err == nil || !errors.Is(err, ErrMiss) {
			ps.abort()
			return e, false, rs, err
		}
	}
	rs, err := ps.commit()
	return e, stored, rs, err
}

func (s *Staging) publish(k Key, m *Manifest) (*Entry, bool, error) {
	defer s.Abort()
	b, err := m.Encode()
	if err != nil {
		return nil, false, err
	}
	// Nobody sees the staging folder, so the manifest goes straight to its
	// name; the whole folder appears at once with the rename below.
	//
	// What must reach the disk first is what the manifest vouches for: each
	// file's data was synced when it was added. The manifest, the folder's
	// names and the rename need no sync of their own for an entry to be
	// whole or absent after a power loss: losing any of them leaves no
	// manifest, a manifest that does not parse (a JSON object cut short, or
	// the zeros or emptiness filesystems show for unwritten blocks) or a
	// missing file, and each of those is a miss. So a populate costs one
	// device flush per file (none more), not a journal commit on top. Only
	// --move, which removes its sources next, makes the entry durable first.
	if err := s.writeManifest(b, s.move); err != nil {
		return nil, false, fmt.Errorf("cache: write manifest: %w", err)
	}
	if s.move {
		if err := s.d.sync(); err != nil {
			return nil, false, err
		}
	}
	c := s.c
	sh, err := c.ents.mkSub(k.shard(), cachedir.DirMode(c.shared))
	if err != nil {
		return nil, false, err
	}
	defer sh.close()
	now := c.now()
	c.tmp.touch(s.name, now)
	for range 4 {
		err := c.tmp.rename(s.name, sh, k.name())
		if err == nil {
			s.done = true
			s.d.close()
			c.unlockStaging(s.name, s.lk)
			// A power loss can at worst lose the entry (see above): a miss,
			// and the sources are still there to populate again. A --move
			// must make the rename durable before it removes them.
			if s.move {
				if err := sh.sync(); err != nil {
					return nil, false, err
				}
			}
			s.removeMoved()
			c.AutoTrim(k)
			return &Entry{Key: k, Dir: sh.join(k.name()), Manifest: m, LastUsed: now}, true, nil
		}
		// EEXIST, ENOTEMPTY: a folder is there; ENOTDIR: something else is.
		if !errors.Is(err, unix.EEXIST) && !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.ENOTDIR) {
			return nil, false, err
		}
		ed, e, cerr := c.check(sh, k.name(), k)
		if cerr == nil {
			ed.close()
			s.removeMoved()
			return e, false, nil // the first complete entry wins
		}
		if errors.Is(cerr, ErrMiss) && !errors.As(cerr, new(*BadEntryError)) {
			continue // it vanished meanwhile
		}
		// A damaged entry: move it out of the way and try again.
		if err := c.removeAll(sh, k.name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, false, err
		}
	}
	return nil, false, fmt.Errorf("cache: could not publish %s: the entry keeps changing", k)
}

func (s *Staging) writeManifest(b []byte, sync bool) error {
	f, err := s.d.create(manifestName, s.c.fileMode(false))
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if sync {
		if err := datasync(f); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

func (s *Staging) removeMoved() {
	for _, src := range s.moved {
		os.Remove(src)
	}
	s.moved = nil
}

// Abort removes the staging folder. It is a no-op after Publish.
func (s *Staging) Abort() {
	if s.done {
		return
	}
	s.done = true
	s.d.close()
	s.c.tmp.removeTree(s.name)
	s.c.unlockStaging(s.name, s.lk)
}

// PopulateOptions configures Populate.
type PopulateOptions struct {
	AddOptions
	Explain string
	// Inputs name the inputs the key digested (Manifest.Inputs).
	Inputs []string
}

// Populate stores files as k's entry (see Staging.Add for how each comes in)
// and returns the entry; stored is false when a complete entry was there
// first. With a size cap in the root's config, a stored entry is followed
// by a trim (see Staging.Publish).
func (c *Cache) Populate(k Key, files []string, opt PopulateOptions) (*Entry, bool, error) {
	if len(files) == 0 {
		return nil, false, errors.New("cache: populate needs at least one file")
	}
	if err := checkFiles(k, files, opt.Explain); err != nil {
		return nil, false, err // before a link makes the files read-only
	}
	s, err := c.Stage()
	if err != nil {
		return nil, false, err
	}
	defer s.Abort()
	for _, f := range files {
		if err := s.Add(f, opt.AddOptions); err != nil {
			return nil, false, err
		}
	}
	s.SetInputs(opt.Inputs)
	return s.Publish(k, opt.Explain)
}
