package cache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aiperf/toolkit/lib/cachedir"
	"golang.org/x/sys/unix"
)

// Key locks.
//
// A key's lock is the file locks/XX/NAME. Whoever builds an entry holds an
// exclusive flock(2) on it, which the kernel drops when the holder's
// process dies, however it dies: a SIGKILLed builder never wedges anyone.
// While holding it, the holder writes "v1 HOST PID UNIX_NS" into the file so
// that waiters can say who they wait for.
//
// On a filesystem without flock (some NFS and FUSE mounts answer ENOLCK or
// EOPNOTSUPP), or with Options.LockFile, the lock is instead the existence
// of locks/XX/NAME.held, created atomically (link(2) of a complete temporary
// file, which NFS does atomically too) with the same line. It is stale, and
// broken by the next comer, once its holder is gone: on this host, when no
// process has its pid; on another host, once it is older than the lock
// timeout.
//
// Either way the lock only saves duplicate work: populate is atomic, so two
// builders of one key still leave one complete entry.

// ErrLockTimeout is returned by Lock when the lock stayed held past the timeout.
var ErrLockTimeout = errors.New("cache: lock timeout")

// ErrLockStopped is returned by Lock when LockOptions.Stop said to stop waiting.
var ErrLockStopped = errors.New("cache: stopped waiting for the lock")

// Holder describes who holds a lock, as far as its lock file tells.
type Holder struct {
	Host  string
	PID   int
	Since time.Time
}

func (h Holder) String() string {
	if h.PID == 0 {
		return "an unknown process"
	}
	return fmt.Sprintf("pid %d on %s since %s", h.PID, h.Host, h.Since.Format(time.RFC3339))
}

func (h Holder) line() string {
	return fmt.Sprintf("v1 %s %d %d\n", h.Host, h.PID, h.Since.UnixNano())
}

func parseHolder(b []byte) (Holder, bool) {
	f := strings.Fields(string(b))
	if len(f) != 4 || f[0] != "v1" {
		return Holder{}, false
	}
	pid, err1 := strconv.Atoi(f[2])
	ns, err2 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return Holder{}, false
	}
	return Holder{Host: f[1], PID: pid, Since: time.Unix(0, ns)}, true
}

// LockOptions configures Lock.
type LockOptions struct {
	// Timeout bounds the wait; past it Lock returns ErrLockTimeout. Zero
	// means wait until ctx is done.
	Timeout time.Duration
	// Report is how often OnWait is called while waiting (zero: never).
	Report time.Duration
	// OnWait is told who holds the lock and how long the caller has waited.
	OnWait func(h Holder, waited time.Duration)
	// Stop is asked between attempts; when it returns true Lock gives up
	// with ErrLockStopped (ensure stops once the entry is complete).
	Stop func() bool
}

// Lock is a held key lock.
type Lock struct {
	sh   *dir
	name string
	f    *os.File // the flocked file; nil for a lock file
	held string   // the lock file's name, for a lock file
	line string
}

// lockPoll bounds the time between two attempts to take a lock.
const (
	lockPollMin = 5 * time.Millisecond
	lockPollMax = 250 * time.Millisecond
)

// Lock takes k's lock, waiting as opt says.
func (c *Cache) Lock(ctx context.Context, k Key, opt LockOptions) (*Lock, error) {
	sh, err := c.locks.mkSub(k.shard(), cachedir.DirMode(c.shared))
	if err != nil {
		return nil, err
	}
	l, err := c.lockIn(ctx, sh, k.name(), opt)
	if err != nil {
		sh.close()
		return nil, err
	}
	return l, nil
}

func (c *Cache) lockIn(ctx context.Context, sh *dir, name string, opt LockOptions) (*Lock, error) {
	start := c.now()
	delay := lockPollMin
	nextReport := opt.Report
	useFile := c.opt.LockFile
	for {
		var (
			l   *Lock
			h   Holder
			err error
		)
		if !useFile {
			l, h, err = c.tryFlock(sh, name)
			if errors.Is(err, errNoFlock) {
				useFile = true
				continue
			}
		} else {
			l, h, err = c.tryLockFile(sh, name, opt.Timeout)
		}
		if err != nil || l != nil {
			return l, err
		}
		if opt.Stop != nil && opt.Stop() {
			return nil, ErrLockStopped
		}
		waited := c.now().Sub(start)
		if opt.Timeout > 0 && waited >= opt.Timeout {
			return nil, fmt.Errorf("%w: held by %v for more than %v", ErrLockTimeout, h, opt.Timeout)
		}
		if opt.Report > 0 && waited >= nextReport {
			if opt.OnWait != nil {
				opt.OnWait(h, waited)
			}
			for nextReport <= waited {
				nextReport += opt.Report
			}
		}
		if err := c.opt.Sleep(ctx, delay); err != nil {
			return nil, err
		}
		delay = min(2*delay, lockPollMax)
	}
}

var errNoFlock = errors.New("filesystem without flock")

// tryLock makes one non-blocking flock(2) attempt on f. Tests replace it to
// play a filesystem that answers ENOLCK, as some NFS and FUSE mounts do.
var tryLock = func(f *os.File) (bool, error) {
	for {
		switch err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err {
		case nil:
			return true, nil
		case unix.EINTR:
		case unix.EWOULDBLOCK:
			return false, nil
		default:
			return false, &fs.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
	}
}

// unlockFile drops f's flock, if it holds one, and closes it.
func unlockFile(f *os.File) {
	if f != nil {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}
}

// openLock opens the lock file name inside d, creating it when create is
// set, and returns the descriptor to flock: the file is never opened again
// by its path, so a gc that removes it in between cannot make the lock fail
// (the inode check of the caller then sees that the file is no longer the
// path's). It is opened for writing too where it may be (the holder writes
// who it is into it), else read-only (another user's file in a shared root
// made before lock files were group-writable). A name that is not a regular
// file is refused (errNotRegular).
func (c *Cache) openLock(d *dir, name string, create bool) (*os.File, error) {
	if create {
		f, err := d.create(name, c.fileMode(true))
		if err == nil || !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	f, err := d.open(name, unix.O_RDWR, 0)
	if errors.Is(err, fs.ErrPermission) {
		f, err = d.open(name, unix.O_RDONLY, 0)
	}
	return f, err
}

// noFlock reports whether err says the filesystem cannot flock.
func noFlock(err error) bool {
	return errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL)
}

// tryFlock makes one attempt at the flock of sh/name. It returns the lock,
// or nil and what the lock file says about its holder.
func (c *Cache) tryFlock(sh *dir, name string) (*Lock, Holder, error) {
	for range stageAttempts {
		l, h, retry, err := c.tryFlockOnce(sh, name)
		if !retry {
			return l, h, err
		}
	}
	return nil, Holder{}, fmt.Errorf("lock %s: the lock file keeps changing under us", sh.join(name))
}

func (c *Cache) tryFlockOnce(sh *dir, name string) (l *Lock, h Holder, retry bool, err error) {
	me := Holder{Host: c.host, PID: os.Getpid(), Since: c.now()}.line()
	// A new lock file appears locked (see createLocked).
	f, ferr, err := c.createLocked(sh, name, me)
	switch {
	case err == nil && ferr == nil:
		return &Lock{sh: sh, name: name, f: f, line: me}, Holder{}, false, nil
	case err == nil:
		f.Close()
		if noFlock(ferr) {
			return nil, Holder{}, false, errNoFlock
		}
		return nil, Holder{}, false, fmt.Errorf("lock %s: %w", sh.join(name), ferr)
	case errors.Is(err, fs.ErrExist):
		f, err = c.openLock(sh, name, false)
	case errors.Is(err, errNoTmpfile):
		f, err = c.openLock(sh, name, true)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Holder{}, true, nil // there, then removed by gc: make it again
	}
	if err != nil {
		return nil, Holder{}, false, fmt.Errorf("lock %s: %w", sh.join(name), unwrapPath(err))
	}
	ok, err := tryLock(f)
	if err != nil {
		f.Close()
		if noFlock(err) {
			return nil, Holder{}, false, errNoFlock
		}
		return nil, Holder{}, false, fmt.Errorf("lock %s: %w", sh.join(name), err)
	}
	if !ok {
		f.Close()
		b, _ := readSmall(sh, name, 4096)
		h, _ := parseHolder(b)
		return nil, h, false, nil
	}
	if !c.sameFile(f, sh, name) {
		// gc removed the file between our open and our lock: lock the new one.
		unlockFile(f)
		return nil, Holder{}, true, nil
	}
	l = &Lock{sh: sh, name: name, f: f}
	l.line = Holder{Host: c.host, PID: os.Getpid(), Since: c.now()}.line()
	l.writeInfo(l.line)
	return l, Holder{}, false, nil
}

// sameFile reports whether f is the file sh/name.
func (c *Cache) sameFile(f *os.File, sh *dir, name string) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, err := sh.lstat(name)
	if err != nil {
		return false
	}
	held, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint64(held.Ino) == uint64(st.Ino) && uint64(held.Dev) == uint64(st.Dev)
}

// writeInfo replaces what the held lock file says (best effort: a file
// opened read-only keeps what it said).
func (l *Lock) writeInfo(line string) {
	if l.f.Truncate(0) == nil {
		l.f.WriteAt([]byte(line), 0)
	}
}

// tryLockFile makes one attempt at the lock file sh/name.held.
func (c *Cache) tryLockFile(sh *dir, name string, timeout time.Duration) (*Lock, Holder, error) {
	for range 8 {
		l, h, retry, err := c.tryLockFileOnce(sh, name, timeout)
		if !retry {
			return l, h, err
		}
	}
	return nil, Holder{}, fmt.Errorf("lock %s.held: the lock file keeps changing under us", sh.join(name))
}

func (c *Cache) tryLockFileOnce(sh *dir, name string, timeout time.Duration) (*Lock, Holder, bool, error) {
	held := name + ".held"
	me := Holder{Host: c.host, PID: os.Getpid(), Since: c.now()}
	err := c.writeFile(sh, held, []byte(me.line()), c.fileMode(true))
	if err == nil {
		return &Lock{sh: sh, name: name, held: held, line: me.line()}, Holder{}, false, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, Holder{}, false, fmt.Errorf("lock %s: %w", sh.join(held), err)
	}
	b, err := readSmall(sh, held, 4096)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Holder{}, true, nil // released meanwhile
	}
	h, ok := parseHolder(b)
	// A lock file is a regular file; anything else in its place (a named
	// pipe) was planted, and holds no lock.
	if errors.Is(err, errNotRegular) || c.stale(h, ok, sh, held, timeout) {
		// Break it: move it aside (one breaker wins the rename), then retry.
		aside := held + ".stale-" + randName()
		if sh.rename(held, sh, aside) == nil {
			sh.unlink(aside)
		}
		return nil, Holder{}, true, nil
	}
	return nil, h, false, nil
}

// stale reports whether a lock file's holder is gone: a process of this host
// that no longer exists, or, for a holder on another host (whose processes
// cannot be seen from here), a lock older than the timeout.
func (c *Cache) stale(h Holder, ok bool, sh *dir, held string, timeout time.Duration) bool {
	if !ok {
		// Unreadable content: judge by the file's age alone.
		st, err := sh.lstat(held)
		return err == nil && timeout > 0 && c.now().Sub(mtime(&st)) > timeout
	}
	if h.Host == c.host {
		return !alive(h.PID) // known for sure: age does not matter
	}
	return timeout > 0 && c.now().Sub(h.Since) > timeout
}

// alive reports whether a process with this pid exists on this host.
func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}

// Release gives the lock up.
func (l *Lock) Release() error {
	if l == nil || l.sh == nil {
		return nil
	}
	defer func() { l.sh.close(); l.sh = nil }()
	if l.f != nil {
		l.writeInfo("")
		err := unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
		l.f.Close()
		l.f = nil
		return err
	}
	// Remove the lock file only if it is still ours (not broken and retaken).
	b, err := readSmall(l.sh, l.held, 4096)
	if err == nil && string(b) == l.line {
		return l.sh.unlink(l.held)
	}
	return nil
}
