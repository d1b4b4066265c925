package plot

import (
	"bytes"
	"encoding/xml"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// node is a parsed XML element.
type node struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []node     `xml:",any"`
	Text    string     `xml:",chardata"`
}

func (n *node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n *node) hasClass(c string) bool {
	for _, f := range strings.Fields(n.attr("class")) {
		if f == c {
			return true
		}
	}
	return false
}

// walk calls f on n and every element below it.
func (n *node) walk(f func(*node)) {
	f(n)
	for i := range n.Nodes {
		n.Nodes[i].walk(f)
	}
}

// find returns the elements below n (n included) that have every class.
func (n *node) find(classes ...string) []*node {
	var out []*node
	n.walk(func(m *node) {
		for _, c := range classes {
			if !m.hasClass(c) {
				return
			}
		}
		out = append(out, m)
	})
	return out
}

func parse(t *testing.T, svg []byte) *node {
	t.Helper()
	var root node
	if err := xml.Unmarshal(svg, &root); err != nil {
		t.Fatalf("the SVG does not parse: %v\n%s", err, svg)
	}
	if root.XMLName.Local != "svg" || root.XMLName.Space != "http://www.w3.org/2000/svg" {
		t.Fatalf("root element %v, want svg in the SVG namespace", root.XMLName)
	}
	return &root
}

// numberRE finds the numbers of attribute values and path data; a NaN or an
// infinity would appear as a word the check below looks for.
var numberRE = regexp.MustCompile(`[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?`)

// checkCoordinates fails on any coordinate attribute or path data holding
// NaN, Inf or a number outside the chart.
func checkCoordinates(t *testing.T, root *node) {
	t.Helper()
	w, _ := strconv.ParseFloat(root.attr("width"), 64)
	h, _ := strconv.ParseFloat(root.attr("height"), 64)
	root.walk(func(n *node) {
		for _, a := range n.Attrs {
			switch a.Name.Local {
			case "x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "width", "height", "d", "transform", "viewBox":
			default:
				continue
			}
			v := strings.ToLower(a.Value)
			if strings.Contains(v, "nan") || strings.Contains(v, "inf") {
				t.Errorf("<%s %s=%q>: not a finite number", n.XMLName.Local, a.Name.Local, a.Value)
				continue
			}
			if a.Name.Local == "d" || a.Name.Local == "transform" || strings.HasSuffix(a.Value, "%") {
				for _, s := range numberRE.FindAllString(a.Value, -1) {
					f, err := strconv.ParseFloat(s, 64)
					if err != nil || math.Abs(f) > 2*max(w, h) {
						t.Errorf("<%s %s=%q>: %q out of the chart", n.XMLName.Local, a.Name.Local, a.Value, s)
					}
				}
				continue
			}
			f, err := strconv.ParseFloat(a.Value, 64)
			if err != nil && a.Name.Local != "viewBox" {
				t.Errorf("<%s %s=%q>: %v", n.XMLName.Local, a.Name.Local, a.Value, err)
			}
			if f < -1 || f > 2*max(w, h) {
				t.Errorf("<%s %s=%q>: outside the chart", n.XMLName.Local, a.Name.Local, a.Value)
			}
		}
	})
}

// tickLabels returns the tick labels of an axis ("x" or "y").
func tickLabels(t *testing.T, root *node, axis string) []string {
	t.Helper()
	axes := root.find("axis", axis)
	if len(axes) != 1 {
		t.Fatalf("%d groups of class \"axis %s\", want 1", len(axes), axis)
	}
	var out []string
	for _, n := range axes[0].find("tick") {
		out = append(out, n.Text)
	}
	return out
}

func TestStructure(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	c := Chart{
		Title: `TTFT <over> "time" & more`,
		X:     Axis{Label: "time since the first send (s)"},
		Y:     Axis{Label: "ms", FixMin: true},
		Series: []Series{
			{Name: "requests", Kind: Points, X: []float64{0, 1, 2, nan, 3, inf, 4}, Y: []float64{5, 7, 6, 1, nan, 3, 90}},
			{Name: "p50", Kind: Line, X: []float64{0, 1, 2, 3}, Y: []float64{5, 6, inf, 7}},
			{Name: "p99", Kind: Step, Dash: true, X: []float64{0, 2, 4}, Y: []float64{8, 9, 10}},
		},
	}
	svg := c.SVG()
	root := parse(t, svg)
	checkCoordinates(t, root)
	if got := root.find("title"); len(got) != 1 || got[0].Text != c.Title {
		t.Errorf("title element: got %d, text %q; want 1 with %q", len(got), got[0].Text, c.Title)
	}
	for _, axis := range []string{"x", "y"} {
		labels := tickLabels(t, root, axis)
		if len(labels) < 3 {
			t.Errorf("axis %s: tick labels %q, want at least 3", axis, labels)
		}
		for _, l := range labels {
			if _, err := strconv.ParseFloat(strings.ReplaceAll(l, ",", ""), 64); err != nil {
				t.Errorf("axis %s: tick label %q is not a number", axis, l)
			}
		}
	}
	if got := tickLabels(t, root, "y")[0]; got != "0" {
		t.Errorf("y axis fixed at 0 starts at %q", got)
	}
	series := root.find("series")
	if len(series) != len(c.Series) {
		t.Fatalf("%d series elements, want %d", len(series), len(c.Series))
	}
	for i, s := range series {
		if s.attr("data-name") != c.Series[i].Name {
			t.Errorf("series %d named %q, want %q", i, s.attr("data-name"), c.Series[i].Name)
		}
		if len(s.Nodes) == 0 {
			t.Errorf("series %q draws nothing", c.Series[i].Name)
		}
	}
	// the line broken by an infinity is two pieces
	if d := series[1].Nodes[0].attr("d"); strings.Count(d, "M") != 2 {
		t.Errorf("line with a gap: path %q, want two subpaths", d)
	}
	if len(root.find("legend")) != 1 || len(root.find("frame")) != 1 || len(root.find("empty")) != 0 {
		t.Errorf("want one legend, one frame, no empty note:\n%s", svg)
	}
}

func TestEmptyAndSinglePoint(t *testing.T) {
	for _, tc := range []struct {
		name   string
		series []Series
		empty  bool
	}{
		{"no series", nil, true},
		{"empty series", []Series{{Name: "a", Kind: Points}, {Name: "b", Kind: Line}}, true},
		{"only NaN", []Series{{Name: "a", Kind: Line, X: []float64{math.NaN()}, Y: []float64{1}}}, true},
		{"one point", []Series{{Name: "a", Kind: Points, X: []float64{3}, Y: []float64{3}}}, false},
		{"one line point", []Series{{Name: "a", Kind: Line, X: []float64{3}, Y: []float64{0}}}, false},
		{"one step point at zero", []Series{{Name: "a", Kind: Step, X: []float64{0}, Y: []float64{0}}}, false},
		{"huge values", []Series{{Name: "a", Kind: Line, X: []float64{-math.MaxFloat64, math.MaxFloat64}, Y: []float64{math.MaxFloat64, -math.MaxFloat64}}}, false},
		{"tiny range", []Series{{Name: "a", Kind: Points, X: []float64{1, 1 + 1e-15}, Y: []float64{1e-300, 2e-300}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Chart{Title: tc.name, Series: tc.series, Empty: "nothing here"}
			root := parse(t, c.SVG())
			checkCoordinates(t, root)
			for _, axis := range []string{"x", "y"} {
				if l := tickLabels(t, root, axis); len(l) < 2 {
					t.Errorf("axis %s: tick labels %q, want at least 2", axis, l)
				}
			}
			if got := len(root.find("series")); got != len(tc.series) {
				t.Errorf("%d series elements, want %d", got, len(tc.series))
			}
			empty := root.find("empty")
			if tc.empty != (len(empty) == 1) {
				t.Errorf("empty note: got %d, want it %v", len(empty), tc.empty)
			}
			if tc.empty && empty[0].Text != "nothing here" {
				t.Errorf("empty note %q", empty[0].Text)
			}
		})
	}
}

// TestMarkers: each finite point is one circle at its place (the plot
// area's corners for the range's ends), non-finite ones are left out, and
// the legend shows a circle.
func TestMarkers(t *testing.T) {
	c := Chart{
		X:      Axis{FixMin: true, Min: 0, FixMax: true, Max: 10},
		Y:      Axis{FixMin: true, Min: 0, FixMax: true, Max: 1},
		Series: []Series{{Name: "pass", Kind: Markers, Color: "#2ca02c", X: []float64{0, 5, math.NaN(), 10}, Y: []float64{0, 0.5, 1, math.Inf(1)}}},
	}
	root := parse(t, c.SVG())
	checkCoordinates(t, root)
	l := c.layout()
	var got []string
	for _, n := range root.find("series")[0].Nodes {
		got = append(got, n.attr("cx")+","+n.attr("cy"))
	}
	want := []string{
		num(float64(l.left)) + "," + num(float64(l.top+l.ph)),
		num(float64(l.left)+float64(l.pw)/2) + "," + num(float64(l.top)+float64(l.ph)/2),
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("markers at %q, want %q", got, want)
	}
	if n := len(root.find("legend")[0].Nodes); n != 2 || root.find("legend")[0].Nodes[0].XMLName.Local != "circle" {
		t.Errorf("legend: %d elements, want a circle and its name", n)
	}
	// other shapes: a square and a diamond, in the plot and the legend
	c.Series = []Series{
		{Name: "fail", Kind: Markers, Shape: "square", X: []float64{5}, Y: []float64{0.5}},
		{Name: "not offered", Kind: Markers, Shape: "diamond", X: []float64{5}, Y: []float64{0.5}},
	}
	root = parse(t, c.SVG())
	checkCoordinates(t, root)
	for i, want := range []string{"rect", "path"} {
		if got := root.find("series")[i].Nodes; len(got) != 1 || got[0].XMLName.Local != want {
			t.Errorf("series %d: %v, want one %s", i, got, want)
		}
		if got := root.find("legend")[0].Nodes[2*i].XMLName.Local; got != want {
			t.Errorf("legend %d: a %s, want a %s", i, got, want)
		}
	}
}

// TestPointsBinned: 100,000 points make a bounded chart, every cell that
// holds one is drawn, and a lone outlier among a dense cloud is kept.
func TestPointsBinned(t *testing.T) {
	n := 100_000
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(i)
		y[i] = 10 + float64(i%1000)/100 // a band from 10 to 20
	}
	y[n/2] = 100 // the outlier
	c := Chart{Series: []Series{{Name: "requests", Kind: Points, X: x, Y: y}}, Y: Axis{FixMin: true}}
	svg := c.SVG()
	if len(svg) > 200_000 {
		t.Errorf("%d points: %d bytes of SVG, want at most 200,000", n, len(svg))
	}
	root := parse(t, svg)
	checkCoordinates(t, root)
	paths := root.find("series")[0].Nodes
	if len(paths) == 0 {
		t.Fatal("no cells drawn")
	}
	// The outlier is alone near the top: the faintest shade, one cell.
	faint := paths[0]
	if faint.attr("fill-opacity") != shades[0] {
		t.Fatalf("first path has opacity %s, want the faintest %s", faint.attr("fill-opacity"), shades[0])
	}
	if !strings.HasPrefix(faint.attr("d"), "M") || strings.Count(faint.attr("d"), "M") < 1 {
		t.Errorf("outlier cell missing: %q", faint.attr("d"))
	}
}

// TestPointsWorstCase: points in every cell of the plot area, each of
// another shade than its neighbours (no run merges), bound a chart's size
// whatever their number: about 16 bytes a cell.
func TestPointsWorstCase(t *testing.T) {
	c := Chart{Series: []Series{{Name: "requests", Kind: Points}}}
	l := c.layout()
	c.X = Axis{FixMin: true, FixMax: true, Max: float64(l.pw)}
	c.Y = Axis{FixMin: true, FixMax: true, Max: float64(l.ph)}
	var x, y []float64
	for cy := 0; cy < l.ph/2; cy++ {
		for cx := 0; cx < l.pw/2; cx++ {
			n := 1 // the faintest shade, then the next one: log1p(6)/log1p(200) = 0.37
			if (cx+cy)%2 == 1 {
				n = 6
			}
			if cx == 0 && cy == 0 {
				n = 200
			}
			for range n {
				x, y = append(x, float64(2*cx+1)), append(y, float64(l.ph-2*cy-1))
			}
		}
	}
	c.Series[0].X, c.Series[0].Y = x, y
	svg := c.SVG()
	cells := (l.pw / 2) * (l.ph / 2)
	if len(svg) > 17*cells+4000 || len(svg) < 12*cells {
		t.Errorf("%d points in %d cells: %d bytes, want about 16 a cell", len(x), cells, len(svg))
	}
	parse(t, svg) // (its coordinates: the tests above)
}

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 1, "0 0.2 0.4 0.6 0.8 1.0"},
		{0, 97, "0 20 40 60 80 100"},
		{3.2, 4.1, "3.2 3.4 3.6 3.8 4.0 4.2"},
		{0, 23_000, "0 10k 20k 30k"},
		{-5, 5, "-6 -4 -2 0 2 4 6"},
		{0, 0.003, "0 0.001 0.002 0.003"},
		{1200, 1800, "1,200 1,400 1,600 1,800"},
		{0, 2.5e7, "0 10M 20M 30M"},
	} {
		tk := niceTicks(tc.lo, tc.hi, 5)
		var got []string
		for _, v := range tk.values() {
			got = append(got, tk.label(v))
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("ticks of [%v, %v]: got %q, want %q", tc.lo, tc.hi, s, tc.want)
		}
	}
}

func TestEscaping(t *testing.T) {
	c := Chart{Title: "a\x00b<script>", X: Axis{Label: "&amp"}, Series: []Series{{Name: `"x" <y>`, Kind: Line, X: []float64{0, 1}, Y: []float64{0, 1}}}}
	svg := c.SVG()
	if bytes.Contains(svg, []byte("<script>")) || bytes.Contains(svg, []byte{0}) {
		t.Errorf("unescaped text in %s", svg)
	}
	root := parse(t, svg)
	if got := root.find("series")[0].attr("data-name"); got != `"x" <y>` {
		t.Errorf("series name reads back as %q", got)
	}
}
