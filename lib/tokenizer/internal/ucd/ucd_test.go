package ucd

import "testing"

// CategorySearch answers as Category does: at every run's first and last
// code point, at a stride through the rest, and outside Unicode.
func TestCategorySearch(t *testing.T) {
	check := func(r rune) {
		if got, want := CategorySearch(r), Category(r); got != want {
			t.Fatalf("CategorySearch(%U) = %v, Category says %v", r, got, want)
		}
	}
	for _, run := range gc16 {
		start := rune(run >> 8)
		check(start)
		if start > 0 {
			check(start - 1)
		}
	}
	for r := rune(0); r < 0x110000; r += 61 {
		check(r)
	}
	check(0x10ffff)
	check(0x110000)
	check(-1)
}
