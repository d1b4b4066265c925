// Package htmlreport writes aiperf-replay's HTML report: one self-contained
// page (no script, no stylesheet, font or image from elsewhere; it opens
// offline) with the run's summary table, the error summary, and charts
// drawn as inline SVG by lib/plot: TTFT, ITL and request latency over time
// with per-window p50 and p99, their CDFs, output tokens/s and requests in
// flight over time, send lateness over time and errors over time by kind.
//
// The page stays small whatever the number of requests: point clouds are
// binned to 2×2-pixel cells (plot.Points), a CDF of more than 2,000 values
// is drawn through 1,010 quantiles, requests in flight are reduced to one
// value per pixel column, and everything else is per window (at most 60).
// A million requests make a page of about a megabyte. The page is a pure
// function of its inputs: no clock, no random number.
package htmlreport

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
)

// Page is what the report shows besides the charts.
type Page struct {
	Title   string   // "" means "aiperf-replay report"
	Sources []string // the records files, as the user named them
	RunID   string   // the run's benchmark id, when one run
	// Run is the run info the records carry (that of the first file that
	// has one), or nil.
	Run     *result.RunInfo
	Summary *metrics.Summary
	// Console is the summary as the console printed it (WriteConsole):
	// the page shows it whole at its end, collapsed, and its boxed
	// warnings (Panels) at its top.
	Console string
	// Warnings are the warnings the command printed (without its name),
	// shown above the summary.
	Warnings []string
	// Notes are the notes the command printed, shown below the warnings.
	Notes []string
	// Texts are the console's parts after the table, shown after it.
	Texts []Text
}

// figure is a chart's SVG with its caption (HTML).
type figure struct {
	svg     []byte
	caption string
}

// Write writes the page for the records c collected.
func Write(w io.Writer, p Page, c *Collector) error {
	var b strings.Builder
	title := p.Title
	if title == "" {
		title = "aiperf-replay report"
	}
	s := p.Summary
	if s == nil {
		s = &metrics.Summary{}
	}
	t0, t1 := span(c)
	win := chooseWindows(t0, t1)

	writeHead(&b, title, "")
	writeMeta(&b, p, s, t0, t1)
	writeWarnings(&b, p.Warnings)
	writePanels(&b, Panels(p.Console))
	writeNotes(&b, p.Notes)

	writeSummary(&b, s)
	writeTexts(&b, p.Texts)
	writeCharts(&b, "h2", c, s, win, t1)

	b.WriteString("<h2>How the charts are drawn</h2>\n<p class=\"how\">")
	writeHow(&b, win)
	b.WriteString("</p>\n")
	if p.Console != "" {
		fmt.Fprintf(&b, "<details><summary>The summary as the console printed it</summary>\n<pre>%s</pre>\n</details>\n", esc(p.Console))
	}
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMeta writes what the run was: its id, records, requests and span,
// and the run info's server, schedule and store.
func writeMeta(b *strings.Builder, p Page, s *metrics.Summary, t0, t1 int64) {
	b.WriteString("<p class=\"meta\">")
	if p.RunID != "" {
		fmt.Fprintf(b, "Run <code>%s</code>. ", esc(p.RunID))
	}
	if len(p.Sources) > 0 {
		b.WriteString("Records: ")
		for i, src := range p.Sources {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(b, "<code>%s</code>", esc(src))
		}
		b.WriteString(". ")
	}
	fmt.Fprintf(b, "%s profiling requests (%s succeeded, %s failed", groupInt(s.Requests+s.ErrorRequests), groupInt(s.Requests), groupInt(s.ErrorRequests))
	if s.Warmup > 0 {
		fmt.Fprintf(b, "; %s warmup requests left out", groupInt(s.Warmup))
	}
	fmt.Fprintf(b, "), over %s s from the first send to the last end", fmtNum(float64(t1-t0)/1e9))
	if !s.Streaming {
		b.WriteString("; not streamed, so no TTFT or ITL")
	}
	b.WriteString(".</p>\n")
	if r := p.Run; r != nil {
		b.WriteString("<p class=\"meta\">")
		if r.Model != "" {
			fmt.Fprintf(b, "Model <code>%s</code>, ", esc(r.Model))
		}
		fmt.Fprintf(b, "server <code>%s%s</code>", esc(r.URL), esc(r.Path))
		if r.Schedule != "" {
			fmt.Fprintf(b, ", schedule %s", esc(r.Schedule))
		}
		if r.Offered != "" {
			fmt.Fprintf(b, " (%s)", esc(r.Offered))
		}
		if r.Shards > 0 {
			fmt.Fprintf(b, ", %d shards", r.Shards)
		}
		if r.Store.Path != "" {
			sum := r.Store.SHA256
			if len(sum) > 12 {
				sum = sum[:12]
			}
			fmt.Fprintf(b, "; store <code>%s</code> (sha256 %s…, %s records)", esc(r.Store.Path), esc(sum), groupInt(r.Store.Records))
		}
		if r.StartNS > 0 {
			fmt.Fprintf(b, "; started %s", time.Unix(0, r.StartNS).UTC().Format("2006-01-02 15:04:05.000 UTC"))
		}
		if r.Tool != "" {
			fmt.Fprintf(b, "; records by %s", esc(r.Tool))
		}
		b.WriteString(".</p>\n")
	}
}

// writeCharts writes the charts of the requests c collected, in three
// sections under headings of tag h (h2 on a run's page).
func writeCharts(b *strings.Builder, h string, c *Collector, s *metrics.Summary, win windows, t1 int64) {
	noStream := "no values: TTFT and ITL need streamed answers"
	if s.Streaming {
		noStream = "no values"
	}
	perWindow := fmt.Sprintf("the lines are the p50 and p99 of the requests sent in each %s window", win)
	// One metric at a time, its charts drawn before the next one's values
	// are gathered: a million requests' columns are not all held at once.
	var over, distr []figure
	for _, m := range [...]struct {
		tag, name, what, empty string
		get                    func(*request) float32
	}{
		{"time_to_first_token", "TTFT", "time to first token", noStream, func(q *request) float32 { return q.ttft }},
		{"inter_token_latency", "ITL", "inter-token latency ((latency − TTFT) / (output tokens − 1))", noStream, func(q *request) float32 { return q.itl }},
		{"request_latency", "Request latency", "request latency (send to last content)", "no successful request", func(q *request) float32 { return q.latency }},
	} {
		v := newMetricView(m.tag, m.name, "ms", c.column(m.get))
		ch, note := v.overTime(win, m.empty)
		over = append(over, figure{ch.SVG(), esc(fmt.Sprintf("Each successful request is a point at its send time and its %s; %s. ", m.what, perWindow) + note)})
		ch, note = v.cdf(m.empty)
		distr = append(distr, figure{ch.SVG(), esc(fmt.Sprintf("The fraction of the %s successful requests whose %s is at most x (", groupInt(int64(len(v.sorted))), v.name)) +
			"<code>" + esc(v.tag) + "</code>). " + esc(note)})
	}
	late := newMetricView("send_lateness", "Send lateness", "ms", c.column(func(q *request) float32 { return q.lateness }))
	lateChart, lateNote := late.overTime(win, "no send times with an intended time")
	lateChart.Title = "Send lateness over time"
	tps, haveTPS := 0.0, false
	if r := s.Get("output_token_throughput"); r != nil {
		tps, haveTPS = r.Avg, true
	}
	load := []figure{
		{throughput(c, win, t1, tps, haveTPS).SVG(), esc(fmt.Sprintf("Output tokens of successful requests per second, in %s windows; each request's output tokens are spread evenly from its first content to its end. The dashed line is the table's output_token_throughput (over the run's span).", win))},
		{inFlight(c, win, t1).SVG(), esc("Profiling requests sent and not yet ended (failed ones included; warmup requests left out), per pixel column of the chart: the highest count in the column and the time-weighted mean.")},
		{lateChart.SVG(), esc("How late each request was sent against its schedule (sent − intended; the schedule's honesty: an open-loop client should keep it near 0); every request is a point, failed ones included; "+perWindow+". ") + esc(lateNote)},
		{errorsOverTime(c, win).SVG(), esc(fmt.Sprintf("Failed requests per %s window by send time (the last window may be partial), one line per kind (error type and HTTP code), the %d most frequent apart.", win, errorKinds))},
	}
	writeSectionAt(b, h, "Latency over time", over)
	writeSectionAt(b, h, "Distributions", distr)
	writeSectionAt(b, h, "Load and the schedule", load)
}

// writeHow says how a run's charts are drawn.
func writeHow(b *strings.Builder, win windows) {
	b.WriteString(esc(fmt.Sprintf("Times are seconds since the run's first send. Windows are %s long (1, 2 or 5 times a power of ten seconds, at most %d over the run). "+
		"Point clouds are binned: the plot area is cut into 2×2-pixel cells and each cell holding a request is drawn once, shaded by its count on a logarithmic scale of the fullest cell's, so a million requests show their density and a lone outlier still shows. "+
		"Percentiles are numpy's linear method, by the same code as the table. A CDF of up to %s values is drawn as exact steps, a larger one through its quantiles at every 0.1 %% and 99.91 %% to 99.99 %%. "+
		"An axis whose largest value lies beyond 1.5 × p99.9 is cut at 1.2 × p99.9 and says how many values it drew on its edge.", win, maxWindows, groupInt(exactCDF))))
}

// writeHead writes a page's start, up to its h1: the page frame every
// report of the package shares; css, when not "", is a page's own rules
// beside the shared ones.
func writeHead(b *strings.Builder, title, css string) {
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(b, "<title>%s</title>\n", esc(title))
	b.WriteString(style)
	if css != "" {
		fmt.Fprintf(b, "<style>\n%s</style>\n", css)
	}
	b.WriteString("</head>\n<body>\n")
	fmt.Fprintf(b, "<h1>%s</h1>\n", esc(title))
}

// writeSection writes a heading and its charts, each with its caption.
func writeSection(b *strings.Builder, h string, figs []figure) { writeSectionAt(b, "h2", h, figs) }

// writeSectionAt is writeSection under a heading of tag (h2, h3).
func writeSectionAt(b *strings.Builder, tag, h string, figs []figure) {
	fmt.Fprintf(b, "<%s>%s</%s>\n<div class=\"charts\">\n", tag, esc(h), tag)
	for _, f := range figs {
		b.WriteString("<figure>\n")
		b.Write(f.svg)
		fmt.Fprintf(b, "<figcaption>%s</figcaption>\n</figure>\n", f.caption)
	}
	b.WriteString("</div>\n")
}

// span returns the first send and the last end of the collected requests.
func span(c *Collector) (t0, t1 int64) {
	first := true
	for q := range c.all() {
		if first || q.sent < t0 {
			t0, first = q.sent, false
		}
		t1 = max(t1, q.end)
	}
	return t0, max(t1, t0)
}

func writeSummary(b *strings.Builder, s *metrics.Summary) {
	b.WriteString("<h2>Summary</h2>\n")
	writeSummaryTable(b, s)
}

// writeSummaryTable writes the summary table and the error summary.
func writeSummaryTable(b *strings.Builder, s *metrics.Summary) {
	cols, rows := metrics.ConsoleTable(s)
	if len(rows) == 0 {
		b.WriteString("<p>No metrics: no profiling request.</p>\n")
	} else {
		b.WriteString("<table class=\"summary\">\n<thead><tr>")
		for _, c := range cols {
			fmt.Fprintf(b, "<th>%s</th>", esc(c))
		}
		b.WriteString("</tr></thead>\n<tbody>\n")
		for _, r := range rows {
			b.WriteString("<tr>")
			for i, c := range r {
				if i == 0 {
					fmt.Fprintf(b, "<th>%s</th>", esc(c))
					continue
				}
				fmt.Fprintf(b, "<td>%s</td>", esc(c))
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</tbody>\n</table>\n")
	}
	if len(s.Errors) == 0 {
		return
	}
	b.WriteString("<h3>Error summary</h3>\n<table class=\"errors\">\n<thead><tr><th>Code</th><th>Type</th><th>Message</th><th>Count</th></tr></thead>\n<tbody>\n")
	for _, e := range s.Errors {
		code := "N/A"
		if e.Code != 0 {
			code = strconv.Itoa(e.Code)
		}
		typ := e.Type
		if typ == "" {
			typ = "N/A"
		}
		msg := e.Message
		if r := []rune(msg); len(r) > 300 {
			msg = string(r[:300]) + "…"
		}
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td class=\"msg\">%s</td><td>%s</td></tr>\n", esc(code), esc(typ), esc(msg), groupInt(e.Count))
	}
	b.WriteString("</tbody>\n</table>\n")
}

// esc escapes text for HTML, and drops the characters HTML may not hold.
func esc(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r >= 0x20 && r != 0x7f {
			return r
		}
		return -1
	}, s)
	return html.EscapeString(s)
}

func groupInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// fmtNum writes a value with three significant digits at least.
func fmtNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	a := math.Abs(v)
	switch {
	case a >= 100:
		return groupInt(int64(math.Round(v)))
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1 || a == 0:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// style is the page's only stylesheet, inline.
const style = `<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px auto; max-width: 1180px; color: #222; background: #fff; }
h1 { font-size: 22px; margin: 0 0 6px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
p.meta, p.how { font-size: 13px; color: #444; line-height: 1.45; }
table { border-collapse: collapse; font-size: 12.5px; }
th, td { border: 1px solid #d8d8d8; padding: 3px 8px; }
thead th { background: #f3f4f6; }
table.summary td { text-align: right; font-variant-numeric: tabular-nums; }
table.summary tbody th { text-align: left; font-weight: normal; }
td.msg { max-width: 640px; word-break: break-word; }
.charts { display: flex; flex-wrap: wrap; gap: 16px 24px; }
figure { margin: 0; width: 570px; }
figure svg { display: block; }
figcaption { font-size: 12px; color: #555; line-height: 1.4; margin-top: 4px; }
pre { font-size: 11px; overflow-x: auto; background: #f8f8f8; padding: 8px; }
pre.console { font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; }
div.warn { border: 1px solid #e0b252; background: #fff8e6; padding: 2px 14px; margin: 12px 0; }
div.warn h2 { border: 0; margin: 8px 0 4px; color: #8a5a00; }
div.warn li, ul.notes li { font-size: 13px; line-height: 1.45; }
div.warn pre.panel { background: none; padding: 0 0 6px; font-size: 12.5px; white-space: pre-wrap; }
</style>
`
