// Package plot draws small charts as SVG, with nothing but the standard
// library: linear axes with nice ticks, point clouds binned to the pixel
// grid, lines, step lines, markers and a legend.
//
// A chart is made for one self-contained page: no script, no font, no
// external reference, no id that two charts on a page could share. It
// never writes a NaN or infinite coordinate: a value that is not finite is
// skipped (it breaks a line), and a value outside an axis's range is drawn
// on the edge of the plot area. Text is escaped.
//
// Points are binned, so a chart of a million points stays small: the plot
// area is cut into cells of Cell×Cell pixels, every point falls in one, and
// each cell that holds a point is drawn once, shaded by how many it holds
// (four shades on a logarithmic scale of the fullest cell's count). Runs of
// cells of one shade in a row are one rectangle. A chart of a few points
// shows each point; one of a million shows their density, and a lone
// outlier is never dropped.
package plot

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Kind is how a series is drawn.
type Kind int

const (
	// Points draws each (X[i], Y[i]) as a dot, binned to Cell-pixel cells.
	Points Kind = iota
	// Line joins the points in order; a non-finite value breaks the line.
	Line
	// Step draws a step line: from each point horizontally to the next
	// point's X, then vertically to its Y (a CDF, a count over time).
	Step
	// Markers draws each point as a circle of radius 4 where it lies, not
	// binned: for a few points that each matter (the steps of a sweep).
	Markers
)

// Series is one named set of points.
type Series struct {
	Name  string // in the legend; "" leaves it out of the legend
	Kind  Kind
	Color string // a CSS colour; "" takes the next one of Palette
	Dash  bool   // a dashed line (Line, Step)
	// Shape is a Markers series' marker: "" (a circle), "square" or
	// "diamond", so that series differ by more than their colour.
	Shape string
	X, Y  []float64
}

// Axis is a linear axis. Its range is [Min, Max] where FixMin or FixMax say
// so; the other end is taken from the data and widened to a tick.
type Axis struct {
	Label          string
	Min, Max       float64
	FixMin, FixMax bool
}

// Palette are the colours series take in turn.
var Palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

// Chart is one chart. Width and Height are its size in pixels (default
// 560×300).
type Chart struct {
	Title         string
	Width, Height int
	X, Y          Axis
	Series        []Series
	// Empty is written across the plot area when no series has a finite
	// point ("no data" when "").
	Empty string
	// Cell is the side of a Points cell in pixels (default 2).
	Cell int
}

// Margins around the plot area, in pixels.
const (
	marginLeft   = 62
	marginRight  = 14
	marginTop    = 26 // the title
	legendRow    = 16 // each row of the legend
	marginBottom = 40 // tick labels and the x axis's label
	fontSize     = 11
	charWidth    = 6.2 // an estimate of a character's width at fontSize, for the legend's layout
)

// layout is the geometry of a chart being drawn.
type layout struct {
	w, h           int
	left, top      int
	pw, ph         int // plot area
	x0, x1, y0, y1 float64
	xt, yt         ticks
	legend         [][]legendItem
}

type legendItem struct {
	name, color, shape string
	kind               Kind
	dash               bool
}

// PlotWidth returns the width in pixels of the chart's plot area: what a
// caller that reduces its data to one value per pixel column needs.
func (c *Chart) PlotWidth() int {
	w, _ := c.size()
	return max(w-marginLeft-marginRight, 10)
}

func (c *Chart) size() (int, int) {
	w, h := c.Width, c.Height
	if w <= 0 {
		w = 560
	}
	if h <= 0 {
		h = 300
	}
	return w, h
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// extent returns the finite range of the values of every series on one
// axis; ok is false when there is none.
func extent(ss []Series, y bool) (lo, hi float64, ok bool) {
	for _, s := range ss {
		vs, other := s.X, s.Y
		if y {
			vs, other = s.Y, s.X
		}
		n := min(len(vs), len(other))
		for i := 0; i < n; i++ {
			v := vs[i]
			if !finite(v) || !finite(other[i]) {
				continue
			}
			if !ok || v < lo {
				lo = v
			}
			if !ok || v > hi {
				hi = v
			}
			ok = true
		}
	}
	return lo, hi, ok
}

// axisRange settles an axis's range and ticks from the data's extent.
func axisRange(a Axis, lo, hi float64, have bool) (float64, float64, ticks) {
	if !have {
		lo, hi = 0, 1
	}
	if a.FixMin && finite(a.Min) {
		lo = a.Min
	}
	if a.FixMax && finite(a.Max) {
		hi = a.Max
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		// One value: a range around it (a unit around 0).
		d := math.Abs(lo) / 2
		if d == 0 {
			d = 1
		}
		if !a.FixMin {
			lo -= d
		}
		if !a.FixMax {
			hi += d
		}
		if hi == lo {
			hi = lo + d
		}
	}
	t := niceTicks(lo, hi, 5)
	if !a.FixMin && t.first < lo {
		lo = t.first
	}
	if !a.FixMax && t.last > hi {
		hi = t.last
	}
	if !finite(hi - lo) { // a range too wide for float64
		lo, hi = -math.MaxFloat64/4, math.MaxFloat64/4
		t = niceTicks(lo, hi, 5)
	}
	return lo, hi, t.within(lo, hi)
}

func (c *Chart) layout() *layout {
	w, h := c.size()
	l := &layout{w: w, h: h, left: marginLeft}
	// The legend: rows that fit the width.
	var row []legendItem
	used := 0.0
	avail := float64(w - marginLeft - marginRight)
	for i, s := range c.Series {
		if s.Name == "" {
			continue
		}
		it := legendItem{name: s.Name, color: seriesColor(s, i), shape: s.Shape, kind: s.Kind, dash: s.Dash}
		width := 24 + float64(len([]rune(s.Name)))*charWidth + 14
		if len(row) > 0 && used+width > avail {
			l.legend = append(l.legend, row)
			row, used = nil, 0
		}
		row = append(row, it)
		used += width
	}
	if len(row) > 0 {
		l.legend = append(l.legend, row)
	}
	l.top = marginTop + legendRow*len(l.legend)
	l.pw = max(w-marginLeft-marginRight, 10)
	l.ph = max(h-l.top-marginBottom, 10)
	xlo, xhi, okx := extent(c.Series, false)
	ylo, yhi, oky := extent(c.Series, true)
	l.x0, l.x1, l.xt = axisRange(c.X, xlo, xhi, okx)
	l.y0, l.y1, l.yt = axisRange(c.Y, ylo, yhi, oky)
	return l
}

func seriesColor(s Series, i int) string {
	if s.Color != "" {
		return s.Color
	}
	return Palette[i%len(Palette)]
}

// px maps x to a pixel column, clamped to the plot area.
func (l *layout) px(x float64) float64 {
	f := (x - l.x0) / (l.x1 - l.x0)
	return float64(l.left) + clamp01(f)*float64(l.pw)
}

// py maps y to a pixel row, clamped to the plot area (up is larger).
func (l *layout) py(y float64) float64 {
	f := (y - l.y0) / (l.y1 - l.y0)
	return float64(l.top) + (1-clamp01(f))*float64(l.ph)
}

func clamp01(f float64) float64 {
	switch {
	case !(f >= 0): // NaN too
		return 0
	case f > 1:
		return 1
	}
	return f
}

// WriteSVG writes the chart as one <svg> element.
func (c *Chart) WriteSVG(w io.Writer) error {
	_, err := w.Write(c.SVG())
	return err
}

// SVG returns the chart as one <svg> element. Its groups carry classes a
// reader (or a test) can find: "title", "legend", "grid", "axis x",
// "axis y", "series" (one per series, in order, with data-name), "frame"
// (the plot area's border) and "empty".
func (c *Chart) SVG() []byte {
	l := c.layout()
	b := &buf{}
	b.f(`<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="%d">`, l.w, l.h, l.w, l.h, fontSize)
	b.s(`<title>`)
	b.esc(c.Title)
	b.s("</title>\n")
	b.s(`<rect width="100%" height="100%" fill="#fff"/>`)
	b.f(`<text class="title" x="%d" y="16" font-size="13" font-weight="bold">`, l.left)
	b.esc(c.Title)
	b.s("</text>\n")
	c.legend(b, l)
	c.axes(b, l)
	empty := true
	for i, s := range c.Series {
		if c.series(b, l, s, seriesColor(s, i)) {
			empty = false
		}
	}
	if empty {
		msg := c.Empty
		if msg == "" {
			msg = "no data"
		}
		b.f(`<text class="empty" x="%d" y="%d" text-anchor="middle" fill="#666">`, l.left+l.pw/2, l.top+l.ph/2)
		b.esc(msg)
		b.s("</text>\n")
	}
	b.f(`<rect class="frame" x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#8a8f96" shape-rendering="crispEdges"/>`, l.left, l.top, l.pw, l.ph)
	b.s("</svg>\n")
	return b.b
}

func (c *Chart) legend(b *buf, l *layout) {
	if len(l.legend) == 0 {
		return
	}
	b.s(`<g class="legend">`)
	for r, row := range l.legend {
		x := float64(l.left)
		y := marginTop + legendRow*r + 8
		for _, it := range row {
			switch it.kind {
			case Points:
				b.f(`<rect x="%s" y="%d" width="8" height="8" fill="%s"/>`, num(x+6), y-4, it.color)
			case Markers:
				marker(b, it.shape, x+10, float64(y), it.color)
			default:
				b.f(`<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="%s" stroke-width="2"%s/>`, num(x), y, num(x+20), y, it.color, dashAttr(it.dash))
			}
			b.f(`<text x="%s" y="%d">`, num(x+24), y+4)
			b.esc(it.name)
			b.s(`</text>`)
			x += 24 + float64(len([]rune(it.name)))*charWidth + 14
		}
	}
	b.s("</g>\n")
}

func dashAttr(d bool) string {
	if d {
		return ` stroke-dasharray="5 3"`
	}
	return ""
}

func (c *Chart) axes(b *buf, l *layout) {
	bottom := l.top + l.ph
	right := l.left + l.pw
	b.s(`<g class="grid" stroke="#e6e6e6" shape-rendering="crispEdges">`)
	for _, v := range l.xt.values() {
		x := math.Round(l.px(v))
		b.f(`<line x1="%s" y1="%d" x2="%s" y2="%d"/>`, num(x), l.top, num(x), bottom)
	}
	for _, v := range l.yt.values() {
		y := math.Round(l.py(v))
		b.f(`<line x1="%d" y1="%s" x2="%d" y2="%s"/>`, l.left, num(y), right, num(y))
	}
	b.s("</g>\n")

	b.s(`<g class="axis x" fill="#333">`)
	b.f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333" shape-rendering="crispEdges"/>`, l.left, bottom, right, bottom)
	for _, v := range l.xt.values() {
		x := math.Round(l.px(v))
		b.f(`<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#333"/>`, num(x), bottom, num(x), bottom+4)
		b.f(`<text class="tick" x="%s" y="%d" text-anchor="middle">%s</text>`, num(x), bottom+16, escString(l.xt.label(v)))
	}
	if c.X.Label != "" {
		b.f(`<text class="label" x="%d" y="%d" text-anchor="middle">`, l.left+l.pw/2, bottom+32)
		b.esc(c.X.Label)
		b.s(`</text>`)
	}
	b.s("</g>\n")

	b.s(`<g class="axis y" fill="#333">`)
	b.f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333" shape-rendering="crispEdges"/>`, l.left, l.top, l.left, bottom)
	for _, v := range l.yt.values() {
		y := math.Round(l.py(v))
		b.f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#333"/>`, l.left-4, num(y), l.left, num(y))
		b.f(`<text class="tick" x="%d" y="%s" text-anchor="end">%s</text>`, l.left-6, num(y+4), escString(l.yt.label(v)))
	}
	if c.Y.Label != "" {
		y := l.top + l.ph/2
		b.f(`<text class="label" x="14" y="%d" text-anchor="middle" transform="rotate(-90 14 %d)">`, y, y)
		b.esc(c.Y.Label)
		b.s(`</text>`)
	}
	b.s("</g>\n")
}

// series draws one series as one <g class="series">; it reports whether
// the series had a finite point.
func (c *Chart) series(b *buf, l *layout, s Series, color string) bool {
	b.s(`<g class="series" data-name="`)
	b.esc(s.Name)
	b.s(`">`)
	var drawn bool
	switch s.Kind {
	case Points:
		drawn = c.points(b, l, s, color)
	case Markers:
		drawn = markers(b, l, s, color)
	default:
		drawn = line(b, l, s, color)
	}
	b.s("</g>\n")
	return drawn
}

// shades are the opacities of a Points cell by its count's class.
var shades = [4]string{"0.45", "0.6", "0.8", "1"}

func (c *Chart) points(b *buf, l *layout, s Series, color string) bool {
	cell := c.Cell
	if cell <= 0 {
		cell = 2
	}
	cols, rows := (l.pw+cell-1)/cell, (l.ph+cell-1)/cell
	counts := make([]uint32, cols*rows)
	var most uint32
	n := min(len(s.X), len(s.Y))
	for i := 0; i < n; i++ {
		x, y := s.X[i], s.Y[i]
		if !finite(x) || !finite(y) {
			continue
		}
		cx := min(int((l.px(x)-float64(l.left))/float64(cell)), cols-1)
		cy := min(int((l.py(y)-float64(l.top))/float64(cell)), rows-1)
		k := cy*cols + cx
		counts[k]++
		most = max(most, counts[k])
	}
	if most == 0 {
		return false
	}
	// class maps a count to a shade: log(1+count) over log(1+most), in
	// four steps; a lone point in a cloud gets the faintest shade, every
	// point of a sparse chart the strongest.
	lm := math.Log1p(float64(most))
	class := func(v uint32) int {
		if v == 0 {
			return -1
		}
		return min(int(math.Ceil(4*math.Log1p(float64(v))/lm))-1, 3)
	}
	for sh := range shades {
		var d buf
		for cy := 0; cy < rows; cy++ {
			for cx := 0; cx < cols; {
				if class(counts[cy*cols+cx]) != sh {
					cx++
					continue
				}
				run := 1
				for cx+run < cols && class(counts[cy*cols+cx+run]) == sh {
					run++
				}
				x := l.left + cx*cell
				y := l.top + cy*cell
				wd := min(run*cell, l.left+l.pw-x)
				ht := min(cell, l.top+l.ph-y)
				d.f("M%d %dh%dv%dh-%dz", x, y, wd, ht, wd)
				cx += run
			}
		}
		if len(d.b) > 0 {
			b.f(`<path fill="%s" fill-opacity="%s" d="`, color, shades[sh])
			b.b = append(b.b, d.b...)
			b.s(`"/>`)
		}
	}
	return true
}

// markers draws each finite point as a circle, white-edged so that
// markers on one spot and the lines beneath stay apart.
func markers(b *buf, l *layout, s Series, color string) bool {
	drawn := false
	n := min(len(s.X), len(s.Y))
	for i := 0; i < n; i++ {
		if !finite(s.X[i]) || !finite(s.Y[i]) {
			continue
		}
		marker(b, s.Shape, l.px(s.X[i]), l.py(s.Y[i]), color)
		drawn = true
	}
	return drawn
}

// marker draws one marker of a shape centred on (x, y), about 8 pixels
// across.
func marker(b *buf, shape string, x, y float64, color string) {
	switch shape {
	case "square":
		b.f(`<rect x="%s" y="%s" width="7" height="7" fill="%s" stroke="#fff"/>`, num(x-3.5), num(y-3.5), color)
	case "diamond":
		b.f(`<path d="M%s %sl4.5 4.5l-4.5 4.5l-4.5 -4.5z" fill="%s" stroke="#fff"/>`, num(x), num(y-4.5), color)
	default:
		b.f(`<circle cx="%s" cy="%s" r="4" fill="%s" stroke="#fff"/>`, num(x), num(y), color)
	}
}

func line(b *buf, l *layout, s Series, color string) bool {
	// Runs of finite points, in pixels.
	type pt struct{ x, y float64 }
	var runs [][]pt
	var cur []pt
	n := min(len(s.X), len(s.Y))
	for i := 0; i <= n; i++ {
		if i == n || !finite(s.X[i]) || !finite(s.Y[i]) {
			if len(cur) > 0 {
				runs = append(runs, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, pt{l.px(s.X[i]), l.py(s.Y[i])})
	}
	if len(runs) == 0 {
		return false
	}
	var d buf
	dots := true
	for _, r := range runs {
		dots = dots && len(r) == 1
	}
	if dots {
		// Lone points of a line: dots, so that they show.
		for _, r := range runs {
			d.s("M" + num(r[0].x-2.5) + " " + num(r[0].y) + "a2.5 2.5 0 1 0 5 0a2.5 2.5 0 1 0 -5 0")
		}
		b.f(`<path fill="%s" d="`, color)
		b.b = append(b.b, d.b...)
		b.s(`"/>`)
		return true
	}
	for _, r := range runs {
		d.s("M" + num(r[0].x) + " " + num(r[0].y))
		for j := 1; j < len(r); j++ {
			if s.Kind == Step {
				d.s("H" + num(r[j].x))
				if r[j].y != r[j-1].y {
					d.s("V" + num(r[j].y))
				}
				continue
			}
			d.s("L" + num(r[j].x) + " " + num(r[j].y))
		}
	}
	b.f(`<path fill="none" stroke="%s" stroke-width="1.6" stroke-linejoin="round"%s d="`, color, dashAttr(s.Dash))
	b.b = append(b.b, d.b...)
	b.s(`"/>`)
	return true
}

// buf is a byte buffer with formatting helpers.
type buf struct{ b []byte }

func (b *buf) s(s string)                { b.b = append(b.b, s...) }
func (b *buf) f(format string, a ...any) { b.b = fmt.Appendf(b.b, format, a...) }
func (b *buf) esc(s string)              { b.s(escString(s)) }

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

// escString escapes s for SVG text and attribute values, and drops the
// bytes XML 1.0 cannot hold.
func escString(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r != 0xFFFE && r != 0xFFFF && !(r >= 0xD800 && r <= 0xDFFF) {
			return r
		}
		return -1
	}, s)
	return escaper.Replace(s)
}

// num formats a pixel coordinate with one decimal at most (the finite
// values the layout computes; anything else is written as 0).
func num(v float64) string {
	if !finite(v) {
		return "0"
	}
	v = math.Round(v*10) / 10
	if v == 0 {
		v = 0 // no "-0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
