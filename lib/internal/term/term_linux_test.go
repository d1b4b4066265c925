package term

import "testing"

// TestPTY: both ends of a pseudo-terminal are terminals.
func TestPTY(t *testing.T) {
	tty, ptm, err := OpenPTY()
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	defer ptm.Close()
	defer tty.Close()
	if !Is(tty) {
		t.Errorf("Is(%s) = false, want true", tty.Name())
	}
	if !Is(ptm) {
		t.Error("Is(/dev/ptmx) = false, want true")
	}
}
