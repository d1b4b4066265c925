package cachecmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/internal/term"
)

// openPTY returns the terminal end of a new pseudo-terminal and a function
// that hangs it up (a read of the terminal then fails).
func openPTY(t *testing.T) (*os.File, func()) {
	t.Helper()
	tty, ptm, err := term.OpenPTY()
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { tty.Close(); ptm.Close() })
	return tty, func() { ptm.Close() }
}

// TestStreamsRefuseTerminal: export will not write its binary stream to a
// terminal, and import will not wait for one typed at it: both are usage
// errors (exit 2) at once.
func TestStreamsRefuseTerminal(t *testing.T) {
	tty, hangUp := openPTY(t)
	root := filepath.Join(t.TempDir(), "cache")
	src := filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(src, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(stdin *os.File, stdout *os.File, args ...string) (int, string) {
		app := New()
		var stderr bytes.Buffer
		app.Reader, app.ErrWriter = stdin, &stderr
		if stdout != nil {
			app.Writer = stdout
		} else {
			app.Writer = &bytes.Buffer{}
		}
		return base.Main(app, append([]string{"aiperf-cache", "--dir", root}, args...)), stderr.String()
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	if code, msg := run(devnull, nil, "populate", "k", src); code != 0 {
		t.Fatalf("populate: %d %s", code, msg)
	}
	if code, msg := run(devnull, tty, "export", "k"); code != base.ExitTrouble || !strings.Contains(msg, "terminal") {
		t.Errorf("export to a terminal: exit %d, %q; want 2 and a word about the terminal", code, msg)
	}
	type result struct {
		code int
		msg  string
	}
	done := make(chan result, 1)
	go func() {
		code, msg := run(tty, nil, "import")
		done <- result{code, msg}
	}()
	select {
	case r := <-done:
		if r.code != base.ExitTrouble || !strings.Contains(r.msg, "terminal") {
			t.Errorf("import from a terminal: exit %d, %q; want 2 and a word about the terminal", r.code, r.msg)
		}
	case <-time.After(10 * time.Second):
		hangUp()
		<-done
		t.Fatal("import waited for input typed at the terminal")
	}
}
