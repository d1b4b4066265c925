package aiperf_test

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/cmd/cachecmd"
	"github.com/aiperf/toolkit/lib/cmd/packcmd"
	"github.com/aiperf/toolkit/lib/cmd/tokenizecmd"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite testscript files whose cmp fails")

// commands are the binaries the scripts can exec, run in-process.
var commands = map[string]func() int{
	"aiperf-cache":    func() int { return base.Main(cachecmd.New(), os.Args) },
	"aiperf-pack":     func() int { return base.Main(packcmd.New(), os.Args) },
	"aiperf-tokenize": func() int { return base.Main(tokenizecmd.New(), os.Args) },
}

func TestMain(m *testing.M) {
	testscript.Main(m, wrap(commands))
}

func wrap(cmds map[string]func() int) map[string]func() {
	out := make(map[string]func(), len(cmds))
	for name, f := range cmds {
		out[name] = func() { os.Exit(f()) }
	}
	return out
}

func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			env.Setenv("TESTDATA", filepath.Join(wd, "testdata"))
			env.Setenv("GPT2", filepath.Join(wd, "lib", "tokenizer", "testdata", "gpt2", "tokenizer.json.zst"))
			env.Setenv("MOONCAKE", filepath.Join(wd, "lib", "trace", "testdata", "mooncake_head1000.jsonl"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":   cmdStatus,
			"flipbyte": cmdFlipByte,
			"notemp":   cmdNoTemp,
		},
	})
}

// status N prog args... runs prog and asserts its exact exit code; stdout and
// stderr are kept for the following stdout/stderr checks.
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// flipbyte FILE OFFSET inverts one byte of FILE (negative offsets count from the end).
func cmdFlipByte(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: flipbyte FILE OFFSET")
	}
	name := ts.MkAbs(args[0])
	b, err := os.ReadFile(name)
	ts.Check(err)
	off, err := strconv.Atoi(args[1])
	ts.Check(err)
	if off < 0 {
		off += len(b)
	}
	if off < 0 || off >= len(b) {
		ts.Fatalf("flipbyte: offset %d outside %d bytes", off, len(b))
	}
	b[off] ^= 0xff
	ts.Check(os.WriteFile(name, b, 0o644))
}

// notemp DIR fails if DIR holds any leftover temporary file (a name starting with '.').
func cmdNoTemp(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: notemp DIR")
	}
	ents, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") && e.Name() != ".tmp" {
			ts.Fatalf("temporary file left behind: %s", filepath.Join(args[0], e.Name()))
		}
	}
}
