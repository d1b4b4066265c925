package cache

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fifoWatchdog bounds an operation that must not block on a named pipe. It
// only matters when the operation hangs (it takes milliseconds otherwise),
// so a generous bound cannot make a passing run fail.
const fifoWatchdog = time.Minute

// noHang runs op and fails the test if it has not returned within
// fifoWatchdog; then it opens every pipe in fifos for writing, which lets a
// reader blocked in open(2) go on, so that the test ends rather than hangs.
func noHang(t *testing.T, what string, fifos []string, op func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); op() }()
	select {
	case <-done:
		return
	case <-time.After(fifoWatchdog):
	}
	t.Errorf("%s: still blocked after %v (a named pipe in the root)", what, fifoWatchdog)
	for {
		for _, p := range fifos {
			if fd, err := unix.Open(p, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
				unix.Close(fd)
			}
		}
		select {
		case <-done:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	if err := unix.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A named pipe anywhere in the root (an entry's manifest or file, config,
// version, a key's lock file, a staging lock, a lock-file-mode lock) never
// blocks an operation: each refuses it or goes past it, saying what it is.
func TestNamedPipesNeverBlock(t *testing.T) {
	type op struct {
		name string
		run  func(t *testing.T, c *Cache) error
	}
	k := MustParseKey("k")
	lookup := op{"lookup", func(t *testing.T, c *Cache) error { _, err := c.Lookup(k); return err }}
	verify := op{"verify", func(t *testing.T, c *Cache) error { _, err := c.Verify(k); return err }}
	list := op{"ls", func(t *testing.T, c *Cache) error {
		all, err := c.List()
		for _, in := range all {
			if in.Err != nil {
				return in.Err
			}
		}
		return err
	}}
	gc := op{"gc", func(t *testing.T, c *Cache) error { _, err := c.Trim(TrimOptions{MaxAge: time.Nanosecond}); return err }}
	lock := op{"lock", func(t *testing.T, c *Cache) error {
		l, err := c.Lock(t.Context(), k, LockOptions{Timeout: time.Minute})
		if err == nil {
			l.Release()
		}
		return err
	}}
	stage := op{"stage", func(t *testing.T, c *Cache) error {
		s, err := c.Stage()
		if err == nil {
			s.Abort()
		}
		return err
	}}
	export := op{"export", func(t *testing.T, c *Cache) error { return c.Export(t.Context(), k, discard{}) }}
	all := []op{lookup, verify, list, gc, lock, stage, export}

	cases := []struct {
		name     string
		lockFile bool
		fifo     func(root string) string // makes the pipe's path
		wantErr  string                   // what lookup says, if it fails
	}{
		{name: "manifest", fifo: func(r string) string { return filepath.Join(r, "entries", k.shard(), k.name(), "manifest") }, wantErr: "named pipe"},
		{name: "entry file", fifo: func(r string) string { return filepath.Join(r, "entries", k.shard(), k.name(), "f") }, wantErr: "named pipe"},
		{name: "config", fifo: func(r string) string { return filepath.Join(r, "config") }},
		{name: "version", fifo: func(r string) string { return filepath.Join(r, "version") }},
		{name: "key lock", fifo: func(r string) string {
			os.MkdirAll(filepath.Join(r, "locks", k.shard()), 0o700)
			return filepath.Join(r, "locks", k.shard(), k.name())
		}},
		{name: "held lock file", lockFile: true, fifo: func(r string) string {
			os.MkdirAll(filepath.Join(r, "locks", k.shard()), 0o700)
			return filepath.Join(r, "locks", k.shard(), k.name()+".held")
		}},
		{name: "staging lock", fifo: func(r string) string {
			os.Mkdir(filepath.Join(r, "tmp", "p-0123"), 0o700)
			return filepath.Join(r, "tmp", "p-0123.lock")
		}},
		{name: "orphan staging lock", fifo: func(r string) string { return filepath.Join(r, "tmp", "p-4567.lock") }},
	}
	for _, tc := range cases {
		for _, o := range all {
			t.Run(tc.name+"/"+o.name, func(t *testing.T) {
				c, _ := testCache(t, func(opt *Options) { opt.LockFile = tc.lockFile })
				src := filepath.Join(t.TempDir(), "f")
				writeFile(t, src, "data")
				e := mustPopulate(t, c, k, src)
				makeWritable(t, e.Dir)
				p := tc.fifo(c.Root())
				mkfifo(t, p)
				var err error
				noHang(t, "open", []string{p}, func() {
					var c2 *Cache
					c2, err = Open(c.Root(), c.opt)
					if err != nil {
						return
					}
					defer c2.Close()
					err = o.run(t, c2)
				})
				switch tc.name {
				case "config", "version":
					// The root cannot be read: refused, naming the file.
					if err == nil || !strings.Contains(err.Error(), "named pipe") || !strings.Contains(err.Error(), tc.name) {
						t.Fatalf("got %v, want a refusal naming %s as a named pipe", err, tc.name)
					}
				case "manifest", "entry file":
					if o.name == "gc" || o.name == "lock" || o.name == "stage" {
						break
					}
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("got %v, want an error saying %q", err, tc.wantErr)
					}
				case "key lock":
					if o.name == "lock" {
						if err == nil || !strings.Contains(err.Error(), "named pipe") {
							t.Fatalf("lock over a named pipe: %v, want a refusal", err)
						}
					} else if err != nil {
						t.Fatal(err)
					}
				default:
					if err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	}
}

// gc removes what was planted in place of lock files: nobody can hold it.
func TestTrimRemovesPlantedPipes(t *testing.T) {
	c, _ := testCache(t)
	k := MustParseKey("k")
	os.MkdirAll(filepath.Join(c.Root(), "locks", k.shard()), 0o700)
	pipes := []string{
		filepath.Join(c.Root(), "locks", k.shard(), k.name()),
		filepath.Join(c.Root(), "tmp", "p-4567.lock"),
	}
	for _, p := range pipes {
		mkfifo(t, p)
	}
	noHang(t, "gc", pipes, func() {
		if _, err := c.Trim(TrimOptions{}); err != nil {
			t.Error(err)
		}
	})
	for _, p := range pipes {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want it removed", p, err)
		}
	}
	l, err := c.Lock(t.Context(), k, LockOptions{})
	if err != nil {
		t.Fatalf("lock after gc: %v", err)
	}
	l.Release()
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }
