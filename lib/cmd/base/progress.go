package base

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf/toolkit/lib/internal/term"
)

// CountingReader adds the bytes read through it to N, which a progress bar
// may read from another goroutine.
type CountingReader struct {
	R io.Reader
	N *atomic.Int64
}

func (c CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N.Add(int64(n))
	return n, err
}

// IsTerminal reports whether w is a terminal (not merely a character device:
// /dev/null is not one).
func IsTerminal(w io.Writer) bool { return term.Is(w) }

// Progress prints a one-line status to w at most every 200 ms, only when w is
// a terminal. Done clears the line.
type Progress struct {
	w    io.Writer
	on   bool
	mu   sync.Mutex
	last time.Time
}

// NewProgress returns a progress line on w (silent unless w is a terminal).
func NewProgress(w io.Writer) *Progress { return &Progress{w: w, on: IsTerminal(w)} }

// Printf updates the line.
func (p *Progress) Printf(format string, args ...any) {
	if p == nil || !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if now := time.Now(); now.Sub(p.last) >= 200*time.Millisecond {
		p.last = now
		fmt.Fprintf(p.w, "\r\033[K"+format, args...)
	}
}

// Done clears the progress line.
func (p *Progress) Done() {
	if p != nil && p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// Bar renders done/total as a 20-cell bar with a percentage; with an unknown
// total it renders only the byte count.
func Bar(done, total int64) string {
	if total <= 0 {
		return fmt.Sprintf("%.1f MB", float64(done)/1e6)
	}
	if done > total {
		done = total
	}
	const cells = 20
	full := int(done * cells / total)
	bar := make([]byte, cells)
	for i := range bar {
		if i < full {
			bar[i] = '#'
		} else {
			bar[i] = ' '
		}
	}
	return fmt.Sprintf("[%s] %3d%%", bar, done*100/total)
}
