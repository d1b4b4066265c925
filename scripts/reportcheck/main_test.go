package main

import (
	"slices"
	"testing"
)

const console = `
                    NVIDIA AIPerf | LLM Metrics
┏━━━━━┓
┃ x   ┃
┗━━━━━┛

╭──── Output Sequence Length Mismatch Warning ────╮
│  3 of 40 requests (7.5%) have output length     │
│  differing from requested.                      │
╰─────────────────────────────────────────────────╯
aiperf-replay: warning: shard 1/2: the clock is not synchronized
`

// TestConsoleWarnings: the warning lines and the panels, each panel as its
// title and its lines joined.
func TestConsoleWarnings(t *testing.T) {
	got := consoleWarnings(console)
	want := []string{"Output Sequence Length Mismatch Warning", "3 of 40 requests (7.5%) have output length differing from requested.", "shard 1/2: the clock is not synchronized"}
	if !slices.Equal(got, want) {
		t.Errorf("consoleWarnings = %q, want %q", got, want)
	}
}

// TestMissingWarnings: a warning shown only in a collapsed section (not in
// the visible text), or only below the summary, is missing; one wrapped
// otherwise than the console wrapped it is found.
func TestMissingWarnings(t *testing.T) {
	warns := consoleWarnings(console)
	top := []string{"aiperf-replay report", "Warning", "shard 1/2: the clock is not", "synchronized", "Output Sequence Length Mismatch Warning",
		"3 of 40 requests (7.5%) have output length differing\nfrom requested.", "Summary", "Metric"}
	if miss := missingWarnings(warns, top, "Summary"); len(miss) != 0 {
		t.Errorf("missing %q from a page that shows them all at the top", miss)
	}
	// the panel only in the collapsed console: not in the visible text
	hidden := []string{"aiperf-replay report", "shard 1/2: the clock is not synchronized", "Summary", "Metric", "The summary as the console printed it"}
	if miss := missingWarnings(warns, hidden, "Summary"); len(miss) != 2 {
		t.Errorf("missing %q, want the panel's title and lines", miss)
	}
	// shown, but below the summary
	below := []string{"Summary", "Output Sequence Length Mismatch Warning", "3 of 40 requests (7.5%) have output length differing from requested.", "shard 1/2: the clock is not synchronized"}
	if miss := missingWarnings(warns, below, "Summary"); len(miss) != 3 {
		t.Errorf("missing %q, want all three (below the summary)", miss)
	}
}

// TestProbed reads probe.js's output back, unescaped.
func TestProbed(t *testing.T) {
	vis, cut, err := probed(`<body><p>x</p><pre id="reportcheck-visible">a &lt;b&gt;
c</pre><pre id="reportcheck-cut"></pre></body>`)
	if err != nil || !slices.Equal(vis, []string{"a <b>", "c"}) || len(cut) != 0 {
		t.Errorf("probed = %q, %q, %v", vis, cut, err)
	}
	if _, _, err := probed("<body></body>"); err == nil {
		t.Error("a DOM without the probe's output is not refused")
	}
}
