package hashcmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/digest"
	"github.com/urfave/cli/v2"
)

type digestOptions struct {
	memo    memoOptions
	check   bool
	quiet   bool
	status  bool
	strict  bool
	warn    bool
	ignore  bool
	verbose bool
}

const digestDescription = `Prints "HEX  PATH" for each PATH, as sha256sum does (the same digest for a
file, the same escaping of names with a backslash, newline or carriage
return; "-" or no PATH reads standard input), so its output can be checked
with sha256sum -c, and -c checks a sha256sum list.

A directory gets one digest: the SHA-256 of, for every regular file below it
in sorted order of its relative path ('/'-separated, compared name by name),
the path, a NUL, the file's bytes and a NUL (the Python aiperf's rule). Symlinks inside a directory are followed when they
resolve inside it (to a file: its bytes under the link's path; to a folder:
walked under the link's path); a symlink that leads outside, dangles or
loops, and a FIFO, socket or device anywhere, is an error naming it. A PATH
that is a FIFO or device is refused too: read a pipe as "-".

A digest memo in the cache root remembers each digest by the file's device,
inode, size, mtime and ctime, so digesting an unchanged file or tree again
costs a stat per file. An entry is not trusted when the file changed within
the file system's timestamp granularity of the stat it was made from.
-c always reads the files (a check must see the bytes).`

func digestCommand(global *memoOptions) *cli.Command {
	var o digestOptions
	o.memo.global = global
	flags := []cli.Flag{
		&cli.BoolFlag{Name: "check", Aliases: []string{"c"}, Usage: "read sha256sum lists (the PATHs, or stdin) and check the digests they list", Destination: &o.check},
		&cli.BoolFlag{Name: "quiet", Usage: "with -c: do not print OK for each file that checks", Destination: &o.quiet},
		&cli.BoolFlag{Name: "status", Usage: "with -c: print nothing; the exit status tells", Destination: &o.status},
		&cli.BoolFlag{Name: "strict", Usage: "with -c: exit 2 if a line is improperly formatted", Destination: &o.strict},
		&cli.BoolFlag{Name: "warn", Aliases: []string{"w"}, Usage: "with -c: warn about each improperly formatted line", Destination: &o.warn},
		&cli.BoolFlag{Name: "ignore-missing", Usage: "with -c: skip listed files that do not exist", Destination: &o.ignore},
		&cli.BoolFlag{Name: "v", Usage: "tell on stderr how each digest was obtained (memo or read, bytes, time)", Destination: &o.verbose},
	}
	flags = append(flags, memoFlags(&o.memo)...)
	return &cli.Command{
		Name:        "digest",
		Usage:       "print the SHA-256 of files and directories (sha256sum's format), or check a list (-c)",
		ArgsUsage:   "[PATH...] | -c [LIST...]",
		Description: digestDescription,
		Flags:       flags,
		Action: func(c *cli.Context) error {
			if !o.check {
				for _, f := range []string{"quiet", "status", "strict", "warn", "ignore-missing"} {
					if c.IsSet(f) {
						return base.UsageError("--%s is meaningful only with -c", f)
					}
				}
			}
			r := &digestRun{o: &o, stdin: c.App.Reader, stdout: bufio.NewWriterSize(c.App.Writer, 64<<10), stderr: c.App.ErrWriter, name: c.App.Name}
			defer r.stdout.Flush()
			r.useMemo(&o.memo, o.verbose)
			var err error
			if o.check {
				err = r.checkAll(c.Context, c.Args().Slice())
			} else {
				err = r.digestArgs(c.Context, c.Args().Slice())
			}
			r.flushMemo()
			return err
		},
	}
}

type digestRun struct {
	o      *digestOptions
	h      digest.Hasher
	stdin  io.Reader
	stdout *bufio.Writer
	stderr io.Writer
	name   string
	mu     sync.Mutex // guards stdout and stderr: -v events come from the hashing goroutines
	// path digests a named input (nil: h.Path); key digests a trace
	// directory by the files aiperf-tokenize reads from it.
	path func(ctx context.Context, name string) (digest.Digest, error)
}

func (r *digestRun) warnf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stdout.Flush() // keep stdout and stderr in order on a terminal
	fmt.Fprintf(r.stderr, "%s: %s\n", r.name, fmt.Sprintf(format, args...))
}

func (r *digestRun) print(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stdout.WriteString(s)
}

func (r *digestRun) logEvent(e digest.Event) {
	if e.Memo {
		r.warnf("%s: %s digest from the memo in %v (nothing read)", e.Path, e.Kind, e.Elapsed.Round(time.Microsecond))
		return
	}
	gbps := 0.0
	if s := e.Elapsed.Seconds(); s > 0 {
		gbps = float64(e.Bytes) / s / 1e9
	}
	r.warnf("%s: %s digest read %d bytes of %d file(s) in %v (%.2f GB/s)", e.Path, e.Kind, e.Bytes, e.Files, e.Elapsed.Round(time.Microsecond), gbps)
}

// useMemo gives r's hasher the memo the options choose; verbose: say on
// stderr why there is none, and how each digest was obtained.
func (r *digestRun) useMemo(o *memoOptions, verbose bool) {
	var note string
	r.h.Memo, note = openMemo(o)
	if verbose {
		if note != "" {
			r.warnf("digest memo off: %s", note)
		}
		r.h.OnDone = r.logEvent
	}
}

func (r *digestRun) flushMemo() {
	if r.h.Memo == nil {
		return
	}
	if err := r.h.Memo.Flush(); err != nil && r.o.verbose {
		r.warnf("digest memo not saved: %v", err)
	}
}

// digestAll digests names in parallel and hands the results to emit in
// order (digest.Hasher.Each), "-" reading stdin.
func (r *digestRun) digestAll(ctx context.Context, names []string, emit func(i int, res result)) {
	r.h.Each(ctx, names, r.stdin, r.path, func(i int, d digest.Digest, err error) { emit(i, result{d, err}) })
}

// result is the outcome of digesting one name.
type result struct {
	d   digest.Digest
	err error
}

func (r *digestRun) digestArgs(ctx context.Context, names []string) error {
	if len(names) == 0 {
		names = []string{"-"}
	}
	failed := false
	r.digestAll(ctx, names, func(i int, res result) {
		if res.err != nil {
			failed = true
			if !errors.Is(res.err, context.Canceled) {
				r.warnf("%v", pathMessage(res.err))
			}
			return
		}
		r.print(digest.FormatLine(res.d.Sum, names[i]))
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	if failed {
		return &base.Error{Code: base.ExitTrouble} // each error was printed
	}
	return nil
}

// pathMessage drops the operation from an *fs.PathError ("open x: no such
// file" reads as "x: no such file or directory"), the way sha256sum words
// its errors.
func pathMessage(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Error() == err.Error() {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}
