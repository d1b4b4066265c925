package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// dir is an open folder inside the root. Everything below the root is
// reached through openat(2) relative to an open folder, one name at a time,
// with O_NOFOLLOW: a symbolic link planted anywhere inside the root is never
// followed, and renaming a folder under a running command cannot redirect
// it. The root itself may be a link (a user's ~/.cache often is).
type dir struct {
	fd   int
	path string // for messages and for the paths printed to users
}

// errSymlink is wrapped when a name inside the root is a symbolic link.
var errSymlink = errors.New("is a symbolic link; aiperf-cache never follows links inside its root")

func openRootDir(path string) (*dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &dir{fd: fd, path: path}, nil
}

func (d *dir) join(name string) string { return filepath.Join(d.path, name) }

func (d *dir) close() {
	if d != nil && d.fd >= 0 {
		unix.Close(d.fd)
		d.fd = -1
	}
}

// pathErr wraps errno for name, naming a symbolic link plainly.
func (d *dir) pathErr(op, name string, err error) error {
	if errors.Is(err, unix.ELOOP) || (errors.Is(err, unix.ENOTDIR) && d.isSymlink(name)) {
		err = errSymlink
	}
	return &fs.PathError{Op: op, Path: d.join(name), Err: err}
}

func (d *dir) isSymlink(name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// sub opens the folder name inside d, refusing a symbolic link.
func (d *dir) sub(name string) (*dir, error) {
	for {
		fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, d.pathErr("open", name, err)
		}
		return &dir{fd: fd, path: d.join(name)}, nil
	}
}

// mkSub opens the folder name inside d, creating it with mode if missing.
func (d *dir) mkSub(name string, mode fs.FileMode) (*dir, error) {
	err := unix.Mkdirat(d.fd, name, uint32(mode.Perm()))
	if err != nil && err != unix.EEXIST {
		return nil, d.pathErr("mkdir", name, err)
	}
	s, serr := d.sub(name)
	if serr != nil {
		return nil, serr
	}
	if err == nil {
		// mkdir(2) applies the umask and ignores setgid; set the mode exactly.
		if err := unix.Fchmod(s.fd, unixMode(mode)); err != nil {
			s.close()
			return nil, d.pathErr("chmod", name, err)
		}
	}
	return s, nil
}

// unixMode converts an fs.FileMode's permission and setgid bits.
func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetgid != 0 {
		u |= unix.S_ISGID
	}
	return u
}

// errNotRegular is wrapped when a name inside the root that must be a
// regular file is something else (a named pipe, a device, a folder).
var errNotRegular = errors.New("not a regular file")

// notRegular is the error for name inside d, of the type st says.
func (d *dir) notRegular(name string, st *unix.Stat_t) error {
	return &fs.PathError{Op: "open", Path: d.join(name), Err: fmt.Errorf("is %s: %w", fileType(st), errNotRegular)}
}

// open opens the regular file name inside d. O_NOFOLLOW refuses a link;
// O_NONBLOCK keeps a named pipe planted in its place (any member of a shared
// root can make one) from blocking the open until a writer comes, and
// O_NOCTTY a terminal from becoming ours; then anything but a regular file
// is refused (errNotRegular) and the descriptor is made blocking again.
func (d *dir) open(name string, flag int, perm fs.FileMode) (*os.File, error) {
	for {
		fd, err := unix.Openat(d.fd, name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, uint32(perm.Perm()))
		if err == unix.EINTR {
			continue
		}
		if err == unix.ENXIO {
			// O_WRONLY|O_NONBLOCK on a named pipe nobody reads.
			if st, lerr := d.lstat(name); lerr == nil && !isReg(&st) {
				return nil, d.notRegular(name, &st)
			}
		}
		if err != nil {
			return nil, d.pathErr("open", name, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return nil, d.pathErr("stat", name, err)
		}
		if !isReg(&st) {
			unix.Close(fd)
			return nil, d.notRegular(name, &st)
		}
		if err := unix.SetNonblock(fd, false); err != nil {
			unix.Close(fd)
			return nil, d.pathErr("fcntl", name, err)
		}
		return os.NewFile(uintptr(fd), d.join(name)), nil
	}
}

// create makes a new file name inside d (it must not exist) with exactly perm.
func (d *dir) create(name string, perm fs.FileMode) (*os.File, error) {
	f, err := d.open(name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, perm)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		unix.Unlinkat(d.fd, name, 0)
		return nil, err
	}
	return f, nil
}

// errNoTmpfile is returned by createLocked where O_TMPFILE or /proc is
// missing (old kernels, NFS, some FUSE mounts): callers fall back to making
// the file and then locking it.
var errNoTmpfile = errors.New("no O_TMPFILE here")

// noTmpfile makes createLocked answer errNoTmpfile (tests of the fallback).
var noTmpfile = false

// createLocked makes the file name inside d, holding text, with its flock
// taken before the file has a name: it is made unnamed (O_TMPFILE), locked,
// then linked in through /proc/self/fd, so nobody ever sees it unlocked.
// gc removes lock files it can lock; a lock file made and then locked can be
// taken by gc in between as often as gc runs. flockErr is the flock's error
// (a filesystem without flock); the file is linked in either way. An
// existing name is fs.ErrExist.
func (c *Cache) createLocked(d *dir, name, text string) (f *os.File, flockErr, err error) {
	if noTmpfile {
		return nil, nil, errNoTmpfile
	}
	perm := c.fileMode(true)
	fd, err := unix.Openat(d.fd, ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		if err == unix.EOPNOTSUPP || err == unix.EISDIR || err == unix.EINVAL || err == unix.ENOENT {
			return nil, nil, errNoTmpfile
		}
		return nil, nil, d.pathErr("create", name, err)
	}
	f = os.NewFile(uintptr(fd), d.join(name))
	fail := func(err error) (*os.File, error, error) {
		f.Close()
		return nil, nil, err
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if _, err := f.WriteString(text); err != nil {
		return fail(err)
	}
	if _, err := tryLock(f); err != nil {
		flockErr = err
	}
	proc := "/proc/self/fd/" + strconv.Itoa(fd)
	switch err := unix.Linkat(unix.AT_FDCWD, proc, d.fd, name, unix.AT_SYMLINK_FOLLOW); {
	case err == nil:
		return f, flockErr, nil
	case err == unix.EEXIST:
		return fail(&fs.PathError{Op: "link", Path: d.join(name), Err: fs.ErrExist})
	case err == unix.ENOENT || err == unix.EXDEV || err == unix.EPERM || err == unix.EOPNOTSUPP:
		// No /proc, or a filesystem that will not link the file.
		return fail(errNoTmpfile)
	default:
		return fail(&os.LinkError{Op: "link", Old: proc, New: d.join(name), Err: err})
	}
}

// lstat describes name inside d without following a link.
func (d *dir) lstat(name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return st, &fs.PathError{Op: "lstat", Path: d.join(name), Err: err}
	}
	return st, nil
}

func (d *dir) stat() (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return st, &fs.PathError{Op: "stat", Path: d.path, Err: err}
	}
	return st, nil
}

// names lists d, unsorted. It reads through a fresh descriptor so that d's
// own offset is never moved.
func (d *dir) names() ([]string, error) {
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.Readdirnames(-1)
}

// renameat is rename(2) relative to folders; tests replace it to play a
// read-only filesystem.
var renameat = unix.Renameat

func (d *dir) rename(name string, to *dir, toName string) error {
	if err := renameat(d.fd, name, to.fd, toName); err != nil {
		return &os.LinkError{Op: "rename", Old: d.join(name), New: to.join(toName), Err: err}
	}
	return nil
}

func (d *dir) unlink(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	return nil
}

// removeAll removes name inside d and everything under it. The folder is
// first renamed into tmp under a fresh name, so no reader ever sees half of
// it, then deleted (see removeTree).
func (c *Cache) removeAll(d *dir, name string) error {
	trash := "rm-" + randName()
	if err := d.rename(name, c.tmp, trash); err != nil {
		return err
	}
	return c.tmp.removeTree(trash)
}

// removeTree removes name inside d and, if it is a folder, everything under
// it, one name at a time relative to open folders: a symbolic link is
// removed, never followed, and a folder swapped for a link meanwhile cannot
// redirect the removal outside the root (os.RemoveAll, given a path, would
// resolve every element of it again). A missing name is not an error.
func (d *dir) removeTree(name string) error {
	return d.removeTreeDepth(name, 0)
}

// maxTreeDepth bounds removeTree's recursion: entries and staging folders
// are one level deep; anything much deeper was planted.
const maxTreeDepth = 16

func (d *dir) removeTreeDepth(name string, depth int) error {
	err := unix.Unlinkat(d.fd, name, 0)
	switch {
	case err == nil || err == unix.ENOENT:
		return nil
	case err != unix.EISDIR && err != unix.EPERM:
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	// A folder (Linux says EISDIR; POSIX allows EPERM).
	if depth >= maxTreeDepth {
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: errors.New("folders nested too deep")}
	}
	sub, serr := d.sub(name)
	if serr != nil {
		if errors.Is(serr, fs.ErrNotExist) {
			return nil
		}
		return serr
	}
	names, lerr := sub.names()
	if errors.Is(lerr, fs.ErrNotExist) {
		// Removed meanwhile (gc and rm may remove one folder at once): a
		// deleted folder cannot even open ".".
		lerr = nil
	}
	var first error
	for _, n := range names {
		if err := sub.removeTreeDepth(n, depth+1); err != nil && first == nil {
			first = err
		}
	}
	sub.close()
	if lerr != nil {
		return lerr
	}
	if err := unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		if first != nil {
			return first
		}
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	return nil
}

func (d *dir) sync() error {
	if err := unix.Fsync(d.fd); err != nil && err != unix.EINVAL {
		// EINVAL: the filesystem cannot sync folders; nothing more to do.
		return &fs.PathError{Op: "fsync", Path: d.path, Err: err}
	}
	return nil
}

// touch sets the mtime (and atime) of name inside d to t. A file the caller
// does not own (a shared cache) cannot take an explicit time, only "now",
// which needs write access; touch falls back to that.
func (d *dir) touch(name string, t time.Time) error {
	ts := unix.NsecToTimespec(t.UnixNano())
	err := unix.UtimesNanoAt(d.fd, name, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
	if err == unix.EPERM || err == unix.EACCES {
		now := unix.Timespec{Nsec: unix.UTIME_NOW}
		err = unix.UtimesNanoAt(d.fd, name, []unix.Timespec{now, now}, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err != nil {
		return &fs.PathError{Op: "chtimes", Path: d.join(name), Err: err}
	}
	return nil
}

func mtime(st *unix.Stat_t) time.Time { return time.Unix(st.Mtim.Unix()) }

func isDir(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFDIR }
func isReg(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFREG }

// fileType names the type of st for messages.
func fileType(st *unix.Stat_t) string {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "a regular file"
	case unix.S_IFDIR:
		return "a folder"
	case unix.S_IFLNK:
		return "a symbolic link"
	case unix.S_IFIFO:
		return "a named pipe"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	}
	return fmt.Sprintf("a file of type %#o", st.Mode&unix.S_IFMT)
}
