// Package atomicfile writes files that appear complete or not at all: data goes
// to a temporary file in the destination's directory, is synced, and is renamed
// over the destination (the shape of Go's cmd/go/internal/renameio).
//
// Every writer of a file in this module goes through it, so its rules hold for
// all of them:
//
//   - The destination must be absent or a regular file. A symbolic link is
//     followed: the file it points to is replaced and the link stays. Anything
//     else (a device such as /dev/full, a FIFO, a socket, a directory) is
//     refused with an error wrapping ErrNotRegular, because renaming over it
//     would silently replace the node with a regular file. The check runs at
//     Create and again just before the rename. Callers that want to write to a
//     pipe or a terminal stream to it themselves; none does today (a store is
//     never written to stdout).
//   - The temporary file is named ".<base>.tmp-<host>-<pid>-<random>", where
//     host is a hash of the host name and pid the writer's process id, and the
//     writer holds an exclusive flock(2) on it for as long as it is open.
//   - Create removes stale temporary files in the destination's directory: a
//     file of that pattern is removed only when its host tag is this host's,
//     its pid is not a running process here, and its lock can be taken. The
//     host check keeps a sweep on a shared file system from judging another
//     machine's pids; the lock covers what a pid cannot tell (a pid reused by
//     an unrelated process only keeps a stale file a little longer, and a
//     writer in another pid namespace on the same kernel still holds its lock).
//   - Writers that make the temporary file themselves (a hard link, a file
//     opened relative to a directory descriptor) take its name from TempName,
//     which sweeps the same way, so the rules hold for them too. Options
//     covers the other variations: the committed permissions, replacing
//     what is at the name itself (NoFollow) and creating a file only if it
//     is absent (NoReplace).
//   - A folder taken with Own is the writer's own (a run's -o DIR): every
//     file written directly in it is written as with NoFollow, so a link
//     planted at an output's name is replaced, never followed, except the
//     names Own was told the user gave (they keep the rule above).
//   - Live temporary files are recorded per process, so RemoveTemps can delete
//     them from a signal handler that must exit at once (a second Ctrl-C).
package atomicfile

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/aiperf/toolkit/lib/internal/filekind"
)

// ErrNotRegular is wrapped by the error Create and Commit return when the
// destination exists and is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// File is a temporary file that becomes Name on Commit. It must be either
// committed or aborted; Abort after Commit is a no-op, so `defer f.Abort()`
// is the idiom.
type File struct {
	*os.File
	name string // destination as given
	dest string // destination with symbolic links resolved: what is replaced
	opt  Options
	done bool
}

// Options are the ways a write may differ from Create's; the zero value is
// Create's behaviour.
type Options struct {
	// Perm is the permission bits the committed file gets (0o644 when zero).
	Perm fs.FileMode
	// NoFollow replaces what is at the destination itself, as rename(2)
	// does: a symbolic link is replaced, never followed, and so is a named
	// pipe or other special file (a directory still fails). It is for files
	// inside a folder others may write (a shared cache root), where a
	// planted link must not steer the write and a planted pipe must not
	// stop it.
	NoFollow bool
	// NoReplace makes Commit fail with an error wrapping fs.ErrExist when
	// the destination exists (of any type) instead of replacing it: the
	// file is linked into place (link(2)) rather than renamed, so of two
	// writers racing to create it exactly one wins.
	NoReplace bool
}

// Create starts writing name. The temporary file goes in the directory of
// name (of its target, when name is a symbolic link) so that the final rename
// stays on one file system.
func Create(name string) (*File, error) { return CreateWith(name, Options{}) }

// CreateWith is Create with options.
func CreateWith(name string, opt Options) (*File, error) {
	if !opt.NoReplace && owned(name) {
		opt.NoFollow = true
	}
	dest := name
	if !opt.NoReplace {
		var err error
		if dest, err = destination(name, !opt.NoFollow); err != nil {
			return nil, err
		}
	}
	dir, base := filepath.Split(dest)
	if dir == "" {
		dir = "."
	}
	sweep(dir)
	f, err := os.CreateTemp(dir, tempPrefix(base)+"*")
	if err != nil {
		return nil, err
	}
	register(f.Name())
	lock(f) // best effort: without it a sweeper still sees our live pid
	return &File{File: f, name: name, dest: dest, opt: opt}, nil
}

// TempName is for a writer that makes its temporary file itself (a hard
// link to another file, say) and renames it into place: it returns a fresh
// temporary name beside name, in this package's pattern, after sweeping the
// stale temporary files of that directory, and records the name for
// RemoveTemps until Release. The file has no lock, so a sweep tells it is
// live by its pid alone.
func TempName(name string) string {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	sweep(dir)
	var r [8]byte
	rand.Read(r[:])
	tmp := filepath.Join(dir, tempPrefix(base)+strconv.FormatUint(binary.LittleEndian.Uint64(r[:])>>1, 10))
	register(tmp)
	return tmp
}

// Release forgets a name TempName returned, once it was renamed or removed.
func Release(tmp string) { unregister(tmp) }

// Destination returns the path that writing name will replace: name itself,
// or the target of the symbolic link name. It fails with an error wrapping
// ErrNotRegular when that path exists and is not a regular file.
// In a folder taken with Own it is name itself (see Own).
func Destination(name string) (string, error) { return destination(name, !owned(name)) }

// destination is Destination; without follow it is name itself, whatever
// is there but a directory (Options.NoFollow).
func destination(name string, follow bool) (string, error) {
	fi, err := os.Lstat(name)
	if !follow {
		if err == nil && fi.IsDir() {
			return "", &fs.PathError{Op: "refusing to replace", Path: name, Err: fmt.Errorf("%w: it is a directory", ErrNotRegular)}
		}
		return name, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return name, nil
	}
	if err != nil {
		return "", err
	}
	dest := name
	if fi.Mode()&fs.ModeSymlink != 0 {
		if dest, err = filepath.EvalSymlinks(name); err != nil {
			// A dangling link: the rename would replace the link itself.
			return "", fmt.Errorf("refusing to replace %s: a symbolic link whose target cannot be resolved (%w)", name, err)
		}
		if fi, err = os.Lstat(dest); err != nil {
			return "", err
		}
	}
	if !fi.Mode().IsRegular() {
		return "", &fs.PathError{Op: "refusing to replace", Path: name,
			Err: fmt.Errorf("%w: it is %s", ErrNotRegular, filekind.Of(fi.Mode()))}
	}
	return dest, nil
}

// Name returns the final path of the file (not the temporary one).
func (f *File) Name() string { return f.name }

// TempName returns the path of the temporary file.
func (f *File) TempName() string { return f.File.Name() }

// Commit syncs the temporary file and renames it to its final name, then
// syncs the directory so the rename survives a crash. The file is closed
// after the rename, so its lock keeps sweepers away until it has its final
// name.
func (f *File) Commit() error {
	if f.done {
		return errors.New("atomicfile: commit after commit or abort")
	}
	f.done = true
	tmp := f.File.Name()
	defer unregister(tmp)
	fail := func(err error) error {
		f.File.Close()
		os.Remove(tmp)
		return f.Named(err)
	}
	if err := f.File.Sync(); err != nil {
		return fail(err)
	}
	perm := f.opt.Perm
	if perm == 0 {
		perm = 0o644
	}
	if err := f.File.Chmod(perm); err != nil {
		return fail(err)
	}
	if f.opt.NoReplace {
		if err := os.Link(tmp, f.dest); err != nil {
			return fail(err)
		}
		os.Remove(tmp) // before Close: the lock is held until the name is gone
	} else {
		// The destination may have changed since Create.
		if _, err := destination(f.dest, !f.opt.NoFollow); err != nil {
			return fail(err)
		}
		if err := os.Rename(tmp, f.dest); err != nil {
			return fail(err)
		}
	}
	// The data is on disk (Sync above): a failing close cannot lose it.
	f.File.Close()
	syncDir(filepath.Dir(f.dest))
	return nil
}

// Named rewrites an error about the temporary file (a failed write, say) to
// name the destination: the temporary name means nothing to a user.
func (f *File) Named(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == f.File.Name() {
		return &fs.PathError{Op: pe.Op, Path: f.name, Err: pe.Err}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &fs.PathError{Op: le.Op, Path: f.name, Err: le.Err}
	}
	return err
}

// Abort closes and removes the temporary file. It is safe to call more than once.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	tmp := f.File.Name()
	os.Remove(tmp) // before Close: the lock is held until the name is gone
	f.File.Close()
	unregister(tmp)
}

// Write writes name atomically with what fn writes: nothing of it is left
// when fn fails, and its error then names the file.
func Write(name string, fn func(io.Writer) error) error {
	f, err := Create(name)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := fn(f); err != nil {
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	return f.Commit()
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

// The process-wide set of live temporary files.
var (
	liveMu sync.Mutex
	live   = map[string]struct{}{}
)

func register(name string) {
	liveMu.Lock()
	live[name] = struct{}{}
	liveMu.Unlock()
}

func unregister(name string) {
	liveMu.Lock()
	delete(live, name)
	liveMu.Unlock()
}

// RemoveTemps removes every temporary file this process has created and not
// yet committed or aborted. It is for a signal handler that exits without
// unwinding; it is safe to call from any goroutine, and a File whose
// temporary file it removed fails its Commit.
func RemoveTemps() {
	liveMu.Lock()
	defer liveMu.Unlock()
	for name := range live {
		os.Remove(name)
	}
}

// hostTag is a short hash of the host name: temporary names carry it so that
// a sweep never judges the pids of another machine sharing the directory.
var hostTag = sync.OnceValue(func() string {
	h, _ := os.Hostname()
	s := fnv.New32a()
	s.Write([]byte(h))
	return fmt.Sprintf("%08x", s.Sum32())
})

// tempPrefix is the temporary-name prefix for a destination base name; the
// random part follows.
func tempPrefix(base string) string {
	return "." + base + ".tmp-" + hostTag() + "-" + strconv.Itoa(os.Getpid()) + "-"
}

// parseTemp reports whether name is a temporary file of this package and, if
// so, its host tag and pid.
func parseTemp(name string) (host string, pid int, ok bool) {
	i := strings.LastIndex(name, ".tmp-")
	if !strings.HasPrefix(name, ".") || i < 1 {
		return "", 0, false
	}
	parts := strings.Split(name[i+len(".tmp-"):], "-")
	if len(parts) != 3 || len(parts[0]) != 8 || parts[2] == "" {
		return "", 0, false
	}
	if _, err := strconv.ParseUint(parts[0], 16, 32); err != nil {
		return "", 0, false
	}
	if _, err := strconv.ParseUint(parts[2], 10, 64); err != nil {
		return "", 0, false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return "", 0, false
	}
	return parts[0], pid, true
}

// sweep removes the stale temporary files in dir (see the package comment
// for the rule). Errors are ignored: a sweep is a courtesy.
func sweep(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range ents {
		host, pid, ok := parseTemp(e.Name())
		if !ok || host != hostTag() || pid == self || !e.Type().IsRegular() || alive(pid) {
			continue
		}
		removeIfUnlocked(filepath.Join(dir, e.Name()))
	}
}

// The folders taken with Own: absolute path to the count of holders.
var (
	ownMu  sync.Mutex
	owners = map[string]int{}
	kept   = map[string]int{} // absolute names Own was told to follow
)

// Own takes dir as the writer's own until release is called: a file
// written directly in dir (by Create, Write, WriteFile or a check with
// Destination) replaces what is at its name, never following a link
// (Options.NoFollow), except the names in follow (outputs the user named,
// such as an HTML page put in the folder, which keep the rule of named
// outputs). It is for a run's folder, whose files are the tool's: a link
// planted at results.jsonl must not steer the write to a file elsewhere.
// Calls nest; release is safe to call more than once.
func Own(dir string, follow ...string) (release func()) {
	d := absClean(dir)
	var names []string
	for _, n := range follow {
		if n != "" {
			names = append(names, absClean(n))
		}
	}
	ownMu.Lock()
	owners[d]++
	for _, n := range names {
		kept[n]++
	}
	ownMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			ownMu.Lock()
			defer ownMu.Unlock()
			if owners[d]--; owners[d] <= 0 {
				delete(owners, d)
			}
			for _, n := range names {
				if kept[n]--; kept[n] <= 0 {
					delete(kept, n)
				}
			}
		})
	}
}

// owned reports whether name is directly in a folder taken with Own and
// not one of the names it follows.
func owned(name string) bool {
	ownMu.Lock()
	defer ownMu.Unlock()
	if len(owners) == 0 {
		return false
	}
	n := absClean(name)
	return owners[filepath.Dir(n)] > 0 && kept[n] == 0
}

func absClean(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}
