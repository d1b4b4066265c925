package digest

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe planted as the memo file or its lock (anyone who may write
// a shared root can make one) neither blocks a digest nor breaks it: the
// memo is read as absent, and a lock that is not a regular file makes Flush
// fail with an error saying so. Before, opening either blocked until a
// writer came, that is, forever. The watchdog only fires on a hang (a
// digest of a small file takes microseconds), so it cannot fail a good run.
func TestMemoNamedPipe(t *testing.T) {
	for _, name := range []string{MemoFile, MemoFile + ".lock"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, name)
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			f := writeFile(t, filepath.Join(t.TempDir(), "f"), []byte("data"))
			h := &Hasher{Memo: OpenMemo(dir), clock: func() time.Time { return time.Now().Add(time.Hour) }}
			var d Sum
			var herr, ferr error
			done := make(chan struct{})
			go func() {
				defer close(done)
				d, herr = h.File(context.Background(), f)
				ferr = h.Memo.Flush()
			}()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Errorf("blocked on the named pipe %s", name)
				for {
					if fd, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						syscall.Close(fd)
					}
					select {
					case <-done:
					case <-time.After(10 * time.Millisecond):
						continue
					}
					break
				}
			}
			if herr != nil || d != Sum(sha256.Sum256([]byte("data"))) {
				t.Fatalf("digest: %v %v", d, herr)
			}
			switch name {
			case MemoFile:
				// The memo file is replaced by a real one.
				if ferr != nil {
					t.Fatalf("flush over a piped memo file: %v", ferr)
				}
				if b := readMemo(fifo); b == nil {
					t.Errorf("flush left no readable memo at %s", fifo)
				}
			default:
				if ferr == nil || !strings.Contains(ferr.Error(), "not a regular file") {
					t.Fatalf("flush with a piped lock: %v, want a refusal", ferr)
				}
			}
		})
	}
}
