package replaycmd

import (
	"bytes"
	"io"
	"strings"
	"sync"

	"github.com/aiperf/toolkit/lib/htmlreport"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/request"
	"github.com/aiperf/toolkit/lib/servermetrics"
)

// What starts every warning and note a command prints, and the line that
// says --stop-on-saturation ended a run.
const (
	warningPrefix  = "aiperf-replay: warning: "
	notePrefix     = "aiperf-replay: note: "
	stoppingPrefix = "aiperf-replay: stopping: "
)

// warnTap passes everything written through to w and keeps the warnings
// (and the line saying the run was stopped early) and the notes among its
// lines, for the HTML page. A line longer than maxTapLine is
// passed on and not kept (a progress line that never ends).
type warnTap struct {
	w        io.Writer
	mu       sync.Mutex // the scrape agent's and the saturation watch's warnings come from their goroutines
	line     []byte
	long     bool
	warnings []string
	notes    []string
}

const maxTapLine = 64 << 10

func (t *warnTap) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, err := t.w.Write(p)
	for rest := p[:n]; len(rest) > 0; {
		i := bytes.IndexAny(rest, "\r\n")
		if i < 0 {
			t.keep(rest)
			break
		}
		t.keep(rest[:i])
		// a live line is cleared (\r, ESC [K) before what follows it
		if s := strings.TrimPrefix(string(t.line), "\033[K"); !t.long {
			switch {
			case strings.HasPrefix(s, warningPrefix):
				t.warnings = append(t.warnings, strings.TrimPrefix(s, warningPrefix))
			case strings.HasPrefix(s, stoppingPrefix): // --stop-on-saturation ended the run
				t.warnings = append(t.warnings, strings.TrimPrefix(s, "aiperf-replay: "))
			case strings.HasPrefix(s, notePrefix):
				t.notes = append(t.notes, strings.TrimPrefix(s, notePrefix))
			}
		}
		t.line, t.long, rest = t.line[:0], false, rest[i+1:]
	}
	return n, err
}

func (t *warnTap) keep(b []byte) {
	if len(t.line)+len(b) > maxTapLine {
		t.long = true
		return
	}
	t.line = append(t.line, b...)
}

// consoleParts are the console's output for a summary, rendered once so
// that the console prints them and the HTML page shows them alike.
type consoleParts struct {
	table, timing, prefix, server string
	steady                        string   // --steady-state's window and figures
	serverWarnings                []string // printed before the server summary
	note                          string   // the shards' note, if any
	noteWarnings                  []string // the shards' warnings, printed after the server summary
}

// renderParts renders sum's table (with --show-trace-timing's section),
// the prefix box and the server summary of rep with its warnings.
func renderParts(sum *metrics.Summary, showTiming bool, ps *prefixSummary, rep *servermetrics.Report, files []string) consoleParts {
	var p consoleParts
	var b strings.Builder
	metrics.WriteConsole(&b, sum, "")
	p.table = b.String()
	b.Reset()
	writeTraceTiming(&b, showTiming, sum)
	p.timing = b.String()
	b.Reset()
	if ps != nil {
		ps.writeBox(&b)
		p.prefix = b.String()
		b.Reset()
	}
	if rep != nil {
		p.serverWarnings = append(servermetrics.Warnings(rep), warmupWarnings(rep, files)...)
		servermetrics.WriteConsole(&b, rep, clientFigures(sum))
		p.server = b.String()
	}
	return p
}

// print prints the parts in the console's order: the table, the trace
// timing and the prefix box, the server's warnings (on errw, even when
// quiet), the server summary.
func (p *consoleParts) print(w, errw io.Writer, quiet bool) {
	if !quiet {
		io.WriteString(w, p.table+p.steady+p.timing+p.prefix)
	}
	for _, s := range p.serverWarnings {
		io.WriteString(errw, warningPrefix+s+"\n")
	}
	if !quiet {
		io.WriteString(w, p.server)
	}
	warnAll(errw, p.noteWarnings)
}

// page describes the parts to the HTML page: the warnings printed so far
// (tap) with the server's, and the texts after the table.
func (p *consoleParts) page(tap *warnTap) ([]string, []string, []htmlreport.Text) {
	var warns, notes []string
	if tap != nil {
		warns = append(warns, tap.warnings...)
		notes = tap.notes
	}
	warns = append(warns, p.serverWarnings...)
	warns = append(warns, p.noteWarnings...)
	texts := []htmlreport.Text{
		{Title: "Steady state", Body: p.steady},
		{Title: "Trace timing", Body: p.timing},
		{Title: "Prefix cache: the reuse the trace offers", Body: p.prefix},
		{Title: "Server metrics", Body: p.server},
		{Title: "Shards", Body: p.note},
	}
	return warns, notes, texts
}

// notStreamingNote says why a run of a store whose bodies ask for no
// streamed answer has no TTFT or ITL ("" for a streaming store, and for
// embeddings, which never stream): aiperf-pack's default is not to stream.
func notStreamingNote(p *replay.Plan) string {
	switch {
	case p.Streaming || p.Endpoint == request.Embeddings:
		return ""
	case p.Endpoint == request.Raw:
		return "the store is not streaming (its bodies do not ask for \"stream\":true): TTFT/ITL need streamed bodies"
	}
	return "the store is not streaming: TTFT/ITL need aiperf-pack --streaming"
}
