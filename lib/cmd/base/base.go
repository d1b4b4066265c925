// Package base is the shared frame of every aiperf binary: exit codes, error
// classes, the Main runner (signals, profiling), OpenInput for "-" and files,
// and the progress line.
//
// Only lib/cmd/... imports github.com/urfave/cli/v2; libraries never print.
package base

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/urfave/cli/v2"
)

// Version is stamped at build time with -ldflags '-X .../base.Version=...'.
var Version = "dev"

// Exit codes shared by every binary. Any other code must be treated as a failure;
// new codes are added only to this table.
const (
	ExitOK          = 0   // ok, or a predicate answered "yes"
	ExitNo          = 1   // a clean "no": cache miss, verify mismatch, error-rate gate exceeded
	ExitTrouble     = 2   // usage error, bad or corrupt input, I/O or network failure
	ExitInterrupted = 130 // interrupted by SIGINT/SIGTERM/SIGHUP; partial output was flushed
	// ExitPipe: the reader of standard output went away (`| head`, or a
	// stage downstream that failed and said why). The command stops without
	// a word, as coreutils do; 141 is what a shell reports for them (128 +
	// SIGPIPE), so `set -o pipefail` still sees an incomplete output.
	ExitPipe = 141
)

// ExitTable is appended to every binary's --help.
const ExitTable = `EXIT STATUS:
   0    ok (or "yes": a cache hit, a verified store)
   1    a clean "no": cache miss, verify mismatch, a gate exceeded
   2    trouble: usage error, bad input, I/O or network failure
   130  interrupted (partial output flushed first)
   141  standard output was closed by its reader (| head): a quiet stop`

// Error carries an exit code with an optional message. A nil Err is silent:
// a quiet "no" (Code 1), or trouble the command has already described on
// stderr itself (verify of several stores).
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// UsageError reports a command-line mistake (exit 2).
func UsageError(format string, args ...any) error {
	return &Error{Code: ExitTrouble, Err: fmt.Errorf(format, args...)}
}

// No reports a clean negative answer (exit 1). With an empty format it prints nothing.
func No(format string, args ...any) error {
	if format == "" {
		return &Error{Code: ExitNo}
	}
	return &Error{Code: ExitNo, Err: fmt.Errorf(format, args...)}
}

// Code returns the exit code an error maps to.
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	return ExitTrouble
}

// Main runs app with args and returns the exit code; it never calls os.Exit,
// so tests can call it. Errors are printed as "<app>: <err>" on app.ErrWriter.
// SIGINT, SIGTERM and SIGHUP cancel the context; a command that returns because of it
// exits 130.
func Main(app *cli.App, args []string) int {
	setUp(app)
	// AIPERF_CPUPROFILE=FILE writes a CPU profile of the run (for pprof).
	if name := os.Getenv("AIPERF_CPUPROFILE"); name != "" {
		if f, err := os.Create(name); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer func() { pprof.StopCPUProfile(); f.Close() }()
			}
		}
	}
	ctx, stop := notifyContext(app)
	defer stop()
	err := app.RunContext(ctx, args)
	if err == nil {
		return ExitOK
	}
	code := Code(err)
	if closedPipe(app.Writer, err) {
		// Whoever reads our output has gone: saying so would only add a
		// line to the message of the stage that failed downstream (or to
		// a head that had enough).
		return ExitPipe
	}
	if ctx.Err() != nil {
		code = ExitInterrupted
		err = errors.New("interrupted")
	}
	var e *Error
	if !(errors.As(err, &e) && e.Err == nil) {
		fmt.Fprintf(app.ErrWriter, "%s: %v\n", app.Name, err)
	}
	return code
}

// setUp gives app the house rules every binary shares: the standard
// streams (pipes grown), the version, the usage line, the exit-code table
// in the description, usage errors as exit 2, and no comma splitting of
// slice flags.
func setUp(app *cli.App) {
	if app.ErrWriter == nil {
		app.ErrWriter = os.Stderr
	}
	if app.Writer == nil {
		app.Writer = os.Stdout
	}
	if app.Reader == nil {
		app.Reader = os.Stdin
	}
	for _, s := range []any{app.Writer, app.Reader} {
		if f, ok := s.(*os.File); ok {
			growPipe(f)
		}
	}
	app.Version = Version
	sharedFlagsOnce.Do(setSharedFlags)
	if app.UsageText == "" && app.Action != nil {
		app.UsageText = usageText(app)
	}
	app.HideHelpCommand = true
	app.DisableSliceFlagSeparator = true // --extra '{"a":1,"b":2}' must not split on commas
	app.ExitErrHandler = func(*cli.Context, error) {}
	app.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return &Error{Code: ExitTrouble, Err: err}
	}
	if !strings.Contains(app.Description, "EXIT STATUS") {
		if app.Description != "" {
			app.Description += "\n\n"
		}
		app.Description += ExitTable
	}
	for _, c := range app.Commands {
		if c.OnUsageError == nil {
			c.OnUsageError = app.OnUsageError
		}
	}
}

// closedPipe reports whether err is a write to stdout, a pipe or socket
// whose reader is gone: err wraps EPIPE and stdout says so itself (its poll
// reports an error), so a broken connection of the command's own (replay's
// sockets) is still reported.
func closedPipe(stdout io.Writer, err error) bool {
	if !errors.Is(err, syscall.EPIPE) {
		return false
	}
	f, ok := stdout.(*os.File)
	return ok && readerGone(f)
}

// sharedFlagsOnce sets urfave/cli's global help and version flags, once.
var sharedFlagsOnce sync.Once

// setSharedFlags replaces cli.HelpFlag and cli.VersionFlag, which every app
// applies, with flags that keep no state of their own: a *cli.BoolFlag
// writes to itself when an app applies it, a data race between apps run in
// parallel (tests). The version flag also loses its -v alias, which is every
// binary's verbose flag here.
func setSharedFlags() {
	cli.HelpFlag = stateless{name: "help", alias: "h", usage: "show help"}
	cli.VersionFlag = stateless{name: "version", usage: "print the version"}
	stringer := cli.FlagStringer
	cli.FlagStringer = func(f cli.Flag) string { return trimDefault(f, stringer(f)) }
}

// usageText is the USAGE of an app whose main form is its own action: the
// app's arguments, then each command's form. (urfave/cli's default,
// "app [global options] command [command options] ARGS", puts a command
// where the main form has none.)
func usageText(app *cli.App) string {
	lines := []string{strings.TrimSpace(app.Name + " [global options] " + app.ArgsUsage)}
	for _, c := range app.Commands {
		if !c.Hidden {
			lines = append(lines, strings.TrimSpace(app.Name+" "+c.Name+" [command options] "+c.ArgsUsage))
		}
	}
	return strings.Join(lines, "\n")
}

// trimDefault drops the "(default: X)" urfave/cli appends to a flag's help
// when it says nothing true: the usage states the real default itself
// (--block-size's depends on the trace format), or X is a negative number,
// the sentinel of a flag left unset (--start-offset, --max-error-rate).
func trimDefault(f cli.Flag, s string) string {
	df, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return s
	}
	def := df.GetDefaultText()
	suffix := " (default: " + def + ")"
	i := strings.LastIndex(s, suffix)
	if def == "" || i < 0 {
		return s
	}
	if x, err := strconv.ParseFloat(def, 64); strings.Contains(df.GetUsage(), "(default") || err == nil && x < 0 {
		return s[:i] + s[i+len(suffix):]
	}
	return s
}

// stateless is a boolean cli.Flag whose value lives only in the flag set it
// is applied to.
type stateless struct{ name, alias, usage string }

func (f stateless) Apply(set *flag.FlagSet) error {
	for _, n := range f.Names() {
		set.Bool(n, false, f.usage)
	}
	return nil
}

func (f stateless) Names() []string {
	if f.alias == "" {
		return []string{f.name}
	}
	return []string{f.name, f.alias}
}

func (f stateless) IsSet() bool     { return false }
func (f stateless) IsVisible() bool { return true }
func (f stateless) String() string {
	return cli.FlagStringer(&cli.BoolFlag{Name: f.name, Aliases: f.Names()[1:], Usage: f.usage})
}

// OpenInput opens the input name: "" and "-" are the app's standard input
// (closing it is a no-op, and the display name is "<stdin>"). size is the
// byte size when the input is a regular file, else -1. When the input is a
// file (standard input included) the ReadCloser also has the file's
// Stat() (fs.FileInfo, error) method, for same-file checks. A directory is
// refused.
func OpenInput(c *cli.Context, name string) (rc io.ReadCloser, display string, size int64, err error) {
	if name == "" || name == "-" {
		if f, ok := c.App.Reader.(*os.File); ok {
			return stdinFile{f}, "<stdin>", regularSize(f), nil
		}
		return io.NopCloser(c.App.Reader), "<stdin>", -1, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, name, -1, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, name, -1, fmt.Errorf("%s: is a directory", name)
	}
	return f, name, regularSize(f), nil
}

// stdinFile is standard input with a Close that leaves it open.
type stdinFile struct{ *os.File }

func (stdinFile) Close() error { return nil }

func regularSize(f *os.File) int64 {
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		return fi.Size()
	}
	return -1
}
