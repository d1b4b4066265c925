package cachecmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aiperf/toolkit/lib/cache"
	"github.com/aiperf/toolkit/lib/cachedir"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/urfave/cli/v2"
)

// OutEnv names the variable that tells ensure's CMD where to write.
const OutEnv = "AIPERF_CACHE_OUT"

type ensureOptions struct {
	lockTimeout time.Duration
	lockReport  time.Duration
	restore     cache.RestoreOptions
	explain     string
	explainFile string
}

func ensureCommand(o *options) *cli.Command {
	var eo ensureOptions
	flags := []cli.Flag{
		&cli.DurationFlag{Name: "lock-timeout", Value: 30 * time.Minute, Usage: "after waiting `DUR` for another builder's lock, warn and build without it (0: wait as long as it takes; a lock file of another host is then never broken)", Destination: &eo.lockTimeout},
		&cli.DurationFlag{Name: "lock-report", Value: 10 * time.Second, Usage: "while waiting, say every `DUR` who holds the lock", Destination: &eo.lockReport},
		&cli.BoolFlag{Name: "copy", Usage: "restore a copy instead of a hard link", Destination: &eo.restore.Copy},
	}
	return &cli.Command{
		Name:  "ensure",
		Usage: "restore KEY to DEST, building it first with CMD if the cache does not have it",
		Description: "The get-or-build step for Makefiles and pipelines. On a miss, ensure takes KEY's lock, looks\n" +
			"again, and runs CMD with $" + OutEnv + " naming where to write: a file path named like DEST,\n" +
			"or, when DEST is a folder (it exists, or ends in /), a folder for CMD to fill. Every file CMD\n" +
			"leaves there becomes the entry, published atomically; then DEST is restored from it. If CMD\n" +
			"fails, ensure exits with CMD's status and caches nothing. Waiters report who holds the lock\n" +
			"every --lock-report; past --lock-timeout they build without it (safe: populate is atomic).\n" +
			"A builder killed by any signal releases its lock with its process; SIGINT or SIGTERM to ensure\n" +
			"stops CMD's whole process group. A *.aipk that CMD leaves must start like a store.\n" +
			"DEST's folder must exist. A restored DEST has the time of the restore as its mtime, so make\n" +
			"sees it as new. On a cache it cannot write (read-only or full, no root), a miss still builds\n" +
			"DEST, beside it, with a warning that nothing was cached. With --explain (the key's\n" +
			"aiperf-hash key --explain text) a store CMD built with other settings than the key describes\n" +
			"is refused, naming the fields that differ, and nothing is cached.\n\n" +
			"  aiperf-hash key --explain --model m t.jsonl > store.explain\n" +
			"  aiperf-cache ensure --explain-file store.explain \"$KEY\" store.aipk -- \\\n" +
			"    sh -c 'aiperf-tokenize t.jsonl | aiperf-pack --model m -o \"$" + OutEnv + "\"'",
		ArgsUsage: "KEY DEST -- CMD [ARGS...]",
		Flags:     append(flags, explainFlags(&eo.explain, &eo.explainFile)...),
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) >= 3 && args[2] == "--" {
				args = slices.Delete(args, 2, 3)
			}
			if len(args) < 3 {
				return base.UsageError("ensure: want KEY DEST -- CMD [ARGS...]")
			}
			k, err := keyArg(c, args[0])
			if err != nil {
				return err
			}
			if err := checkDest("ensure", args[1]); err != nil {
				return err // before CMD runs, not after a long build
			}
			explain, err := readExplain(k, eo.explain, eo.explainFile)
			if err != nil {
				return err
			}
			cc, err := o.open(c)
			if unwritable(err) {
				return o.buildUncached(c, k, args[1], args[2:], err)
			}
			if err != nil {
				return err
			}
			defer cc.Close()
			return o.ensure(c, cc, k, args[1], args[2:], explain, &eo)
		},
	}
}

// errGone: an entry that another process built while ensure waited for
// the lock was removed (by gc, rm or a size-capped populate) before ensure
// could restore it.
var errGone = errors.New("entry removed before it was restored")

// ensureAttempts bounds how often ensure starts over when an entry another
// process built is removed before ensure restores it. The last attempt
// takes the lock whatever happens meanwhile, and under it nothing can go:
// a hit that vanishes is rebuilt, and a build restores DEST from its own
// files (Staging.PublishRestore).
const ensureAttempts = 3

func (o *options) ensure(c *cli.Context, cc *cache.Cache, k cache.Key, dest string, argv []string, explain string, eo *ensureOptions) error {
	for i := 1; ; i++ {
		err := o.ensureOnce(c, cc, k, dest, argv, explain, eo, i == ensureAttempts)
		if !errors.Is(err, errGone) {
			return err
		}
		o.logf(c, "%s was removed before it was restored; looking again", k)
	}
}

// tryRestore restores k's entry to DEST; hit is false on a miss (the entry
// is not there, or was removed while it was restored).
func (o *options) tryRestore(c *cli.Context, cc *cache.Cache, k cache.Key, dest string, opt cache.RestoreOptions) (hit bool, err error) {
	rs, err := cc.Restore(k, dest, opt)
	if errors.Is(err, cache.ErrMiss) {
		o.logf(c, "miss: %v", err)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	o.logRestored(c, rs)
	return true, nil
}

func (o *options) logRestored(c *cli.Context, rs []cache.Restored) {
	for _, r := range rs {
		how := "copied"
		if r.Linked {
			how = "linked"
		}
		o.logf(c, "%s %s to %s", how, r.Name, r.Path)
	}
}

// ensureOnce is one attempt of ensure. last: wait for the lock even when
// the entry appears meanwhile.
func (o *options) ensureOnce(c *cli.Context, cc *cache.Cache, k cache.Key, dest string, argv []string, explain string, eo *ensureOptions, last bool) error {
	if _, err := cc.Lookup(k); err == nil {
		o.logf(c, "hit %s", k)
		if hit, err := o.tryRestore(c, cc, k, dest, eo.restore); hit || err != nil {
			return err
		}
		// Removed between the lookup and the restore: build it.
	}
	stop := func() bool { _, err := cc.Lookup(k); return err == nil }
	if last {
		stop = nil
	}
	lk, err := cc.Lock(c.Context, k, cache.LockOptions{
		Timeout: eo.lockTimeout,
		Report:  eo.lockReport,
		OnWait: func(h cache.Holder, waited time.Duration) {
			fmt.Fprintf(c.App.ErrWriter, "aiperf-cache: waiting for the lock on %s, held by %v (waited %v)\n", k, h, waited.Truncate(100*time.Millisecond))
		},
		Stop: stop,
	})
	switch {
	case errors.Is(err, cache.ErrLockStopped):
		o.logf(c, "%s was built by another process while we waited", k)
		if hit, err := o.tryRestore(c, cc, k, dest, eo.restore); hit || err != nil {
			return err
		}
		return errGone
	case errors.Is(err, cache.ErrLockTimeout):
		fmt.Fprintf(c.App.ErrWriter, "aiperf-cache: warning: %v; building without the lock (populate is atomic; the work may be done twice)\n", err)
	case errors.Is(err, context.Canceled):
		return err
	case err != nil:
		return o.buildUncached(c, k, dest, argv, err)
	default:
		// Held until DEST is restored: gc and size-capped populates leave
		// the entry of a held key alone (rm does not: a hit removed now is
		// rebuilt).
		defer lk.Release()
	}
	if _, err := cc.Lookup(k); err == nil {
		o.logf(c, "%s was built by another process while we waited", k)
		if hit, err := o.tryRestore(c, cc, k, dest, eo.restore); hit || err != nil {
			return err
		}
	}

	st, err := cc.Stage()
	if err != nil {
		return o.buildUncached(c, k, dest, argv, err)
	}
	defer st.Abort()
	out, primary := st.Dir(), ""
	if !isDirDest(dest) {
		primary = entryFileName(filepath.Base(dest))
		out = filepath.Join(st.Dir(), primary)
	}
	o.logf(c, "miss %s: running %s with %s=%s", k, shellQuote(argv), OutEnv, shellQuote([]string{out}))
	if err := run(c, argv, out, k); err != nil {
		return err
	}
	if err := adoptOutputs(st, primary); err != nil {
		return err
	}
	e, stored, rs, err := st.PublishRestore(k, explain, dest, eo.restore)
	if err != nil {
		return err
	}
	if stored {
		o.logf(c, "stored %s: %d file(s), %s", k, len(e.Manifest.Files), cache.FormatSize(e.Size()))
	}
	o.logRestored(c, rs)
	return nil
}

// shellQuote prints argv as a shell command line that runs it: words of
// plain characters as they are, others in single quotes.
func shellQuote(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		plain := a != ""
		for _, r := range a {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r)) {
				plain = false
				break
			}
		}
		if plain {
			b.WriteString(a)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(a, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}

// unwritable reports whether err says the cache root cannot be made or
// written here (rather than that it is damaged or of a newer layout, which
// ensure reports).
func unwritable(err error) bool {
	return err != nil && (errors.Is(err, cachedir.ErrNoRoot) || errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) ||
		errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT))
}

// buildUncached runs CMD for a cache it cannot write (cause: taking the
// lock or staging failed: a read-only or full filesystem, a root of another
// user, a damaged layout). DEST is still what ensure is for, so CMD writes
// into a temporary folder beside DEST, whose files then replace DEST (or
// go into the folder DEST) by renames, as a restore would put them; nothing
// is cached, which a warning says.
func (o *options) buildUncached(c *cli.Context, k cache.Key, dest string, argv []string, cause error) error {
	fmt.Fprintf(c.App.ErrWriter, "aiperf-cache: warning: cannot write the cache (%v); building %s without caching it\n", cause, dest)
	dirDest := isDirDest(dest)
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
		tmp = abs // CMD may change its directory before it writes
	}
	out, primary := tmp, ""
	if !dirDest {
		primary = filepath.Base(dest)
		out = filepath.Join(tmp, primary)
	}
	o.logf(c, "miss %s: running %s with %s=%s", k, shellQuote(argv), OutEnv, shellQuote([]string{out}))
	if err := run(c, argv, out, k); err != nil {
		return err
	}
	if !dirDest {
		if fi, err := os.Lstat(out); err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("ensure: CMD succeeded but did not write $%s (%s) as a regular file", OutEnv, out)
		}
		return os.Rename(out, dest)
	}
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

// entryFileName is the name of the entry file made for a file DEST named
// base: base itself when an entry file may have it, else base without its
// leading dots, else "store.aipk" or "out", keeping a .aipk suffix (and with
// it the store check); restore puts the file at DEST under DEST's own name
// either way.
func entryFileName(base string) string {
	if cache.ValidFileName(base) == nil {
		return base
	}
	store := strings.HasSuffix(base, ".aipk")
	if n := strings.TrimLeft(base, "."); cache.ValidFileName(n) == nil && strings.HasSuffix(n, ".aipk") == store {
		return n
	}
	if store {
		return "store.aipk"
	}
	return "out"
}

// checkDest refuses a file DEST whose folder is missing or not a folder
// (restore writes DEST by a rename inside that folder, and does not create
// it; a folder DEST, ending in a slash, is created with its parents).
func checkDest(verb, dest string) error {
	if isDirDest(dest) {
		return nil
	}
	parent := filepath.Dir(dest)
	fi, err := os.Stat(parent)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: DEST %s: its folder %s does not exist", verb, dest, parent)
	case err != nil:
		return fmt.Errorf("%s: DEST %s: %w", verb, dest, err)
	case !fi.IsDir():
		return fmt.Errorf("%s: DEST %s: %s is not a folder", verb, dest, parent)
	}
	return nil
}

// isDirDest reports whether dest names a folder.
func isDirDest(dest string) bool {
	if strings.HasSuffix(dest, "/") {
		return true
	}
	fi, err := os.Stat(dest)
	return err == nil && fi.IsDir()
}

// run runs argv with OutEnv set, passing its exit status through, under a
// guard process (see guard.go) where there is one.
func run(c *cli.Context, argv []string, out string, k cache.Key) error {
	// CMD must be there: say so here, as exec would (exit 2), rather than
	// through the guard.
	if _, err := exec.LookPath(argv[0]); err != nil {
		return fmt.Errorf("ensure: %w", err)
	}
	var cmd *exec.Cmd
	exe, exeErr := os.Executable()
	if attr := guardProcAttr(); attr != nil && exeErr == nil {
		cmd = exec.CommandContext(c.Context, exe, append([]string{guardName, "0", out, k.String()}, argv...)...)
		cmd.Args[0] = c.App.Name // the name the binary answers to (testscript dispatches on it)
		cmd.Env = withoutEnv(os.Environ(), OutEnv, "AIPERF_CACHE_KEY")
		cmd.SysProcAttr = attr
	} else {
		cmd = exec.CommandContext(c.Context, argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), OutEnv+"="+out, "AIPERF_CACHE_KEY="+k.String())
		cmd.SysProcAttr = sysProcAttr()
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.App.Reader, c.App.Writer, c.App.ErrWriter
	// CMD gets a process group of its own, so that stopping it stops every
	// process it started (the stages of `sh -c 'a | b'`; a shell does not
	// pass SIGTERM on to them), unless stdin is a terminal: a background
	// group reading it would be stopped, and the terminal's Ctrl-C reaches
	// the whole foreground group anyway.
	stdin, _ := c.App.Reader.(*os.File)
	group := cmd.SysProcAttr != nil && !(stdin != nil && isTerminal(stdin))
	if group {
		cmd.SysProcAttr.Setpgid = true
		if cmd.Args[1] == guardName {
			cmd.Args[2] = "1"
		}
	}
	signal := func(sig syscall.Signal) error {
		if group {
			return syscall.Kill(-cmd.Process.Pid, sig)
		}
		return cmd.Process.Signal(sig)
	}
	// On SIGINT/SIGTERM ask CMD to stop too, then kill it if it lingers.
	cmd.Cancel = func() error { return signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	// The parent-death signal is tied to the thread that forks; keep this
	// goroutine on it until CMD is done.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err := cmd.Run()
	if c.Context.Err() != nil {
		if group {
			signal(syscall.SIGKILL) // what is left of the group once the shell is gone
		}
		return c.Context.Err()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code := ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		if code <= 0 {
			code = base.ExitTrouble
		}
		return &base.Error{Code: code, Err: fmt.Errorf("ensure: %s exited with status %d; nothing cached", argv[0], code)}
	}
	if err != nil {
		return fmt.Errorf("ensure: %w", err)
	}
	return nil
}

// withoutEnv returns env without the variables named.
func withoutEnv(env []string, names ...string) []string {
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
}

// adoptOutputs takes what CMD wrote into the staging folder into the entry:
// primary first (it must exist), then every other file by name, stores
// before anything else. Hidden files (a CMD's own temporaries) are removed.
func adoptOutputs(st *cache.Staging, primary string) error {
	ents, err := os.ReadDir(st.Dir())
	if err != nil {
		return err
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") {
			os.RemoveAll(filepath.Join(st.Dir(), n))
			continue
		}
		if !e.Type().IsRegular() {
			return fmt.Errorf("ensure: CMD left %s in %s, which is not a regular file", n, OutEnv)
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
		if _, err := os.Lstat(filepath.Join(st.Dir(), primary)); err != nil {
			return fmt.Errorf("ensure: CMD succeeded but did not write $%s (%s)", OutEnv, filepath.Join(st.Dir(), primary))
		}
		names = append([]string{primary}, names...)
	}
	if len(names) == 0 {
		return fmt.Errorf("ensure: CMD succeeded but wrote nothing into $%s (%s)", OutEnv, st.Dir())
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

// zstdMagic opens every zstd frame (aiperf-pack --compress writes one).
const zstdMagic = "\x28\xb5\x2f\xfd"

// checkStoreName refuses a file named *.aipk that starts neither like a
// store nor like a zstd stream (of one): an empty file a shell redirection
// left, or an error message, would otherwise be cached and served for good.
// (A file that starts like a store is checked whole by lib/cache.)
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
