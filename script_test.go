package aiperf_test

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/cmd/cachecmd"
	"github.com/aiperf/toolkit/lib/cmd/hashcmd"
	"github.com/aiperf/toolkit/lib/cmd/mockcmd"
	"github.com/aiperf/toolkit/lib/cmd/packcmd"
	"github.com/aiperf/toolkit/lib/cmd/replaycmd"
	"github.com/aiperf/toolkit/lib/cmd/tokenizecmd"
	"github.com/aiperf/toolkit/lib/mock"
	"github.com/aiperf/toolkit/scripts/gentrace/weka"
	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

var update = flag.Bool("update", false, "rewrite testscript files whose cmp fails")

// commands are the binaries the scripts can exec, run in-process.
var commands = map[string]func() int{
	"aiperf-hash":     func() int { return base.Main(hashcmd.New(), os.Args) },
	"aiperf-cache":    func() int { return base.Main(cachecmd.New(), os.Args) },
	"aiperf-pack":     func() int { return base.Main(packcmd.New(), os.Args) },
	"aiperf-tokenize": func() int { return base.Main(tokenizecmd.New(), os.Args) },
	"aiperf-mock":     func() int { return base.Main(mockcmd.New(), os.Args) },
	"aiperf-replay":   func() int { return base.Main(replaycmd.New(), os.Args) },
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
			// A -race binary sleeps 1 s before exiting (GORACE's atexit_sleep_ms,
			// for other goroutines' reports to land); the scripts exec ~1,200
			// commands, so that sleep was most of their wall time. Races are
			// still reported and still fail the command (exit 66).
			if os.Getenv("GORACE") == "" {
				env.Setenv("GORACE", "atexit_sleep_ms=10")
			}
			env.Setenv("TESTDATA", filepath.Join(wd, "testdata"))
			env.Setenv("ROOT", wd) // the scripts/ and examples/ the scripts-* tests run
			env.Setenv("GPT2", filepath.Join(wd, "lib", "tokenizer", "testdata", "gpt2", "tokenizer.json.zst"))
			env.Setenv("MOONCAKE", filepath.Join(wd, "lib", "trace", "testdata", "mooncake_head1000.jsonl"))
			// $MOCK_URL: an aiperf-mock for the replay scripts (a request
			// header X-Mock-Fault selects a fault).
			url, stop, err := startMock(mock.Config{TTFT: 2 * time.Millisecond, ITL: time.Millisecond})
			if err != nil {
				return err
			}
			env.Defer(stop)
			env.Setenv("MOCK_URL", url)
			// $STRICT_MOCK_URL: one serving "served-model" alone (404 to others, as vLLM)
			surl, sstop, err := startMock(mock.Config{Fast: true, Model: "served-model", StrictModel: true})
			if err != nil {
				return err
			}
			env.Defer(sstop)
			env.Setenv("STRICT_MOCK_URL", surl)
			// $METRICS_URL: a fake Prometheus exporter (servermetrics_script_test.go).
			murl, mstop := startFakeExporter()
			env.Defer(mstop)
			env.Setenv("METRICS_URL", murl)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "root" {
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":     cmdStatus,
			"flipbyte":   cmdFlipByte,
			"truncate":   cmdTruncate,
			"notemp":     cmdNoTemp,
			"genrecords": cmdGenRecords,
			"genweka":    cmdGenWeka,
			"mknode":     cmdMknode,
			"filetype":   cmdFileType,
			"signal":     cmdSignal,
			"capmock":    cmdCapMock,
			"prefixmock": cmdPrefixMock,
			"jsonnear":   cmdJSONNear,
		},
	})
}

// startMock serves an aiperf-mock on a free loopback port.
func startMock(cfg mock.Config) (url string, stop func(), err error) {
	srv, err := mock.New(cfg)
	if err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs, _ := srv.Serve(l)
	return "http://" + l.Addr().String(), func() { hs.Close() }, nil
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

// notemp DIR fails if DIR holds any leftover temporary file (a name starting
// with '.'); with !, it fails unless DIR holds one.
func cmdNoTemp(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: [!] notemp DIR")
	}
	ents, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	var temps []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") && e.Name() != ".tmp" {
			temps = append(temps, filepath.Join(args[0], e.Name()))
		}
	}
	if len(temps) > 0 && !neg {
		ts.Fatalf("temporary file left behind: %s", strings.Join(temps, " "))
	}
	if len(temps) == 0 && neg {
		ts.Fatalf("no temporary file in %s", args[0])
	}
}

// truncate FILE SIZE cuts FILE to SIZE bytes (negative: that many bytes fewer).
func cmdTruncate(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: truncate FILE SIZE")
	}
	name := ts.MkAbs(args[0])
	fi, err := os.Stat(name)
	ts.Check(err)
	n, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	if n < 0 {
		n += fi.Size()
	}
	if n < 0 || n >= fi.Size() {
		ts.Fatalf("truncate: size %d is not below the file's %d bytes", n, fi.Size())
	}
	ts.Check(os.Truncate(name, n))
}

// genrecords FILE N SIZE writes a records stream of N prompt records of
// SIZE pseudo-random printable bytes each (hard to compress, so that
// --compress takes a while), with the end line.
func cmdGenRecords(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: genrecords FILE N SIZE")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	size, err := strconv.Atoi(args[2])
	ts.Check(err)
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, uint64(size)))
	text := make([]byte, size)
	for i := 0; i < n; i++ {
		for j := 0; j < len(text); j += 8 {
			x := rng.Uint64()
			for k := j; k < min(j+8, len(text)); k++ {
				text[k] = 'a' + byte(x%26)
				x /= 26
			}
		}
		fmt.Fprintf(w, `{"v":1,"line":%d,"turn":0,"prompt":"%s"}`+"\n", i+1, text)
	}
	fmt.Fprintf(w, `{"v":1,"end":true,"records":%d}`+"\n", n)
	ts.Check(w.Flush())
}

// genweka DIR TRACES TURNS [BIG] writes Weka-shaped agentic traces
// (scripts/gentrace -weka): subagents, an async one, parallel chains,
// mixed n/s and, with BIG, a first trace whose last prompt has at least
// BIG tokens.
func cmdGenWeka(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || len(args) > 4 {
		ts.Fatalf("usage: genweka DIR TRACES TURNS [BIG]")
	}
	var n [3]int
	for i, a := range args[1:] {
		v, err := strconv.Atoi(a)
		ts.Check(err)
		n[i] = v
	}
	_, err := weka.Write(ts.MkAbs(args[0]), weka.Options{Traces: n[0], Turns: n[1], BigTokens: n[2], Seed: 1})
	ts.Check(err)
}

// mknode fifo|chardev NAME makes a FIFO, or a character device with the
// numbers of /dev/full (1, 7), at NAME (a character device needs [root]).
func cmdMknode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mknode fifo|chardev NAME")
	}
	name := ts.MkAbs(args[1])
	var err error
	switch args[0] {
	case "fifo":
		err = unix.Mkfifo(name, 0o644)
	case "chardev":
		err = unix.Mknod(name, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 7)))
	default:
		ts.Fatalf("mknode: unknown type %q", args[0])
	}
	ts.Check(err)
}

// filetype NAME TYPE asserts that NAME (not followed if a link) is a
// file, fifo, chardev, dir or symlink.
func cmdFileType(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: filetype NAME file|fifo|chardev|dir|symlink")
	}
	fi, err := os.Lstat(ts.MkAbs(args[0]))
	ts.Check(err)
	m := fi.Mode()
	got := "other"
	switch {
	case m.IsRegular():
		got = "file"
	case m&os.ModeNamedPipe != 0:
		got = "fifo"
	case m&os.ModeCharDevice != 0:
		got = "chardev"
	case m.IsDir():
		got = "dir"
	case m&os.ModeSymlink != 0:
		got = "symlink"
	}
	if (got == args[1]) == neg {
		ts.Fatalf("%s is a %s", args[0], got)
	}
}

// signal [-after GLOB:N] SIGNALS STATUS prog args... runs prog in the
// background, waits until N files in the work directory match GLOB (by
// default, until it has started), sends the comma-separated SIGNALS (INT,
// TERM, HUP, KILL) in a row, waits for it and asserts its exit status STATUS (a
// number, or "killed"). Its stderr goes to the file signal.stderr.
//
// On a loaded machine a short phase can end before the signal lands: a run
// that exits 0 (before the files matched, or despite the signal) is taken
// as too early, its new files are removed and it is tried again, up to five
// times. A command that ignores the signal fails all five.
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	usage := "usage: signal [-after GLOB:N] SIGNALS STATUS prog [args...]"
	if neg {
		ts.Fatalf("%s", usage)
	}
	glob, count := "", 0
	if len(args) > 1 && args[0] == "-after" {
		g, n, ok := strings.Cut(args[1], ":")
		c, err := strconv.Atoi(n)
		if !ok || err != nil {
			ts.Fatalf("%s", usage)
		}
		glob, count, args = g, c, args[2:]
	}
	if len(args) < 3 {
		ts.Fatalf("%s", usage)
	}
	var sigs []os.Signal
	for _, s := range strings.Split(args[0], ",") {
		sig, ok := map[string]os.Signal{"INT": os.Interrupt, "TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP, "KILL": os.Kill}[s]
		if !ok {
			ts.Fatalf("signal: unknown signal %q", s)
		}
		sigs = append(sigs, sig)
	}
	path, err := exec.LookPath(args[2])
	ts.Check(err)
	dir := ts.MkAbs(".")
	for try := 1; ; try++ {
		before := dirSet(ts, dir)
		got, stderr := signalRun(ts, dir, glob, count, sigs, path, args[3:])
		ts.Check(os.WriteFile(filepath.Join(dir, "signal.stderr"), []byte(stderr), 0o644))
		if got == "0" && args[1] != "0" && try < 5 {
			ts.Logf("signal: %s finished before the signal could land (try %d); again", args[2], try)
			for name := range dirSet(ts, dir) {
				if !before[name] && name != "signal.stderr" {
					ts.Check(os.RemoveAll(filepath.Join(dir, name)))
				}
			}
			continue
		}
		if got != args[1] {
			ts.Fatalf("%s exited with status %s, want %s; stderr:\n%s", args[2], got, args[1], stderr)
		}
		return
	}
}

func dirSet(ts *testscript.TestScript, dir string) map[string]bool {
	ents, err := os.ReadDir(dir)
	ts.Check(err)
	set := make(map[string]bool, len(ents))
	for _, e := range ents {
		set[e.Name()] = true
	}
	return set
}

// signalRun is one try of cmdSignal: the exit status ("0" when the command
// finished before the files matched) and stderr.
func signalRun(ts *testscript.TestScript, dir, glob string, count int, sigs []os.Signal, path string, args []string) (string, string) {
	var stderr strings.Builder
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	cmd.Stderr = &stderr
	ts.Check(cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	var err error
	done := false
	for glob != "" && !done {
		if m, _ := filepath.Glob(filepath.Join(dir, glob)); len(m) >= count {
			break
		}
		select {
		case err = <-exited:
			done = true
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			ts.Fatalf("no %d files matched %s in 2 minutes", count, glob)
		}
	}
	if !done {
		for _, s := range sigs {
			cmd.Process.Signal(s)
		}
		err = <-exited
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "0", stderr.String()
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed", stderr.String()
		}
		return strconv.Itoa(ee.ExitCode()), stderr.String()
	}
	ts.Fatalf("signal: %v", err)
	return "", ""
}
