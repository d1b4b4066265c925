package plot

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzChart: any values, NaN, infinities and extremes included, on any
// axis settings, make an SVG that parses, has tick labels on both axes and
// one element per series, and holds only finite coordinates inside the
// chart.
func FuzzChart(f *testing.F) {
	le := func(vs ...float64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return b
	}
	f.Add(le(0, 1, 2, 3), uint8(0), false)
	f.Add(le(math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)), uint8(7), true)
	f.Add(le(math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1), uint8(3), true)
	f.Add(le(5), uint8(1), false)
	f.Fuzz(func(t *testing.T, data []byte, kinds uint8, fix bool) {
		var vs []float64
		for len(data) >= 8 && len(vs) < 4096 {
			vs = append(vs, math.Float64frombits(binary.LittleEndian.Uint64(data)))
			data = data[8:]
		}
		half := len(vs) / 2
		c := Chart{Title: "fuzz", Width: 300, Height: 200}
		for i := range 3 {
			c.Series = append(c.Series, Series{Name: "s", Kind: Kind(int(kinds>>(2*i)) % 3), X: vs[:half], Y: vs[half : 2*half]})
		}
		if fix && len(vs) >= 2 {
			c.Y = Axis{Min: vs[0], Max: vs[1], FixMin: true, FixMax: true}
		}
		root := parse(t, c.SVG())
		checkCoordinates(t, root)
		for _, axis := range []string{"x", "y"} {
			if l := tickLabels(t, root, axis); len(l) < 1 {
				t.Errorf("axis %s without a tick label", axis)
			}
		}
		if got := len(root.find("series")); got != 3 {
			t.Errorf("%d series elements, want 3", got)
		}
	})
}
