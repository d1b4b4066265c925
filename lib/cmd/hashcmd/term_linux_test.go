package hashcmd

import (
	"bytes"
	"os"
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

// TestKeyRefusesTerminal: `aiperf-hash key` with no INPUT in a terminal
// (a Makefile that lost its trace argument) is a usage error at once, not a
// wait for a trace typed at the keyboard.
func TestKeyRefusesTerminal(t *testing.T) {
	tty, hangUp := openPTY(t)
	type result struct {
		code int
		msg  string
	}
	done := make(chan result, 1)
	go func() {
		app := New()
		var stdout, stderr bytes.Buffer
		app.Reader, app.Writer, app.ErrWriter = tty, &stdout, &stderr
		code := base.Main(app, []string{"aiperf-hash", "key", "--no-memo", "--model", "m"})
		done <- result{code, stderr.String()}
	}()
	select {
	case r := <-done:
		if r.code != base.ExitTrouble || !strings.Contains(r.msg, "terminal") {
			t.Errorf("key with stdin a terminal: exit %d, %q; want 2 and a word about the terminal", r.code, r.msg)
		}
	case <-time.After(10 * time.Second):
		hangUp()
		<-done
		t.Fatal("key waited for a trace typed at the terminal")
	}
}
