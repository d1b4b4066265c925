package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// formatP prints a p-value to three places: "p=0.042", "p<0.001".
func formatP(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return "p=" + strconv.FormatFloat(p, 'f', 3, 64)
}

// formatValue prints a statistic with four significant digits or more.
func formatValue(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1 || a == 0:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// Delta is the row's change as the table shows it: the percentage when
// significant, "~" when not or when smaller than the practical threshold
// (with or without a test), "?" without a test.
func (r *Row) Delta() string {
	switch {
	case r.Negligible:
		return "~"
	case r.P == nil:
		return "?"
	case !r.Significant:
		return "~"
	case r.DeltaPct == nil:
		return "from 0"
	}
	return fmt.Sprintf("%+.2f%%", *r.DeltaPct)
}

// Note is the row's parenthesis: the p-value and the sizes, or why there
// is no test.
func (r *Row) Note() string {
	if r.P == nil {
		change := ""
		if r.DeltaPct != nil {
			change = fmt.Sprintf(", change %+.2f%%", *r.DeltaPct)
		}
		return fmt.Sprintf("(no test: %s, n=%d+%d%s)", r.NoTest, r.NOld, r.NNew, change)
	}
	unit := ""
	switch r.Stat {
	case StatMean:
		unit = " trials"
	case StatRate:
		unit = " requests"
	}
	conflict := ""
	if r.Conflict != "" {
		conflict = "; not counted: " + r.Conflict
	}
	if r.Underpowered {
		conflict += fmt.Sprintf("; too few to find a change: p≥%.3f at this n", *r.MinP)
	}
	if r.small && r.DeltaPct != nil {
		conflict += fmt.Sprintf("; %+.2f%%, under --min-change", *r.DeltaPct)
	}
	return fmt.Sprintf("(%s n=%d+%d%s%s)", formatP(*r.P), r.NOld, r.NNew, unit, conflict)
}

// WriteText writes the table in benchstat's manner, with a legend naming
// the tests.
func WriteText(w io.Writer, t *Table, oldName, newName string) error {
	head := []string{"metric", "stat", oldName, newName, "delta", ""}
	cells := [][]string{head}
	last := ""
	for i := range t.Rows {
		r := &t.Rows[i]
		name := ""
		if r.Metric != last {
			name = r.Metric + " (" + r.Unit + ")"
			last = r.Metric
		}
		cells = append(cells, []string{name, r.Stat, formatValue(r.Old), formatValue(r.New), r.Delta(), r.Note()})
	}
	width := make([]int, len(head))
	for _, c := range cells {
		for j, s := range c {
			width[j] = max(width[j], len([]rune(s)))
		}
	}
	var b strings.Builder
	for _, c := range cells {
		for j, s := range c {
			pad := strings.Repeat(" ", width[j]-len([]rune(s)))
			switch j {
			case 0:
				b.WriteString(s + pad)
			case len(c) - 1:
				b.WriteString("  " + s)
			default: // numbers and the stat right-aligned
				b.WriteString("  " + pad + s)
			}
		}
		b.WriteString("\n")
	}
	for _, m := range t.Missing {
		b.WriteString("not compared: " + m + "\n")
	}
	if t.MinChange > 0 {
		fmt.Fprintf(&b, "delta: (new - old) / old when significant at alpha %s (two-sided) and at least %s%% in size (--min-change),\n"+
			"~ when not, ? without a test.\n", strconv.FormatFloat(t.Alpha, 'g', -1, 64), strconv.FormatFloat(t.MinChange, 'g', -1, 64))
	} else {
		fmt.Fprintf(&b, "delta: (new - old) / old when significant at alpha %s (two-sided), ~ when not, ? without a test.\n", strconv.FormatFloat(t.Alpha, 'g', -1, 64))
	}
	b.WriteString("Tests: p50: Mann-Whitney U on the requests' values (exact without ties when the sizes multiply to at most\n" +
		"2,500, else normal approximation with tie correction); p99: quantile test (the pooled p99 splits each side;\n" +
		"Fisher's exact test; it needs about 300 requests a side to find anything); avg: Welch's t on the requests'\n" +
		"values; mean: Welch's t over the trials' values; error_rate: Fisher's exact test on failed and succeeded\n" +
		"requests. A test counts only in the direction its statistic moved; \"too few\" marks a test that cannot reach\n" +
		"alpha at its sizes.\n")
	_, err := io.WriteString(w, trimLines(b.String()))
	return err
}

func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// Report is the machine-readable comparison (--json).
type Report struct {
	Old      SideInfo `json:"old"`
	New      SideInfo `json:"new"`
	Warnings []string `json:"warnings"`
	*Table
	// Failed lists the gates broken (--fail-on), empty when none.
	Failed []string `json:"failed"`
	// Unjudged lists the gates the table cannot judge, with why.
	Unjudged []string `json:"unjudged,omitempty"`
}

// SideInfo names a side's inputs.
type SideInfo struct {
	Files  []string `json:"files"`
	Trials int      `json:"trials"`
}

// WriteJSON writes r as one indented JSON object.
func WriteJSON(w io.Writer, r *Report) error {
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	if r.Failed == nil {
		r.Failed = []string{}
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
