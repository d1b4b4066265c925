package cachecmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/aiperf/toolkit/lib/cache"
	"github.com/aiperf/toolkit/lib/cachedir"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/internal/term"
	"github.com/urfave/cli/v2"
)

// OutEnv names the variable that tells ensure's CMD where to write.
const OutEnv = cache.OutEnv

type ensureOptions struct {
	lockTimeout time.Duration
	lockReport  time.Duration
	restore     cache.RestoreOptions
	explain     string
	explainFile string
	unchecked   bool
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
			"DEST, beside it, with a warning that nothing was cached. A store CMD built with other settings than\n" +
			"--explain (aiperf-hash key --explain's text), else the note aiperf-hash key left in the root for KEY,\n" +
			"describes is refused, naming the fields that differ, and nothing is cached (--unchecked: no note).\n\n" +
			"  aiperf-hash key --explain --model m t.jsonl > store.explain\n" +
			"  aiperf-cache ensure --explain-file store.explain \"$KEY\" store.aipk -- \\\n" +
			"    sh -c 'aiperf-tokenize t.jsonl | aiperf-pack --model m -o \"$" + OutEnv + "\"'",
		ArgsUsage: "KEY DEST -- CMD [ARGS...]",
		Flags:     append(flags, explainFlags(&eo.explain, &eo.explainFile, &eo.unchecked)...),
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
				warnUncached(c, err, args[1])
				return cache.BuildUncached(args[1], o.builder(c, k, args[2:]))
			}
			if err != nil {
				return err
			}
			defer cc.Close()
			return o.ensure(c, cc, k, args[1], args[2:], explain, &eo)
		},
	}
}

func (o *options) ensure(c *cli.Context, cc *cache.Cache, k cache.Key, dest string, argv []string, explain string, eo *ensureOptions) error {
	ki := o.keyInfo(c, cc, k, explain, eo.unchecked)
	return ki.annotate(cc.Ensure(c.Context, k, dest, o.builder(c, k, argv), cache.EnsureOptions{
		Lock: cache.LockOptions{
			Timeout: eo.lockTimeout,
			Report:  eo.lockReport,
			OnWait: func(h cache.Holder, waited time.Duration) {
				fmt.Fprintf(c.App.ErrWriter, "aiperf-cache: waiting for the lock on %s, held by %v (waited %v)\n", k, h, waited.Truncate(100*time.Millisecond))
			},
		},
		Restore: eo.restore,
		Explain: ki.explain,
		Inputs:  ki.inputs,
		Logf:    func(format string, args ...any) { o.logf(c, format, args...) },
		OnLockTimeout: func(err error) {
			fmt.Fprintf(c.App.ErrWriter, "aiperf-cache: warning: %v; building without the lock (populate is atomic; the work may be done twice)\n", err)
		},
		OnUncached: func(cause error) { warnUncached(c, cause, dest) },
	}))
}

// builder returns the build of ensure: CMD run with $OutEnv naming out.
func (o *options) builder(c *cli.Context, k cache.Key, argv []string) cache.BuildFunc {
	return func(out string) error {
		o.logf(c, "miss %s: running %s with %s=%s", k, shellQuote(argv), OutEnv, shellQuote([]string{out}))
		return run(c, argv, out, k)
	}
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

// warnUncached says that ensure builds DEST without the cache, and why.
func warnUncached(c *cli.Context, cause error, dest string) {
	fmt.Fprintf(c.App.ErrWriter, "aiperf-cache: warning: cannot write the cache (%v); building %s without caching it\n", cause, dest)
}

// checkDest refuses a file DEST whose folder is missing or not a folder
// (restore writes DEST by a rename inside that folder, and does not create
// it; a folder DEST, ending in a slash, is created with its parents).
func checkDest(verb, dest string) error {
	if cache.IsDirDest(dest) {
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

// run runs argv with OutEnv set, passing its exit status through, under a
// guard process (see guard.go) where there is one.
func run(c *cli.Context, argv []string, out string, k cache.Key) error {
	// CMD must be there: say so here, as exec would (exit 2), rather than
	// through the guard.
	if _, err := exec.LookPath(argv[0]); err != nil {
		return fmt.Errorf("ensure: %w", err)
	}
	cmd := command(c, argv, out, k)
	// CMD gets a process group of its own, so that stopping it stops every
	// process it started (the stages of `sh -c 'a | b'`; a shell does not
	// pass SIGTERM on to them), unless stdin is a terminal: a background
	// group reading it would be stopped, and the terminal's Ctrl-C reaches
	// the whole foreground group anyway.
	stdin, _ := c.App.Reader.(*os.File)
	group := cmd.SysProcAttr != nil && !(stdin != nil && term.Is(stdin))
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
		code := exitStatus(ee)
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

// command makes the process that runs argv: the guard (see guard.go)
// running it where there is one, else argv itself.
func command(c *cli.Context, argv []string, out string, k cache.Key) *exec.Cmd {
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
	return cmd
}

// exitStatus is the status CMD exited with, 128+N when signal N ended it
// (as a shell reports it).
func exitStatus(ee *exec.ExitError) int {
	code := ee.ExitCode()
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	return code
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
