package main

import (
	"fmt"
	"html"
	"regexp"
	"strings"
)

const (
	// warningPrefix starts every warning aiperf-replay prints on stderr.
	warningPrefix = "aiperf-replay: warning: "
	// figurePanel starts the title of the prefix-cache box.
	figurePanel = "Prefix reuse"
)

// consoleWarnings are the warnings in console output (stdout and stderr of
// the command): each "aiperf-replay: warning: " line, and each boxed panel
// of the summary (lib/metrics: "╭── Title ──╮", "│  line  │", "╰──╯") as its
// title and its lines joined. The prefix-cache box (title figurePanel) is a
// figure, not a warning: the page shows it after the summary, as the
// console does.
func consoleWarnings(console string) []string {
	var out []string
	var panel []string
	in := false
	for _, l := range strings.Split(console, "\n") {
		l = strings.TrimPrefix(strings.TrimRight(l, "\r"), "\x1b[K")
		switch {
		case strings.HasPrefix(l, warningPrefix):
			out = append(out, strings.TrimPrefix(l, warningPrefix))
		case strings.HasPrefix(l, "╭") && strings.HasSuffix(l, "╮"):
			in, panel = true, []string{strings.Trim(l, "╭╮─ ")}
		case in && strings.HasPrefix(l, "│") && strings.HasSuffix(l, "│"):
			panel = append(panel, strings.Trim(l, "│ "))
		case in && strings.HasPrefix(l, "╰"):
			in = false
			if !strings.HasPrefix(panel[0], figurePanel) {
				out = append(out, panel[0], strings.Join(panel[1:], " "))
			}
		}
	}
	return out
}

var (
	visibleRE = regexp.MustCompile(`(?s)<pre id="reportcheck-visible">(.*?)</pre>`)
	cutRE     = regexp.MustCompile(`(?s)<pre id="reportcheck-cut">(.*?)</pre>`)
)

// probed reads what probe.js left in a page's dumped DOM: the visible
// text nodes, one a line, and the texts cut at the right.
func probed(dom string) (visible []string, cut []string, err error) {
	last := func(re *regexp.Regexp) []string { // the probe's own, at the end
		all := re.FindAllStringSubmatch(dom, -1)
		if len(all) == 0 {
			return nil
		}
		return all[len(all)-1]
	}
	v, c := last(visibleRE), last(cutRE)
	if v == nil || c == nil {
		return nil, nil, fmt.Errorf("no reportcheck-visible or reportcheck-cut in the dumped DOM (did probe.js run?)")
	}
	split := func(s string) []string {
		s = html.UnescapeString(s)
		if s == "" {
			return nil
		}
		return strings.Split(s, "\n")
	}
	return split(v[1]), split(c[1]), nil
}

// normalize collapses every run of white space to one space.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

// missingWarnings returns the warnings that the visible text does not
// show, or shows only below its first line equal to below (the page's
// "Summary" heading: a warning belongs above the figures it qualifies;
// "" for no such limit).
func missingWarnings(warnings, visible []string, below string) []string {
	text := normalize(strings.Join(visible, " "))
	head := -1
	for i, l := range visible {
		if below != "" && strings.TrimSpace(l) == below {
			head = len(normalize(strings.Join(visible[:i], " ")))
			break
		}
	}
	var miss []string
	for _, w := range warnings {
		nw := normalize(w)
		if nw == "" {
			continue
		}
		if at := strings.Index(text, nw); at < 0 || head >= 0 && at > head {
			miss = append(miss, w)
		}
	}
	return miss
}
