package metrics

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultTitle is the console table's title.
const DefaultTitle = "aiperf-replay | LLM Metrics"

// consoleStats are the console table's columns after "Metric", as aiperf's
// ConsoleMetricsExporter lays them out.
var consoleStats = []string{"avg", "min", "max", "p99", "p90", "p50", "std"}

// WriteConsole writes the summary as the Python aiperf prints it after a
// run, as plain text: the metrics table (rows in aiperf's display order,
// display units, numbers with thousands separators and two decimals, N/A
// where a single value has no statistic), then the error summary and the
// warnings: output length mismatch, usage discrepancy, and a client that
// fell behind its schedule. title "" means DefaultTitle.
func WriteConsole(w io.Writer, s *Summary, title string) error {
	if title == "" {
		title = DefaultTitle
	}
	var out strings.Builder
	cols, rows := ConsoleTable(s)
	if len(rows) > 0 {
		out.WriteString("\n")
		writeTable(&out, title, cols, nil, rows)
	}
	if len(s.Errors) > 0 {
		var er [][]string
		for _, e := range s.Errors {
			code := "N/A"
			if e.Code != 0 {
				code = strconv.Itoa(e.Code)
			}
			typ := e.Type
			if typ == "" {
				typ = "N/A"
			}
			er = append(er, []string{code, typ, oneLine(e.Message, 120), groupInt(e.Count)})
		}
		out.WriteString("\n")
		writeTable(&out, "Error Summary", []string{"Code", "Type", "Message", "Count"}, []bool{false, false, true, false}, er)
	}
	if s.OSLMismatches > 0 && s.Requests > 0 {
		writePanel(&out, "Output Sequence Length Mismatch Warning", oslPanel(s))
	}
	if s.UsageDiscrepancies > 0 && s.Requests > 0 {
		pct := float64(s.UsageDiscrepancies) / float64(s.Requests) * 100
		writePanel(&out, "Token Count Discrepancy Warning", []string{
			fmt.Sprintf("%s of %s requests (%.1f%%) show a difference exceeding %g%% between:",
				groupInt(s.UsageDiscrepancies), groupInt(s.Requests), pct, usagePctThreshold),
			"  • API-reported usage tokens (from the 'usage' field)",
			"  • client-computed token counts (the store's input tokens, the client's output count)",
			"",
			"Possible causes:",
			"  • a different tokenizer or chat template than the model's",
			"  • special tokens or preprocessing on the server",
			"",
			"Investigation: usage_*_diff_pct per request in profile_export.jsonl;",
			"check that the store was tokenized with the model's tokenizer.",
		})
	}
	if s.ITLNearZero > 0 && s.ITLRequests > 0 {
		pct := float64(s.ITLNearZero) / float64(s.ITLRequests) * 100
		lines := wrap(fmt.Sprintf("%s of %s requests (%.1f%%) have an inter token latency below %g µs (output token throughput per user above %s tokens/sec/user): their tokens after the first arrived together with it, in the same network read or in one chunk or flush of the server.",
			groupInt(s.ITLNearZero), groupInt(s.ITLRequests), pct, float64(ITLNearZeroNS)/1e3, groupDigits(strconv.Itoa(int(1e9/ITLNearZeroNS)))), panelWidth)
		lines = append(lines, "")
		lines = append(lines, wrap("Their ITL measures how the tokens were delivered, not how fast they were generated, and their throughput per user lifts that metric's average far above its median (p50): read the percentiles. Definitions as aiperf's; the count is itl_near_zero_count in the exports.", panelWidth)...)
		writePanel(&out, "Tokens Arrived Together (ITL ≈ 0)", lines)
	}
	if l := s.Lateness; l.Behind {
		var lines []string
		lines = append(lines, wrap("The client sent requests later than the schedule intended: "+l.Reason+".", panelWidth)...)
		lines = append(lines, wrap(fmt.Sprintf("Client send lateness over %s requests: p50 %s ms, p99 %s ms, max %s ms; %s of them late by more than %.0f%% of their own latency; growth %.2f ms per second of schedule.",
			groupInt(l.Count), group(l.P50NS/1e6), group(l.P99NS/1e6), group(l.MaxNS/1e6), groupInt(l.Late), l.Fraction*100, l.Slope*1e3), panelWidth)...)
		lines = append(lines, "",
			"The offered load was lower than intended, so latencies are optimistic; schedule_relative_latency",
			"measures from the intended send times. Give the client more CPU or connections, or lower the rate.")
		writePanel(&out, "Client Fell Behind the Schedule", lines)
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// oslPanel is the output length mismatch warning, worded by the
// mismatch's direction: outputs shorter than requested mean the server
// stopped at an end-of-sequence token; longer ones, that it ignored the
// body's cap (ollama and older vLLM ignore a chat body's
// max_completion_tokens).
func oslPanel(s *Summary) []string {
	pct := float64(s.OSLMismatches) / float64(s.Requests) * 100
	avg := "N/A"
	if r := s.Get(defs[mOSLDiff].tag); r != nil {
		avg = fmt.Sprintf("%.1f%%", r.Avg)
	}
	longer, shorter := s.OSLLonger, s.OSLMismatches-s.OSLLonger
	lines := []string{
		fmt.Sprintf("%s of %s requests (%.1f%%) have output length differing from requested by more than the threshold:",
			groupInt(s.OSLMismatches), groupInt(s.Requests), pct),
		direction(longer, shorter),
		fmt.Sprintf("Threshold (tokens): min(requested x %g%%, %d)", oslMismatchPct, oslMismatchMaxTokens),
		"Average mismatch: " + avg,
	}
	if longer > 0 {
		lines = append(lines, "",
			"Longer: the server did not apply the body's output cap. Chat bodies carry",
			"max_completion_tokens, which ollama and older vLLM ignore.",
			"Fix: repack the store with aiperf-pack --legacy-max-tokens (the cap as max_tokens).")
	}
	if shorter > 0 {
		lines = append(lines, "",
			"Shorter: the server hit an end-of-sequence token before the requested output length.",
			"Fix options (request fields: repack the store with aiperf-pack and one of):",
			"  • --extra ignore_eos=true   generate until max_tokens (vLLM, TensorRT-LLM)",
			"  • --extra min_tokens=N      a minimum output length (vLLM, TensorRT-LLM, SGLang)")
	}
	return append(lines, "", "Diagnostics: osl_mismatch_diff_pct per request in profile_export.jsonl")
}

func direction(longer, shorter int64) string {
	switch {
	case shorter == 0:
		return "Every one is longer than requested."
	case longer == 0:
		return "Every one is shorter than requested."
	}
	return fmt.Sprintf("%s are longer than requested, %s shorter.", groupInt(longer), groupInt(shorter))
}

// ConsoleTable returns the console table's columns and rows as WriteConsole
// prints them: a row per metric in aiperf's display order, the metric's
// header and unit then its statistics, formatted (thousands separators, two
// decimals, N/A where a single value has no statistic).
func ConsoleTable(s *Summary) (cols []string, rows [][]string) {
	type shown struct {
		r     *Result
		order int
	}
	var list []shown
	for i := range s.Metrics {
		r := &s.Metrics[i]
		d := &defs[byTag[r.Tag]]
		if d.has(flagErrorOnly | flagNoConsole | flagInternal) {
			continue
		}
		order := d.order
		if order == 0 {
			order = math.MaxInt
		}
		list = append(list, shown{r, order})
	}
	slices.SortStableFunc(list, func(a, b shown) int { return a.order - b.order })
	for _, x := range list {
		row := []string{metricCell(x.r)}
		for _, st := range consoleStats {
			v, ok := statOf(x.r, st)
			if !ok {
				row = append(row, "N/A")
				continue
			}
			row = append(row, group(v))
		}
		rows = append(rows, row)
	}
	return append([]string{"Metric"}, consoleStats...), rows
}

// wrapHeader is the length past which aiperf's console puts a metric's
// unit on a line of its own under its header (ConsoleMetricsExporter.
// _format_row, src/aiperf/exporters/console_metrics_exporter.py at
// ai-dynamo/aiperf 26240f9e: delimiter "\n" if len(header) > 30).
const wrapHeader = 30

// metricCell is the "Metric" cell of r: "Header (unit)", or the header and
// "(unit)" on two lines when the header is longer than wrapHeader.
func metricCell(r *Result) string {
	if width(r.Header) > wrapHeader {
		return r.Header + "\n(" + r.Unit + ")"
	}
	return r.Header + " (" + r.Unit + ")"
}

func statOf(r *Result, st string) (float64, bool) {
	if st == "avg" {
		return r.Avg, true
	}
	if r.Single {
		return 0, false
	}
	switch st {
	case "min":
		return r.Min, true
	case "max":
		return r.Max, true
	case "std":
		return r.Std, true
	}
	p, _ := strconv.ParseFloat(st[1:], 64)
	return r.Percentile(p)
}

// group formats v as Python's f"{v:,.2f}".
func group(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strings.ToLower(s)
	}
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	s = groupDigits(intPart) + "." + frac
	if neg {
		s = "-" + s
	}
	return s
}

func groupInt(n int64) string {
	if n < 0 {
		return "-" + groupDigits(strconv.FormatInt(-n, 10))
	}
	return groupDigits(strconv.FormatInt(n, 10))
}

func groupDigits(d string) string {
	if len(d) <= 3 {
		return d
	}
	var b strings.Builder
	head := len(d) % 3
	if head > 0 {
		b.WriteString(d[:head])
	}
	for i := head; i < len(d); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(d[i : i+3])
	}
	return b.String()
}

// oneLine folds s onto one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func width(s string) int { return utf8.RuneCountInString(s) }

func pad(s string, w int, left bool) string {
	fill := strings.Repeat(" ", max(0, w-width(s)))
	if left {
		return s + fill
	}
	return fill + s
}

// writeTable draws a table in rich's default box (heavy head), the title
// centered above; columns are right-justified unless left[i]. A cell of
// several lines ("\n") makes its row as tall, the other cells top-aligned
// (rich's default vertical alignment).
func writeTable(b *strings.Builder, title string, head []string, left []bool, rows [][]string) {
	ws := make([]int, len(head))
	for i, h := range head {
		ws[i] = width(h)
	}
	for _, r := range rows {
		for i, c := range r {
			for l := range strings.SplitSeq(c, "\n") {
				ws[i] = max(ws[i], width(l))
			}
		}
	}
	total := 1
	for _, w := range ws {
		total += w + 3
	}
	if t := width(title); t < total {
		b.WriteString(strings.Repeat(" ", (total-t)/2))
	}
	b.WriteString(title)
	b.WriteString("\n")
	line := func(l, fill, mid, r string) {
		b.WriteString(l)
		for i, w := range ws {
			if i > 0 {
				b.WriteString(mid)
			}
			b.WriteString(strings.Repeat(fill, w+2))
		}
		b.WriteString(r + "\n")
	}
	cells := func(edge, sep string, cs []string) {
		lines := make([][]string, len(cs))
		height := 1
		for i, c := range cs {
			lines[i] = strings.Split(c, "\n")
			height = max(height, len(lines[i]))
		}
		for l := range height {
			b.WriteString(edge)
			for i := range cs {
				if i > 0 {
					b.WriteString(sep)
				}
				c := ""
				if l < len(lines[i]) {
					c = lines[i][l]
				}
				b.WriteString(" " + pad(c, ws[i], left != nil && left[i]) + " ")
			}
			b.WriteString(edge + "\n")
		}
	}
	line("┏", "━", "┳", "┓")
	cells("┃", "┃", head)
	line("┡", "━", "╇", "┩")
	for _, r := range rows {
		cells("│", "│", r)
	}
	line("└", "─", "┴", "┘")
}

// panelWidth is the width at which wrap folds a panel's long lines.
const panelWidth = 100

// wrap folds s at spaces into lines of at most n characters (a longer word
// keeps a line of its own).
func wrap(s string, n int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case width(line)+1+width(w) <= n:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// writePanel draws a warning in rich's rounded panel, padded by two spaces.
func writePanel(b *strings.Builder, title string, lines []string) {
	w := width(title) + 4
	for _, l := range lines {
		w = max(w, width(l)+4)
	}
	b.WriteString("\n")
	t := " " + title + " "
	left := (w - width(t)) / 2
	b.WriteString("╭" + strings.Repeat("─", left) + t + strings.Repeat("─", w-left-width(t)) + "╮\n")
	for _, l := range lines {
		b.WriteString("│  " + pad(l, w-4, true) + "  │\n")
	}
	b.WriteString("╰" + strings.Repeat("─", w) + "╯\n")
}
