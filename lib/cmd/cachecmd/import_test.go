package cachecmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/cache"
)

// exportStream returns the export stream of an entry holding a store of
// about 2 MB (several zstd blocks).
func exportStream(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	c, err := cache.Open(filepath.Join(dir, "a"), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	writeStore(t, filepath.Join(dir, "s.aipk"), 200, 10000)
	k := cache.MustParseKey("k")
	if _, _, err := c.Populate(k, []string{filepath.Join(dir, "s.aipk")}, cache.PopulateOptions{}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := c.Export(t.Context(), k, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The first SIGTERM stops an import whose stdin stalls, wherever it is: in
// the middle of a member, or after the whole archive while the writer keeps
// the pipe open (it used to go on waiting for the end of the stream, and a
// second signal was needed). It exits 130 and leaves nothing behind.
func TestImportInterruptedWhileStdinStalls(t *testing.T) {
	stream := exportStream(t)
	for _, tc := range []struct {
		name  string
		bytes int
		ready func(root string) bool // the import is at the stall
	}{
		{"mid-stream", len(stream) / 2, func(root string) bool {
			m, _ := filepath.Glob(filepath.Join(root, "tmp", "p-*", "s.aipk"))
			return len(m) > 0
		}},
		{"after the archive", len(stream), func(root string) bool {
			m, _ := filepath.Glob(filepath.Join(root, "tmp", "p-*", "s.aipk"))
			if len(m) == 0 {
				return false
			}
			fi, err := os.Stat(m[0])
			// Received whole: read-only once checked.
			return err == nil && fi.Mode().Perm()&0o200 == 0
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "b")
			cmd := self(t, nil, "--dir", root, "import")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if _, err := in.Write(stream[:tc.bytes]); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			deadline := time.Now().Add(2 * time.Minute)
			for !tc.ready(root) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("import never reached the stall\n%s", stderr.Bytes())
				}
				time.Sleep(5 * time.Millisecond)
			}
			cmd.Process.Signal(syscall.SIGTERM)
			// Generous: a stopped import exits in milliseconds; this only
			// bounds a hang.
			var werr error
			select {
			case werr = <-exited:
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				<-exited
				t.Fatalf("import ignored SIGTERM while stdin stalled\n%s", stderr.Bytes())
			}
			var ee *exec.ExitError
			if !errors.As(werr, &ee) || ee.ExitCode() != 130 {
				t.Fatalf("import after SIGTERM: %v, want exit 130\n%s", werr, stderr.Bytes())
			}
			if left, _ := os.ReadDir(filepath.Join(root, "tmp")); len(left) != 0 {
				t.Errorf("tmp/ holds %d names after an interrupted import", len(left))
			}
			if checkState(t, root, cache.MustParseKey("k"), "interrupted import") {
				t.Error("an interrupted import published its entry")
			}
		})
	}
}
