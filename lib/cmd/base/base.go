// Package base is the shared frame of every aiperf binary: exit codes, error
// classes, the Main runner and helpers to open "-" as stdin.
//
// Only lib/cmd/... imports github.com/urfave/cli/v2; libraries never print.
package base

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
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
	ExitInterrupted = 130 // interrupted by SIGINT/SIGTERM; partial output was flushed
)

// ExitTable is appended to every binary's --help.
const ExitTable = `EXIT STATUS:
   0    ok (or "yes": a cache hit, a verified store)
   1    a clean "no": cache miss, verify mismatch, a gate exceeded
   2    trouble: usage error, bad input, I/O or network failure
   130  interrupted (partial output flushed first)`

// Error carries an exit code with an optional message. A nil Err with Code 1
// is a silent "no".
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
// SIGINT and SIGTERM cancel the context; a command that returns because of it
// exits 130.
func Main(app *cli.App, args []string) int {
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
	// -v is every binary's verbose flag; the version is --version only.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version"}
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

	// AIPERF_CPUPROFILE=FILE writes a CPU profile of the run (for pprof).
	if name := os.Getenv("AIPERF_CPUPROFILE"); name != "" {
		if f, err := os.Create(name); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer func() { pprof.StopCPUProfile(); f.Close() }()
			}
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal cancels ctx and asks the command to stop cleanly; it
	// also restores the default handlers, so a second Ctrl-C kills a command
	// that is stuck (for example blocked reading a silent stdin).
	go func() { <-ctx.Done(); stop() }()
	err := app.RunContext(ctx, args)
	if err == nil {
		return ExitOK
	}
	code := Code(err)
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

// Open opens name for reading; "" and "-" mean the app's standard input,
// which is returned wrapped so that closing it is a no-op.
func Open(c *cli.Context, name string) (io.ReadCloser, string, error) {
	if name == "" || name == "-" {
		return io.NopCloser(c.App.Reader), "<stdin>", nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, name, &Error{Code: ExitTrouble, Err: err}
	}
	return f, name, nil
}
