// Package cachedir locates and creates the aiperf cache root, the folder that
// aiperf-cache keeps its entries in and aiperf-hash keeps its digest memo in.
//
// It depends on the standard library only, so that every binary can find the
// root without pulling in the cache itself.
package cachedir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
)

// Env names the environment variable that sets the root when no --dir is given.
const Env = "AIPERF_CACHE_DIR"

// Memo is the folder inside the root reserved for aiperf-hash's digest memo.
// aiperf-cache never lists, trims, verifies or removes anything in it.
const Memo = "memo"

// Keys is the folder inside the root where aiperf-hash key leaves a note
// of each key it prints (lib/cachekey.Note, at NoteName): what the key
// describes, for aiperf-cache populate and ensure to check a build against.
const Keys = "keys"

// NoteName returns where the note of the key of hex digest hex (64 hex
// digits) lies, relative to the root: keys/XX/HEX, XX its first byte.
func NoteName(hex string) string { return filepath.Join(Keys, hex[:2], hex) }

// WriteNote writes b as the note at NoteName(hex) inside root (made as
// Create makes it), through a temporary file and a rename that replaces
// what is there without following it, unless the note holds b already.
func WriteNote(root string, shared bool, hex string, b []byte) error {
	name := filepath.Join(root, NoteName(hex))
	if sameNote(name, b) {
		return nil
	}
	for _, d := range []string{filepath.Join(root, Keys), filepath.Dir(name)} {
		if err := Mkdir(d, shared); err != nil {
			return err
		}
	}
	f, err := atomicfile.CreateWith(name, atomicfile.Options{Perm: FileMode(shared), NoFollow: true})
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(b); err != nil {
		return f.Named(err)
	}
	return f.Commit()
}

// sameNote reports whether name is a regular file holding b (opened
// without following a link or blocking on a pipe planted there).
func sameNote(name string, b []byte) bool {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(b)) {
		return false
	}
	old := make([]byte, len(b)+1)
	n, _ := io.ReadFull(f, old)
	return string(old[:n]) == string(b)
}

// Modes of the root and of every folder and plain file made inside it. A
// private root is the user's alone; a shared root is a team cache: group
// members read and write it, and the setgid bit keeps new folders in the
// root's group. Nothing is ever world-writable.
const (
	PrivateDir  fs.FileMode = 0o700
	PrivateFile fs.FileMode = 0o600
	SharedDir   fs.FileMode = 0o775 | fs.ModeSetgid
	SharedFile  fs.FileMode = 0o664
)

// ErrNoRoot is returned by Resolve when no root is given and there is no
// user cache folder to put one in.
var ErrNoRoot = errors.New("no cache root")

// Resolve returns the cache root: dir if it is not empty, else $AIPERF_CACHE_DIR,
// else os.UserCacheDir()/aiperf (~/.cache/aiperf on Linux). The result is
// absolute and cleaned; it is not created.
func Resolve(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv(Env)
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("cachedir: %w: no --dir, no $%s and no user cache folder: %w", ErrNoRoot, Env, err)
		}
		if home := os.Getenv("HOME"); os.Getenv("XDG_CACHE_HOME") == "" && home != "" {
			// The user cache folder is $HOME/.cache: make it, but never
			// $HOME itself (/nonexistent, the home of system users, must
			// stay so).
			if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
				return "", fmt.Errorf("cachedir: %w: no --dir and no $%s, and $HOME (%s) is not a folder to keep a cache in: set %s", ErrNoRoot, Env, home, Env)
			}
		}
		dir = filepath.Join(base, "aiperf")
	}
	return filepath.Abs(dir)
}

// Create makes the root folder if it is missing (with its parents, which get
// the usual 0777 less the umask) and returns whether the root is shared. A
// new root is private (0700) unless shared is set (2775). An existing root
// keeps its mode: a root is shared when its group may write it. Create
// refuses a world-writable root, and shared on a root that was made private
// (say so rather than quietly leave the team unable to write).
func Create(root string, shared bool) (isShared bool, err error) {
	fi, err := os.Stat(root)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(root), 0o777); err != nil {
			return false, fmt.Errorf("cachedir: %w", err)
		}
		mode := PrivateDir
		if shared {
			mode = SharedDir
		}
		if err := os.Mkdir(root, mode.Perm()); err != nil && !errors.Is(err, fs.ErrExist) {
			return false, fmt.Errorf("cachedir: %w", err)
		} else if err == nil {
			// Mkdir's mode passes through the umask; set it exactly.
			if err := os.Chmod(root, mode); err != nil {
				return false, fmt.Errorf("cachedir: %w", err)
			}
		}
		fi, err = os.Stat(root)
	}
	if err != nil {
		return false, fmt.Errorf("cachedir: %w", err)
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("cachedir: %s is not a folder", root)
	}
	perm := fi.Mode().Perm()
	if perm&0o002 != 0 {
		return false, fmt.Errorf("cachedir: %s is world-writable (mode %04o); refusing to use it (chmod o-w it)", root, perm)
	}
	isShared = perm&0o020 != 0
	if shared && !isShared {
		return false, fmt.Errorf("cachedir: %s was created private (mode %04o); --shared applies when a root is created (to convert it: chmod -R g+rwX,g+s %s)", root, perm, root)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if err := CheckOwner(root, st.Uid, st.Gid, shared && isShared, -1); err != nil {
			return false, err
		}
	}
	for _, f := range []struct{ name, text string }{{TagName, Tag}, {ReadmeName, Readme}} {
		if err := writeOnce(filepath.Join(root, f.name), f.text, isShared); err != nil {
			return false, fmt.Errorf("cachedir: %w", err)
		}
	}
	return isShared, nil
}

// ErrNotOwner is wrapped when a root or a file in it belongs to another
// user whom the caller has not said to trust.
var ErrNotOwner = errors.New("owned by another user")

// CheckOwner refuses the root, or a file inside it, named path and owned
// by uid and gid, when it belongs to another user, as ssh refuses another
// user's key files and git another user's repository (safe.directory):
// someone who made a /tmp-style root before you, with entries in it, would
// otherwise have you restore their bytes. A file of another user is trusted
// only when trustGroup is set (the caller gave --shared for a team root) and
// its group is one the caller is in and, for a file inside the root, the
// root's group (rootGid; negative for the root itself).
func CheckOwner(path string, uid, gid uint32, trustGroup bool, rootGid int) error {
	me := os.Geteuid()
	if int(uid) == me {
		return nil
	}
	if trustGroup && InGroup(gid) && (rootGid < 0 || int(gid) == rootGid) {
		return nil
	}
	why := "give --shared to trust a team cache whose group you are in"
	switch {
	case trustGroup && rootGid >= 0 && int(gid) != rootGid:
		why = fmt.Sprintf("its group (gid %d) is not the root's (gid %d)", gid, rootGid)
	case trustGroup:
		why = fmt.Sprintf("its group (gid %d) is not one of yours", gid)
	}
	return fmt.Errorf("cachedir: %s is %w (uid %d, you are uid %d); refusing to use it: %s", path, ErrNotOwner, uid, me, why)
}

// InGroup reports whether the caller is in the group gid (its effective
// group or a supplementary one).
func InGroup(gid uint32) bool {
	if int(gid) == os.Getegid() {
		return true
	}
	gs, _ := os.Getgroups()
	for _, g := range gs {
		if g == int(gid) {
			return true
		}
	}
	return false
}

// TagName and Tag are the Cache Directory Tagging Specification's file
// (https://bford.info/cachedir/): backup tools that honour it skip the root.
const (
	TagName = "CACHEDIR.TAG"
	Tag     = "Signature: 8a477f597d28d172789f06886806bc55\n" +
		"# This file is a cache directory tag created by aiperf.\n" +
		"# For information about cache directory tags, see https://bford.info/cachedir/\n"
)

// ReadmeName and Readme describe the root to whoever finds it.
const (
	ReadmeName = "README"
	Readme     = `This folder is the aiperf cache: packed request stores keyed by what made them.
Every file here can be deleted; aiperf rebuilds what it needs. Use aiperf-cache
(ls, gc, verify, rm) rather than editing it by hand.

  version       layout version (aiperf-cache refuses a root newer than it knows)
  config        optional settings, one "name = value" per line:
                  max-size = 50GiB   every populate trims to 80% of it, least recently used first
                  max-age  = 30d     the default age cap of aiperf-cache gc
  entries/XX/   one folder per entry, XX the first byte of the key in hex; an entry
                holds its files (read-only) and a manifest written last; the
                folder's mtime is the last use (refreshed at most hourly)
  locks/XX/     the lock file of each key (flock), held while an entry is built
  tmp/          entries being written; appear in entries/ by one rename
  quarantine/   entries that failed aiperf-cache verify --repair, kept for a look
  memo/         aiperf-hash's memo of file digests (aiperf-cache leaves it alone)
  keys/XX/      aiperf-hash key's note of each key it printed: what the key describes
                and its inputs' names; populate and ensure check a build against it

Entry files are hard links when restored: do not write into a restored store
in place (they are read-only for that reason); aiperf-cache restore --copy
gives an independent copy.
`
)

// writeOnce writes text to name unless name exists, through a temporary
// file linked into place so nobody ever reads half of it and, of two
// processes creating the root at once, one wins. A symbolic link planted at
// name (a shared root) counts as existing and is never followed.
func writeOnce(name, text string, shared bool) error {
	if _, err := os.Lstat(name); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := atomicfile.CreateWith(name, atomicfile.Options{Perm: FileMode(shared) &^ 0o222, NoReplace: true})
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.WriteString(text); err != nil {
		return f.Named(err)
	}
	if err := f.Commit(); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// Mkdir makes the folder name inside a root with the root's sharing mode,
// leaving an existing folder alone. It refuses a symbolic link in its place.
func Mkdir(name string, shared bool) error {
	mode := PrivateDir
	if shared {
		mode = SharedDir
	}
	err := os.Mkdir(name, mode.Perm())
	if err == nil {
		return os.Chmod(name, mode)
	}
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, lerr := os.Lstat(name)
	if lerr != nil {
		return lerr
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "mkdir", Path: name, Err: syscall.ENOTDIR}
	}
	return nil
}

// FileMode returns the mode for a plain (writable) file inside a root.
func FileMode(shared bool) fs.FileMode {
	if shared {
		return SharedFile
	}
	return PrivateFile
}

// DirMode returns the mode for a folder inside a root.
func DirMode(shared bool) fs.FileMode {
	if shared {
		return SharedDir
	}
	return PrivateDir
}
