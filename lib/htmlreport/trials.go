package htmlreport

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/metrics"
)

// TrialsPage is what the page of a trials run (aiperf-replay --trials N
// --html, or report --html of its folder) shows: the figures across the
// trials at its top, then each trial's summary and, collapsed, its charts.
type TrialsPage struct {
	Title    string // "" means "aiperf-replay trials"
	Source   string // the trials folder, as the user named it
	Level    float64
	Names    []string   // the trial folders' names, in trial order
	Figures  []TrialRow // the figures across the trials
	Warnings []string   // the command's, shown at the top
	Notes    []string
	// Trial returns trial i's page (Page.Console gives its warning boxes)
	// and its collected requests. It is called once a trial, in order,
	// each trial's section written before the next is read: the trials'
	// requests are not all held at once.
	Trial func(i int) (Page, *Collector, error)
}

// TrialRow is one figure across the trials.
type TrialRow struct {
	Metric, Stat, Unit string
	Mean               float64
	// Std, CILow, CIHigh and CV are nil for one trial (CV for a zero mean).
	Std, CILow, CIHigh, CV *float64
	Values                 []float64 // one a trial, in Names' order; NaN: the trial has none
}

const trialsCSS = `table.trials td { text-align: right; font-variant-numeric: tabular-nums; }
table.trials tbody th { text-align: left; font-weight: normal; }
table.trials td.mean { font-weight: 600; }
section.trial { margin-top: 32px; }
section.trial > h2 { font-size: 19px; }
details.charts > summary { font-size: 14px; cursor: pointer; margin: 14px 0 4px; }
`

// WriteTrials writes the page of a trials run.
func WriteTrials(w io.Writer, p TrialsPage) error {
	title := p.Title
	if title == "" {
		title = "aiperf-replay trials"
	}
	var b strings.Builder
	writeHead(&b, title, trialsCSS)
	b.WriteString("<p class=\"meta\">")
	if p.Source != "" {
		fmt.Fprintf(&b, "Trials folder <code>%s</code>: ", esc(p.Source))
	}
	fmt.Fprintf(&b, "%s, each a whole run of the schedule. Every figure is each trial's own (its run-level throughput over its own span, its own percentiles), then their mean and the t-based %s %% confidence interval of the mean across the trials (no figure counts the pauses between trials).</p>\n",
		nTrials(len(p.Names)), strconv.FormatFloat(100*p.Level, 'g', -1, 64))
	writeWarnings(&b, p.Warnings)
	writeNotes(&b, p.Notes)
	writeTrialsTable(&b, p)
	var win windows
	for i, name := range p.Names {
		if p.Trial == nil {
			break
		}
		tp, c, err := p.Trial(i)
		if err != nil {
			return err
		}
		win = writeTrial(&b, name, tp, c)
	}
	if len(p.Names) > 0 {
		b.WriteString("<h2>How the charts are drawn</h2>\n<p class=\"how\">")
		writeHow(&b, win) // the last trial's windows; each trial's captions give its own
		b.WriteString("</p>\n")
	}
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// anchor is the id of a trial's section.
func anchor(name string) string {
	return "t-" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, name)
}

// writeTrialsTable writes the figures across the trials: a row a figure,
// its mean, spread and interval, then each trial's value.
func writeTrialsTable(b *strings.Builder, p TrialsPage) {
	fmt.Fprintf(b, "<h2>Across %s</h2>\n", nTrials(len(p.Names)))
	if len(p.Figures) == 0 {
		b.WriteString("<p>No figure: no trial completed a request.</p>\n")
		return
	}
	pct := strconv.FormatFloat(100*p.Level, 'g', -1, 64) + " % CI"
	fmt.Fprintf(b, "<table class=\"trials\">\n<thead><tr><th>Metric</th><th>Stat</th><th>Mean</th><th>Std</th><th>%s</th><th>CV</th>", esc(pct))
	for _, n := range p.Names {
		fmt.Fprintf(b, "<th>%s</th>", esc(n))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	opt := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmtNum(*v)
	}
	for _, f := range p.Figures {
		ci := "- (1 trial)"
		if f.CILow != nil && f.CIHigh != nil {
			ci = "[" + fmtNum(*f.CILow) + ", " + fmtNum(*f.CIHigh) + "]"
		}
		cv := "-"
		if f.CV != nil {
			cv = strconv.FormatFloat(100**f.CV, 'f', 1, 64) + " %"
		}
		fmt.Fprintf(b, "<tr><th>%s (%s)</th><td>%s</td><td class=\"mean\">%s</td><td>%s</td><td>%s</td><td>%s</td>",
			esc(f.Metric), esc(f.Unit), esc(f.Stat), fmtNum(f.Mean), opt(f.Std), ci, cv)
		for i := range p.Names {
			v := "-"
			if i < len(f.Values) && !math.IsNaN(f.Values[i]) {
				v = fmtNum(f.Values[i])
			}
			fmt.Fprintf(b, "<td>%s</td>", v)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
}

// writeTrial writes one trial's section: what it was, its warning boxes,
// its summary table and, collapsed, its charts; it returns its windows.
func writeTrial(b *strings.Builder, name string, p Page, c *Collector) windows {
	s := p.Summary
	if s == nil {
		s = &metrics.Summary{}
	}
	t0, t1 := span(c)
	win := chooseWindows(t0, t1)
	fmt.Fprintf(b, "<section class=\"trial\" id=\"%s\">\n<h2>%s</h2>\n", esc(anchor(name)), esc(name))
	writeMeta(b, p, s, t0, t1)
	writeWarnings(b, p.Warnings)
	writePanels(b, Panels(p.Console))
	writeSummaryTable(b, s)
	fmt.Fprintf(b, "<details class=\"charts\"><summary>%s's charts</summary>\n", esc(name))
	writeCharts(b, "h3", c, s, win, t1)
	b.WriteString("</details>\n</section>\n")
	return win
}

// nTrials is "1 trial", "3 trials".
func nTrials(n int) string {
	if n == 1 {
		return "1 trial"
	}
	return strconv.Itoa(n) + " trials"
}
