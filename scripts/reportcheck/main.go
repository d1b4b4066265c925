// Command reportcheck checks a screenshot of an HTML report (aiperf-replay
// --html) rendered by a browser: every chart of the page is on it and has
// drawn content.
//
//	reportcheck PAGE.html SHOT.png|- [DOM.html [CONSOLE...]]
//
// It finds the charts by their plot areas' frames (lib/plot draws each as a
// one-pixel rectangle of frameColor, crisp-edged, last), expects as many as
// the page has <svg> elements, and within each frame counts the pixels of
// saturated colour (the series; grid, axes and text are grey) and the
// distinct colours. A chart passes with at least minColoured saturated
// pixels and minColours colours: not blank, not one colour.
//
// SHOT "-" skips the charts (a page whose data leave some blank on purpose).
// DOM.html is the page's DOM as Chromium dumped it with probe.js run in it
// (run.sh): no text may run past the window's right edge or a box that
// clips it, and every warning of the CONSOLE files (what the command printed
// on stdout and stderr: its "warning:" lines and the summary's boxed
// panels) must be in the visible text (not only inside a collapsed
// section) above the "Summary" heading. Exit 0 when all pass, 1 when one
// does not, 2 on bad input.
package main

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"regexp"
	"slices"
)

// frameColor is lib/plot's frame stroke, #8a8f96.
var frameColor = [3]uint8{0x8a, 0x8f, 0x96}

const (
	minSide     = 80 // a frame is at least this wide and high
	minColoured = 20
	minColours  = 3
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: reportcheck PAGE.html SHOT.png|- [DOM.html [CONSOLE...]]")
		os.Exit(2)
	}
	page, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "reportcheck:", err)
		os.Exit(2)
	}
	ok := true
	if os.Args[2] != "-" {
		ok = checkCharts(page, os.Args[2])
	}
	if len(os.Args) > 3 && !checkText(os.Args[3], os.Args[4:]) {
		ok = false
	}
	if !ok {
		os.Exit(1)
	}
}

// checkCharts checks that every chart of the page is on the screenshot
// with drawn content.
func checkCharts(page []byte, shot string) bool {
	titles := regexp.MustCompile(`<svg [^>]*>\s*<title>([^<]*)</title>`).FindAllSubmatch(page, -1)
	f, err := os.Open(shot)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reportcheck:", err)
		os.Exit(2)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "reportcheck: %s: %v\n", shot, err)
		os.Exit(2)
	}
	frames := findFrames(img)
	b := img.Bounds()
	fmt.Printf("%s: %d×%d pixels, %d charts in the page, %d chart frames found\n", shot, b.Dx(), b.Dy(), len(titles), len(frames))
	ok := len(frames) == len(titles) && len(titles) > 0
	if !ok {
		fmt.Printf("FAIL: want one frame per chart (a chart hidden, cut off by the window, or not drawn)\n")
	}
	for i, r := range frames {
		name := "?"
		if i < len(titles) {
			name = string(titles[i][1])
		}
		coloured, colours := content(img, r.Inset(2))
		verdict := "ok"
		if coloured < minColoured || colours < minColours {
			verdict, ok = "FAIL: blank or one colour", false
		}
		fmt.Printf("  %-34s at (%4d,%4d) %d×%d: %6d coloured pixels, %5d colours  %s\n", name, r.Min.X, r.Min.Y, r.Dx(), r.Dy(), coloured, colours, verdict)
	}
	return ok
}

// checkText checks the probed DOM: nothing cut at the right, and every
// warning of the console files shown at the top.
func checkText(domPath string, consoles []string) bool {
	dom, err := os.ReadFile(domPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reportcheck:", err)
		os.Exit(2)
	}
	visible, cut, err := probed(string(dom))
	if err != nil {
		fmt.Fprintf(os.Stderr, "reportcheck: %s: %v\n", domPath, err)
		os.Exit(2)
	}
	ok := true
	fmt.Printf("%s: %d visible texts, %d cut at the right\n", domPath, len(visible), len(cut))
	for _, c := range cut {
		fmt.Printf("  FAIL: cut: %s\n", c)
		ok = false
	}
	var warnings []string
	for _, c := range consoles {
		b, err := os.ReadFile(c)
		if err != nil {
			fmt.Fprintln(os.Stderr, "reportcheck:", err)
			os.Exit(2)
		}
		warnings = append(warnings, consoleWarnings(string(b))...)
	}
	miss := missingWarnings(warnings, visible, "Summary")
	fmt.Printf("%d warnings in the console, %d of them not visible above the summary\n", len(warnings), len(miss))
	for _, m := range miss {
		fmt.Printf("  FAIL: not shown at the top: %s\n", m)
		ok = false
	}
	return ok
}

func isFrame(img image.Image, x, y int) bool {
	if !(image.Point{x, y}).In(img.Bounds()) {
		return false
	}
	r, g, b, _ := img.At(x, y).RGBA()
	c := [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}
	for i := range c {
		if d := int(c[i]) - int(frameColor[i]); d < -3 || d > 3 {
			return false
		}
	}
	return true
}

// findFrames returns the frame rectangles, top to bottom then left to right
// (the page's order: the charts wrap in rows).
func findFrames(img image.Image) []image.Rectangle {
	b := img.Bounds()
	var out []image.Rectangle
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if !isFrame(img, x, y) || isFrame(img, x-1, y) || isFrame(img, x, y-1) {
				continue
			}
			w := 0
			for isFrame(img, x+w, y) {
				w++
			}
			h := 0
			for isFrame(img, x, y+h) {
				h++
			}
			if w < minSide || h < minSide {
				continue
			}
			// the right and bottom edges close the rectangle (allowing for
			// a series drawn over a few of their pixels)
			right, bottom := 0, 0
			for i := 0; i < h; i++ {
				if isFrame(img, x+w-1, y+i) {
					right++
				}
			}
			for i := 0; i < w; i++ {
				if isFrame(img, x+i, y+h-1) {
					bottom++
				}
			}
			if right < h*8/10 || bottom < w*8/10 {
				continue
			}
			out = append(out, image.Rect(x, y, x+w, y+h))
			x += w
		}
	}
	slices.SortStableFunc(out, func(a, b image.Rectangle) int {
		if a.Min.Y != b.Min.Y {
			return a.Min.Y - b.Min.Y
		}
		return a.Min.X - b.Min.X
	})
	return out
}

// content counts the saturated pixels of r and its distinct colours.
func content(img image.Image, r image.Rectangle) (coloured, colours int) {
	seen := map[[3]uint8]bool{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			c := [3]uint8{uint8(cr >> 8), uint8(cg >> 8), uint8(cb >> 8)}
			seen[c] = true
			hi := max(c[0], c[1], c[2])
			lo := min(c[0], c[1], c[2])
			if hi-lo > 60 {
				coloured++
			}
		}
	}
	return coloured, len(seen)
}
