package cache

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestLockExcludesAndReports(t *testing.T) {
	c, clk := testCache(t)
	k := digestKey("lock")
	held, err := c.Lock(t.Context(), k, LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A second Cache (another open file description) must wait for it.
	c2 := reopen(t, c)
	var reports []time.Duration
	var holders []Holder
	_, err = c2.Lock(t.Context(), k, LockOptions{
		Timeout: 35 * time.Second, Report: 10 * time.Second,
		OnWait: func(h Holder, waited time.Duration) { reports = append(reports, waited); holders = append(holders, h) },
	})
	if !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("waiting on a held lock: %v, want ErrLockTimeout", err)
	}
	if len(reports) != 3 {
		t.Fatalf("reports at %v, want 3 (every 10s of a 35s wait)", reports)
	}
	for i, r := range reports {
		if r < time.Duration(i+1)*10*time.Second || r >= time.Duration(i+1)*10*time.Second+lockPollMax {
			t.Errorf("report %d after %v, want just after %ds", i, r, (i+1)*10)
		}
		if h := holders[i]; h.PID != os.Getpid() || h.Host != c.host {
			t.Errorf("report names %v, want pid %d on %s", h, os.Getpid(), c.host)
		}
	}
	if clk.slept < 35*time.Second {
		t.Errorf("slept %v on the test clock, want the whole timeout", clk.slept)
	}
	if !strings.Contains(err.Error(), "pid") {
		t.Errorf("timeout error %q does not say who holds the lock", err)
	}
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := c2.Lock(t.Context(), k, LockOptions{Timeout: time.Second})
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.Release()
	if err := l2.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
}

func TestLockStopsWhenEntryAppears(t *testing.T) {
	c, clk := testCache(t)
	k := digestKey("stop")
	held, err := c.Lock(t.Context(), k, LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	start := clk.Now()
	_, err = reopen(t, c).Lock(t.Context(), k, LockOptions{
		Timeout: time.Hour,
		Stop:    func() bool { return clk.Now().Sub(start) > 3*time.Second },
	})
	if !errors.Is(err, ErrLockStopped) {
		t.Fatalf("got %v, want ErrLockStopped", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	clk.onTick = func(time.Time) { cancel() }
	_, err = reopen(t, c).Lock(ctx, k, LockOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
}

// A lock file gc removed while a waiter had it open must not let two
// holders in: the waiter notices that its file is no longer the lock.
func TestLockSurvivesRemovedFile(t *testing.T) {
	c, _ := testCache(t)
	k := digestKey("removed")
	l1, err := c.Lock(t.Context(), k, LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(c.Root(), "locks", k.shard(), k.name())
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	// l1 still holds the unlinked file; a newcomer makes and takes a new one.
	l2, err := reopen(t, c).Lock(t.Context(), k, LockOptions{Timeout: time.Second})
	if err != nil {
		t.Fatalf("newcomer: %v", err)
	}
	l1.Release()
	l2.Release()
}

func TestLockFileMode(t *testing.T) {
	c, clk := testCache(t, func(o *Options) { o.LockFile = true })
	k := MustParseKey("lockfile")
	l, err := c.Lock(t.Context(), k, LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	held := filepath.Join(c.Root(), "locks", k.shard(), k.name()+".held")
	b, err := os.ReadFile(held)
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := parseHolder(b); !ok || h.PID != os.Getpid() {
		t.Fatalf("lock file says %q", b)
	}
	// A live holder on this host: wait, then time out.
	_, err = reopen(t, c).Lock(t.Context(), k, LockOptions{Timeout: 20 * time.Second})
	if !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("live holder: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(held); !os.IsNotExist(err) {
		t.Fatalf("release left %s: %v", held, err)
	}

	// A holder that died (SIGKILL leaves its file behind): broken at once.
	dead := deadPID(t)
	writeFile(t, held, Holder{Host: c.host, PID: dead, Since: clk.Now()}.line())
	l, err = reopen(t, c).Lock(t.Context(), k, LockOptions{Timeout: time.Hour})
	if err != nil {
		t.Fatalf("lock held by dead pid %d: %v", dead, err)
	}
	l.Release()

	// A holder on another host: stale only once older than the timeout.
	writeFile(t, held, Holder{Host: "elsewhere", PID: 1, Since: clk.Now()}.line())
	start := clk.Now()
	l, err = reopen(t, c).Lock(t.Context(), k, LockOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatalf("remote holder: %v", err)
	}
	if w := clk.Now().Sub(start); w < time.Minute {
		t.Errorf("broke a remote holder's lock after %v, before the timeout", w)
	}
	l.Release()
	// Garbage content: judged by the file's age.
	writeFile(t, held, "garbage")
	old := clk.Now().Add(-2 * time.Hour)
	os.Chtimes(held, old, old)
	l, err = reopen(t, c).Lock(t.Context(), k, LockOptions{Timeout: time.Hour})
	if err != nil {
		t.Fatalf("old garbage lock file: %v", err)
	}
	l.Release()
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestParseHolder(t *testing.T) {
	h := Holder{Host: "node1", PID: 42, Since: time.Unix(0, 1234567890)}
	got, ok := parseHolder([]byte(h.line()))
	if !ok || got != h {
		t.Fatalf("got %v %v, want %v", got, ok, h)
	}
	for _, b := range []string{"", "v1", "v2 a 1 2", "v1 a -1 2", "v1 a x 2", "v1 a 1 y", "v1 a 1 2 3"} {
		if _, ok := parseHolder([]byte(b)); ok {
			t.Errorf("parseHolder(%q) accepted", b)
		}
	}
	if s := (Holder{}).String(); s != "an unknown process" {
		t.Errorf("zero holder: %q", s)
	}
}

// noFlockHere makes every flock(2) attempt fail as on a filesystem without
// flock (ENOLCK) until the test ends.
func noFlockHere(t *testing.T) {
	t.Helper()
	saved := tryLock
	tryLock = func(*os.File) (bool, error) {
		return false, &fs.PathError{Op: "flock", Path: "x", Err: unix.ENOLCK}
	}
	t.Cleanup(func() { tryLock = saved })
}

// TestLockWithoutFlock: where flock fails with ENOLCK, key locks fall back
// to lock files by themselves (no Options.LockFile), carrying host, pid and
// time; staging folders are then judged by age.
func TestLockWithoutFlock(t *testing.T) {
	noFlockHere(t)
	c, clk := testCache(t)
	k := MustParseKey("nolock")
	l, err := c.Lock(t.Context(), k, LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	held := filepath.Join(c.Root(), "locks", k.shard(), k.name()+".held")
	b, err := os.ReadFile(held)
	if err != nil {
		t.Fatalf("no lock file after falling back: %v", err)
	}
	h, ok := parseHolder(b)
	if !ok || h.PID != os.Getpid() || h.Host != c.host || !h.Since.Equal(clk.Now()) {
		t.Fatalf("lock file says %q", b)
	}
	var reports []Holder
	_, err = reopen(t, c).Lock(t.Context(), k, LockOptions{Timeout: 25 * time.Second, Report: 10 * time.Second,
		OnWait: func(h Holder, _ time.Duration) { reports = append(reports, h) }})
	if !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("second locker: %v, want ErrLockTimeout", err)
	}
	if len(reports) != 2 || reports[0].PID != os.Getpid() {
		t.Fatalf("waiter reports %v, want 2 naming pid %d", reports, os.Getpid())
	}
	l.Release()
	if _, err := os.Stat(held); !os.IsNotExist(err) {
		t.Fatalf("release left the lock file: %v", err)
	}

	// Staging folders: a young one is a build in progress, one a day old
	// is abandoned.
	young, err := c.Stage()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(young.Dir(), "part"), "x")
	old, err := reopen(t, c).Stage()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(old.Dir(), "part"), "y")
	youngTime, oldTime := clk.Now().Add(-time.Hour), clk.Now().Add(-staleStaging-time.Hour)
	os.Chtimes(young.Dir(), youngTime, youngTime)
	os.Chtimes(old.Dir(), oldTime, oldTime)
	res, err := reopen(t, c).Trim(TrimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(young.Dir(), "part")); err != nil {
		t.Errorf("gc removed a build in progress: %v", err)
	}
	if _, err := os.Stat(old.Dir()); !os.IsNotExist(err) || res.Garbage != 1 {
		t.Errorf("abandoned staging folder: %v, garbage %d", err, res.Garbage)
	}
	if err := young.Adopt("part"); err != nil {
		t.Fatal(err)
	}
	if _, stored, err := young.Publish(MustParseKey("young"), ""); err != nil || !stored {
		t.Fatalf("publish: %v %v", stored, err)
	}
}
