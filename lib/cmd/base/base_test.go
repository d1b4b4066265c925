package base

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/urfave/cli/v2"
)

func run(action cli.ActionFunc, args ...string) (int, string) {
	var stderr bytes.Buffer
	app := &cli.App{Name: "x", Action: action, ErrWriter: &stderr, Writer: &bytes.Buffer{},
		Flags: []cli.Flag{&cli.BoolFlag{Name: "v"}}}
	return Main(app, append([]string{"x"}, args...)), stderr.String()
}

func TestMainExitCodes(t *testing.T) {
	for _, c := range []struct {
		name   string
		action cli.ActionFunc
		args   []string
		code   int
		stderr string
	}{
		{"ok", func(*cli.Context) error { return nil }, nil, 0, ""},
		{"usage", func(*cli.Context) error { return UsageError("want %d args", 2) }, nil, 2, "x: want 2 args\n"},
		{"bad flag", func(*cli.Context) error { return nil }, []string{"--nope"}, 2, "x: flag provided but not defined: -nope\n"},
		{"silent no", func(*cli.Context) error { return No("") }, nil, 1, ""},
		{"no with message", func(*cli.Context) error { return No("miss %s", "k") }, nil, 1, "x: miss k\n"},
		{"trouble", func(*cli.Context) error { return errors.New("disk full") }, nil, 2, "x: disk full\n"},
		{"interrupted", func(*cli.Context) error { return context.Canceled }, nil, 130, "x: context canceled\n"},
	} {
		code, stderr := run(c.action, c.args...)
		if code != c.code || !strings.HasSuffix(stderr, c.stderr) || (c.stderr == "" && stderr != "") {
			t.Errorf("%s: got code %d stderr %q, want %d %q", c.name, code, stderr, c.code, c.stderr)
		}
	}
}

func TestHelpHasExitTable(t *testing.T) {
	var out bytes.Buffer
	app := &cli.App{Name: "x", Writer: &out, ErrWriter: &out}
	if code := Main(app, []string{"x", "--help"}); code != 0 {
		t.Fatalf("--help exited %d", code)
	}
	if !strings.Contains(out.String(), "130  interrupted") {
		t.Errorf("--help lacks the exit table:\n%s", out.String())
	}
}

func TestBar(t *testing.T) {
	for _, c := range []struct {
		done, total int64
		want        string
	}{
		{0, 100, "[                    ]   0%"},
		{50, 100, "[##########          ]  50%"},
		{150, 100, "[####################] 100%"},
		{2500000, 0, "2.5 MB"},
	} {
		if got := Bar(c.done, c.total); got != c.want {
			t.Errorf("Bar(%d, %d) = %q, want %q", c.done, c.total, got, c.want)
		}
	}
}

// Main must be callable from parallel tests: it used to write the global
// cli.VersionFlag on every call, which the race detector flags.
func TestMainParallel(t *testing.T) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			var out bytes.Buffer
			app := &cli.App{Name: "x", Writer: &out, ErrWriter: &out}
			if code := Main(app, []string{"x", "--version"}); code != 0 || !strings.Contains(out.String(), "x version") {
				t.Errorf("--version: code %d, output %q", code, out.String())
			}
		})
	}
	wg.Wait()
}

func TestOpenInput(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "in")
	os.WriteFile(name, []byte("12345"), 0o644)
	stdin, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var got []string
	app := &cli.App{Name: "x", Reader: stdin, Writer: &bytes.Buffer{}, ErrWriter: &bytes.Buffer{},
		Action: func(c *cli.Context) error {
			for _, n := range []string{name, "-", ""} {
				rc, display, size, err := OpenInput(c, n)
				if err != nil {
					return err
				}
				if _, ok := rc.(interface{ Stat() (fs.FileInfo, error) }); !ok {
					t.Errorf("%q: no Stat method", n)
				}
				got = append(got, fmt.Sprintf("%s %d", display, size))
				rc.Close()
			}
			if _, _, _, err := OpenInput(c, dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
				t.Errorf("directory: got %v", err)
			}
			if _, _, _, err := OpenInput(c, filepath.Join(dir, "nope")); Code(err) != ExitTrouble {
				t.Errorf("missing file: got %v (code %d)", err, Code(err))
			}
			return nil
		}}
	if code := Main(app, []string{"x"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	want := []string{name + " 5", "<stdin> 5", "<stdin> 5"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// stdin survives its Close
	if _, err := stdin.Stat(); err != nil {
		t.Errorf("stdin was closed: %v", err)
	}
}

// SecondSignal outside Main has no handler behind it: a channel that never
// closes. Inside, the second signal is handed to the command once; after
// that (or when no command asked) a signal means exit.
func TestSecondSignal(t *testing.T) {
	if c := SecondSignal(context.Background()); c != nil {
		t.Fatalf("outside Main: %v, want nil", c)
	}
	st := &signals{cut: make(chan struct{})}
	if st.claim() {
		t.Fatal("claimed for a command that did not ask")
	}
	ctx := context.WithValue(context.Background(), signalsKey{}, st)
	cut := SecondSignal(ctx)
	if !st.claim() {
		t.Fatal("the second signal was not handed to the command that asked")
	}
	select {
	case <-cut:
	default:
		t.Fatal("the cut channel is still open after the second signal")
	}
	if st.claim() {
		t.Fatal("a third signal was handed over too; it must exit")
	}
}

// TestMainClosedPipe: a write to a stdout whose reader has gone (| head, or
// a failed stage downstream) stops the command quietly with 141, as
// coreutils stop; an EPIPE of anything else (a socket of the command's
// own) is still an error that is reported.
func TestMainClosedPipe(t *testing.T) {
	write := func(c *cli.Context) error {
		if _, err := c.App.Writer.Write([]byte("record\n")); err != nil {
			return fmt.Errorf("write <stdout>: %w", err)
		}
		return nil
	}
	mainWith := func(stdout *os.File, action cli.ActionFunc) (int, string) {
		var stderr bytes.Buffer
		app := &cli.App{Name: "x", Action: action, ErrWriter: &stderr, Writer: stdout}
		return Main(app, []string{"x"}), stderr.String()
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r.Close()
	if code, stderr := mainWith(w, write); code != ExitPipe || stderr != "" {
		t.Errorf("stdout closed by its reader: code %d, stderr %q; want %d and nothing", code, stderr, ExitPipe)
	}

	// stdout is fine: an EPIPE from elsewhere is reported.
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	defer w2.Close()
	other := func(*cli.Context) error { return fmt.Errorf("send to server: %w", syscall.EPIPE) }
	if code, stderr := mainWith(w2, other); code != ExitTrouble || !strings.Contains(stderr, "broken pipe") {
		t.Errorf("EPIPE of a connection: code %d, stderr %q; want 2 and the error", code, stderr)
	}
}
