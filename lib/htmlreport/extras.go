package htmlreport

import (
	"fmt"
	"strings"
)

// Text is a part of the command's console output that the page shows as
// it was printed, under its own heading: the prefix-cache box, the server
// metrics beside the client's figures, the shards' note.
type Text struct {
	Title string
	Body  string
}

// writeWarnings writes the warnings the command printed, first thing
// under the page's description: a reader of the page alone would miss
// them otherwise (shards that started apart, clocks not synchronized,
// runs of different settings merged, server counters that went down).
func writeWarnings(b *strings.Builder, warnings []string) {
	if len(warnings) == 0 {
		return
	}
	b.WriteString("<div class=\"warn\">\n")
	fmt.Fprintf(b, "<h2>%s</h2>\n<ul>\n", plural(len(warnings), "Warning"))
	for _, w := range warnings {
		fmt.Fprintf(b, "<li>%s</li>\n", esc(w))
	}
	b.WriteString("</ul>\n</div>\n")
}

// writeNotes writes the notes the command printed as a plain list.
func writeNotes(b *strings.Builder, notes []string) {
	if len(notes) == 0 {
		return
	}
	fmt.Fprintf(b, "<h2>%s</h2>\n<ul class=\"notes\">\n", plural(len(notes), "Note"))
	for _, n := range notes {
		fmt.Fprintf(b, "<li>%s</li>\n", esc(n))
	}
	b.WriteString("</ul>\n")
}

// writeTexts writes each non-empty text under its heading, preformatted.
func writeTexts(b *strings.Builder, texts []Text) {
	for _, t := range texts {
		body := strings.TrimRight(t.Body, "\n")
		if body == "" {
			continue
		}
		fmt.Fprintf(b, "<h2>%s</h2>\n<pre class=\"console\">%s</pre>\n", esc(t.Title), esc(body))
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Panel is a boxed warning of the console's summary (the output-length
// mismatch, the token count discrepancy, tokens that arrived together, a
// client that fell behind): its title and its lines.
type Panel struct {
	Title string
	Lines []string
}

// Panels finds the boxed panels in console text as lib/metrics draws them
// ("╭── Title ──╮", "│  line  │" lines, "╰───╯"), in order. The page
// shows them at its top: inside the console's collapsed section alone a
// reader of the page would not see them.
func Panels(console string) []Panel {
	var out []Panel
	var cur *Panel
	for _, l := range strings.Split(console, "\n") {
		switch {
		case strings.HasPrefix(l, "╭") && strings.HasSuffix(l, "╮"):
			title := strings.Trim(strings.TrimSuffix(strings.TrimPrefix(l, "╭"), "╮"), "─")
			out = append(out, Panel{Title: strings.TrimSpace(title)})
			cur = &out[len(out)-1]
		case cur != nil && strings.HasPrefix(l, "│") && strings.HasSuffix(l, "│"):
			body := strings.TrimSuffix(strings.TrimPrefix(l, "│"), "│")
			cur.Lines = append(cur.Lines, strings.TrimRight(strings.TrimPrefix(body, "  "), " "))
		case cur != nil && strings.HasPrefix(l, "╰"):
			cur = nil
		}
	}
	return out
}

// writePanels writes the console's boxed warnings, each under its title,
// its lines as the console printed them.
func writePanels(b *strings.Builder, panels []Panel) {
	for _, p := range panels {
		fmt.Fprintf(b, "<div class=\"warn\">\n<h2>%s</h2>\n<pre class=\"panel\">%s</pre>\n</div>\n", esc(p.Title), esc(strings.Join(p.Lines, "\n")))
	}
}
