package cachecmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/cache"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/store"
)

// The test binary doubles as aiperf-cache (AIPERF_CACHE_TEST_MAIN=1) and as
// a slow store writer for ensure's CMD (AIPERF_CACHE_TEST_WRITER=SRC): these
// tests kill real processes.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("AIPERF_CACHE_TEST_WRITER") != "" && os.Getenv(OutEnv) != "": // ensure's CMD
		os.Exit(writer(os.Getenv("AIPERF_CACHE_TEST_WRITER")))
	case os.Getenv("AIPERF_CACHE_TEST_MAIN") == "1":
		os.Exit(base.Main(New(), os.Args))
	}
	os.Exit(m.Run())
}

// writer copies src to $AIPERF_CACHE_OUT 64 KiB at a time, as a packing
// stage would, and notes each run in $AIPERF_CACHE_TEST_COUNT.
func writer(src string) int {
	if cf := os.Getenv("AIPERF_CACHE_TEST_COUNT"); cf != "" {
		f, err := os.OpenFile(cf, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return 3
		}
		fmt.Fprintf(f, "built by %d\n", os.Getpid())
		f.Close()
	}
	in, err := os.Open(src)
	if err != nil {
		return 3
	}
	defer in.Close()
	out, err := os.Create(os.Getenv(OutEnv))
	if err != nil {
		return 3
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			if _, werr := out.Write(buf[:n]); werr != nil {
				return 3
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 3
		}
	}
	if out.Sync() != nil || out.Close() != nil {
		return 3
	}
	return 0
}

func self(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	// atexit_sleep_ms: a race-enabled binary otherwise sleeps 1 s on exit.
	cmd.Env = append(append(os.Environ(), "AIPERF_CACHE_TEST_MAIN=1", "GORACE=atexit_sleep_ms=0"), env...)
	return cmd
}

func writerArgv(t *testing.T) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe}
}

func writeStore(t *testing.T, path string, n, size int) {
	t.Helper()
	w, err := store.Create(path, store.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	rng := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	buf := make([]byte, size)
	for i := range n {
		s := w.AddSession(fmt.Sprint(i))
		for j := range buf {
			buf[j] = byte(' ' + rng.IntN(90))
		}
		if err := w.Add(store.Entry{Line: uint64(i + 1), Session: s}, buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

// checkState asserts what a reader may see after any crash: a miss, or a
// complete entry that verifies. Never a damaged one.
func checkState(t *testing.T, root string, k cache.Key, what string) (hit bool) {
	t.Helper()
	c, err := cache.Open(root, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Lookup(k)
	if err != nil {
		var be *cache.BadEntryError
		if !errors.Is(err, cache.ErrMiss) || errors.As(err, &be) {
			t.Fatalf("%s: lookup after SIGKILL: %v, want a plain miss or a verified hit", what, err)
		}
		return false
	}
	if _, err := c.Verify(k); err != nil {
		t.Fatalf("%s: a hit after SIGKILL that does not verify: %v", what, err)
	}
	return true
}

// killAt starts cmd, SIGKILLs it after d and reports whether the kill landed
// before it finished.
func killAt(t *testing.T, cmd *exec.Cmd, d time.Duration) bool {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(d, func() { cmd.Process.Signal(syscall.SIGKILL) })
	err := cmd.Wait()
	timer.Stop()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true
		}
		t.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.Bytes())
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}

// partialStaging reports whether a staging folder not in seen, holding a
// file, is left in root's tmp/: the kill landed while the entry was being
// written. It adds what it finds to seen.
func partialStaging(t *testing.T, root string, seen map[string]bool) bool {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(root, "tmp"))
	found := false
	for _, e := range ents {
		n := e.Name()
		if seen[n] || !e.IsDir() || !strings.HasPrefix(n, "p-") {
			continue
		}
		seen[n] = true
		files, _ := os.ReadDir(filepath.Join(root, "tmp", n))
		found = found || len(files) > 0
	}
	return found
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// TestCrashSafety SIGKILLs populate and ensure at random moments while a
// multi-MB store is being written: at least 50 kills of each land before the
// process is done, and at least 10 of each while the entry is being staged
// (they leave a staging folder holding files behind). After each: a miss or a hit that verifies. Then the
// next ensure builds at once: the killed holders' locks died with them.
func TestCrashSafety(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "cache")
	src := filepath.Join(dir, "big.aipk")
	writeStore(t, src, 512, 16<<10) // 8 MiB
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	wantKills, wantMid := 20, 5
	if soak(t) {
		wantKills, wantMid = 50, 10
	}

	jobs := []struct {
		name string
		cmd  func(k, dest string) *exec.Cmd
	}{
		{"populate", func(k, _ string) *exec.Cmd {
			return self(t, nil, "--dir", root, "populate", "--copy", k, src)
		}},
		{"ensure", func(k, dest string) *exec.Cmd {
			return self(t, []string{"AIPERF_CACHE_TEST_WRITER=" + src}, append([]string{"--dir", root, "ensure", k, dest, "--"}, writerArgv(t)...)...)
		}},
	}
	for _, job := range jobs {
		// How long one uninterrupted run takes, to spread the kills over it.
		var runs []time.Duration
		for i := range 5 {
			k := fmt.Sprintf("calibrate-%s-%d", job.name, i)
			start := time.Now()
			if out, err := job.cmd(k, filepath.Join(dir, "cal.aipk")).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", job.name, err, out)
			}
			runs = append(runs, time.Since(start))
		}
		span := median(runs)
		kills, tries, hits, mid := 0, 0, 0, 0
		seen := map[string]bool{}
		partialStaging(t, root, seen)
		for kills < wantKills || mid < wantMid {
			if tries++; tries > 20*wantKills {
				t.Fatalf("%s: only %d of %d tries were killed before finishing (a run takes %v)", job.name, kills, tries, span)
			}
			k := fmt.Sprintf("crash-%s-%d", job.name, tries)
			dest := filepath.Join(dir, "dest.aipk")
			os.Remove(dest)
			at := time.Duration(rng.Int64N(int64(span)))
			if killAt(t, job.cmd(k, dest), at) {
				kills++
				if partialStaging(t, root, seen) {
					mid++
				}
			}
			if checkState(t, root, cache.MustParseKey(k), fmt.Sprintf("%s killed after %v", job.name, at)) {
				hits++
			}
			if b, err := os.ReadFile(dest); err == nil {
				want, _ := os.ReadFile(src)
				if !bytes.Equal(b, want) {
					t.Fatalf("%s killed after %v left a partial DEST (%d of %d bytes)", job.name, at, len(b), len(want))
				}
			}
		}
		t.Logf("%s: %d kills in %d tries over a %v run, %d of them mid-write; %d tries left a verified entry, the rest a clean miss", job.name, kills, tries, span, mid, hits)
	}

	// Every killed ensure held the lock of its own key; kill a few more on
	// one key, then the next ensure of that key must not wait for any of them.
	k := "crash-shared-key"
	for range 5 {
		os.Remove(filepath.Join(dir, "d"))
		killAt(t, jobs[1].cmd(k, filepath.Join(dir, "d")), time.Duration(rng.Int64N(int64(20*time.Millisecond))))
	}
	if checkState(t, root, cache.MustParseKey(k), "shared key") {
		c, _ := cache.Open(root, cache.Options{})
		c.Remove(cache.MustParseKey(k))
		c.Close()
	}
	start := time.Now()
	cmd := jobs[1].cmd(k, filepath.Join(dir, "final.aipk"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Args = append(cmd.Args[:1], append([]string{"--dir", root, "ensure", "--lock-timeout", "10m", "--lock-report", "1s"}, cmd.Args[4:]...)...)
	if err := cmd.Run(); err != nil {
		t.Fatalf("ensure after the crashes: %v\n%s", err, stderr.Bytes())
	}
	if took := time.Since(start); took > 30*time.Second || strings.Contains(stderr.String(), "waiting") {
		t.Fatalf("ensure after the crashes took %v and said %q: it waited for a dead holder", took, stderr.String())
	}
	if !checkState(t, root, cache.MustParseKey(k), "final ensure") {
		t.Fatal("final ensure left no entry")
	}
	// gc clears what the killed builders left in tmp/.
	if out, err := self(t, nil, "--dir", root, "gc").CombinedOutput(); err != nil {
		t.Fatalf("gc: %v\n%s", err, out)
	}
	left, _ := os.ReadDir(filepath.Join(root, "tmp"))
	if len(left) != 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Fatalf("tmp/ after gc: %v", names)
	}
}

// TestEnsureConcurrent: 8 processes ensure one key at once; CMD runs exactly
// once and every DEST is the complete store.
func TestEnsureConcurrent(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "cache")
	src := filepath.Join(dir, "s.aipk")
	writeStore(t, src, 256, 16<<10) // 4 MiB
	count := filepath.Join(dir, "count")
	want, _ := os.ReadFile(src)
	const n = 8
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := range n {
		dest := filepath.Join(dir, fmt.Sprintf("dest%d.aipk", i))
		cmd := self(t, []string{"AIPERF_CACHE_TEST_WRITER=" + src, "AIPERF_CACHE_TEST_COUNT=" + count},
			append([]string{"--dir", root, "ensure", "--lock-report", "50ms", "sha256:" + strings.Repeat("c0", 32), dest, "--"}, writerArgv(t)...)...)
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		cmds, outs = append(cmds, cmd), append(outs, &b)
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, c := range cmds {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.Wait() }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("ensure %d: %v\n%s", i, err, outs[i])
		}
	}
	b, _ := os.ReadFile(count)
	if lines := strings.Count(string(b), "\n"); lines != 1 {
		t.Fatalf("CMD ran %d times, want once:\n%s", lines, b)
	}
	for i := range n {
		dest := filepath.Join(dir, fmt.Sprintf("dest%d.aipk", i))
		got, err := os.ReadFile(dest)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("dest %d: %d bytes (%v), want the %d-byte store", i, len(got), err, len(want))
		}
		r, err := store.Open(dest, store.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Verify(); err != nil {
			t.Fatalf("dest %d: %v", i, err)
		}
		r.Close()
	}
}

// TestEnsureInterrupted: SIGINT to ensure stops CMD, exits 130 and caches nothing.
func TestEnsureInterrupted(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "cache")
	// CMD says it started on stdout, which ensure passes through.
	cmd := self(t, nil, "--dir", root, "ensure", "k", filepath.Join(dir, "d.aipk"), "--",
		"sh", "-c", `echo partial > "$AIPERF_CACHE_OUT"; echo started; exec sleep 60`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 8)
	if _, err := io.ReadFull(out, line); err != nil || string(line) != "started\n" {
		cmd.Process.Kill()
		t.Fatalf("CMD did not start: %q %v", line, err)
	}
	start := time.Now()
	cmd.Process.Signal(os.Interrupt)
	io.Copy(io.Discard, out)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("ensure after SIGINT: %v, want exit 130\n%s", err, stderr.Bytes())
	}
	if d := time.Since(start); d > 30*time.Second { // CMD sleeps 60 s when not told; any machine stops it within 30
		t.Errorf("took %v to stop: CMD was not told", d)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr %q", stderr.String())
	}
	if checkState(t, root, cache.MustParseKey("k"), "interrupted ensure") {
		t.Fatal("an interrupted ensure cached its partial output")
	}
	if left, _ := os.ReadDir(filepath.Join(root, "tmp")); len(left) != 0 {
		t.Errorf("tmp/ after an interrupted ensure: %d names", len(left))
	}
}

// TestEnsureInterruptedStopsPipeline: SIGTERM to ensure (make -j stopping,
// timeout(1)) stops every process of CMD, not only the shell: the stages of
// `sh -c 'aiperf-tokenize ... | aiperf-pack ...'` used to run on, orphaned,
// for as long as the build would have taken.
func TestEnsureInterruptedStopsPipeline(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "cache")
	pidFile := filepath.Join(dir, "pid")
	cmd := self(t, nil, "--dir", root, "ensure", "k", filepath.Join(dir, "d.aipk"), "--",
		"sh", "-c", `sleep 60 </dev/null | cat >/dev/null 2>&1 & echo $! > "$0"; echo started; wait`, pidFile)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 8)
	if _, err := io.ReadFull(out, line); err != nil || string(line) != "started\n" {
		cmd.Process.Kill()
		t.Fatalf("CMD did not start: %q %v", line, err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	io.Copy(io.Discard, out)
	cmd.Wait()
	deadline := time.Now().Add(30 * time.Second) // the orphan would sleep 60 s
	for running(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("pid %d of CMD's pipeline still runs after ensure was stopped", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// running reports whether pid is a live process (a zombie is not).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestEnsureKilledStopsGrandchildren: SIGKILL of ensure (the OOM killer, a
// CI timeout) stops every process of CMD, the stages of `sh -c 'a | b'`
// included. CMD's own parent-death signal used to stop only the shell; its
// children, which do not inherit it, ran on. The guard ensure runs CMD
// under (guard.go) stops CMD's group when ensure dies.
func TestEnsureKilledStopsGrandchildren(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	if runtime.GOOS != "linux" {
		t.Skip("needs a parent-death signal and /proc")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "cache")
	pidFile := filepath.Join(dir, "pids")
	cmd := self(t, nil, "--dir", root, "ensure", "k", filepath.Join(dir, "d.aipk"), "--",
		"sh", "-c", `sleep 61 </dev/null >/dev/null 2>&1 & echo $! > "$0"
sleep 62 </dev/null | cat >/dev/null 2>&1 & echo $! >> "$0"
echo started; wait`, pidFile)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 8)
	if _, err := io.ReadFull(out, line); err != nil || string(line) != "started\n" {
		cmd.Process.Kill()
		t.Fatalf("CMD did not start: %q %v", line, err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// Generous: they stop within milliseconds; this only bounds a failure.
	deadline := time.Now().Add(30 * time.Second)
	for _, pid := range pids {
		for running(pid) {
			if time.Now().After(deadline) {
				for _, p := range pids {
					syscall.Kill(p, syscall.SIGKILL)
				}
				t.Fatalf("pid %d of CMD's pipeline still runs after ensure was SIGKILLed", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
