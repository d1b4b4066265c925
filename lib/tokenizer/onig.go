package tokenizer

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/tokenizer/internal/ucd"
)

// Hugging Face runs Split and Replace patterns with Oniguruma (Ruby
// syntax, UTF-8). regexp2 understands the same operators, but its
// character classes differ: \p{..} follows Go's Unicode tables, and \w, \d,
// \s and the POSIX brackets have .NET's definitions. toRegexp2 rewrites a
// pattern so that every character class is an explicit list of ranges
// with Oniguruma's meaning at its Unicode version (16.0.0, from package
// ucd); the rest of the pattern is passed on as written. Case-insensitive
// matching ((?i)) is left to regexp2, whose case folding differs from
// Oniguruma's for a few characters (the known patterns fold by hand, see
// contraction).

// onigClass returns the code points of a class escape or property name as
// Oniguruma defines them.
func onigClass(name string) (ucd.Ranges, bool) {
	switch name {
	case `\w`, "word":
		// Alphabetic, marks, decimal digits and connectors; outside a
		// bracket expression, Oniguruma's table for the Latin-1 range
		// adds ² ³ ¹ ¼ ½ ¾ (inside one, and as [[:word:]], it does not).
		w := word()
		if name == `\w` {
			w = ucd.Union(w, ucd.Ranges{{0xb2, 0xb3}, {0xb9, 0xb9}, {0xbc, 0xbe}})
		}
		return w, true
	case `\d`, "digit":
		return ucd.CategoryRanges(ucd.Nd), true
	case `\s`, "space":
		ws, _ := ucd.Property("White_Space")
		return ws, true
	case `\h`, "xdigit":
		return ucd.Ranges{{'0', '9'}, {'A', 'F'}, {'a', 'f'}}, true
	case "alpha":
		a, _ := ucd.Property("Alphabetic")
		return a, true
	case "alnum":
		a, _ := ucd.Property("Alphabetic")
		return ucd.Union(a, ucd.CategoryRanges(ucd.Nd)), true
	case "upper":
		u, _ := ucd.Property("Uppercase")
		return u, true
	case "lower":
		l, _ := ucd.Property("Lowercase")
		return l, true
	case "punct":
		return ucd.CategoryRanges(ucd.Pc, ucd.Pd, ucd.Ps, ucd.Pe, ucd.Pi, ucd.Pf, ucd.Po, ucd.Sm, ucd.Sc, ucd.Sk, ucd.So), true
	case "cntrl":
		return ucd.CategoryRanges(ucd.Cc), true
	case "blank":
		return ucd.Union(ucd.CategoryRanges(ucd.Zs), ucd.Ranges{{'\t', '\t'}}), true
	case "graph", "print":
		ws, _ := ucd.Property("White_Space")
		g := ucd.Complement(ucd.Union(ws, ucd.CategoryRanges(ucd.Cc, ucd.Cs, ucd.Cn)))
		if name == "print" {
			g = ucd.Union(g, ucd.CategoryRanges(ucd.Zs))
		}
		return g, true
	case "ascii":
		return ucd.Ranges{{0, 0x7f}}, true
	case "any":
		return ucd.Complement(nil), true
	case "assigned":
		return ucd.Complement(ucd.CategoryRanges(ucd.Cn)), true
	}
	return nil, false
}

func word() ucd.Ranges {
	a, _ := ucd.Property("Alphabetic")
	return ucd.Union(a, ucd.CategoryRanges(ucd.Mn, ucd.Mc, ucd.Me, ucd.Nd, ucd.Pc))
}

// Long names of the general categories and their groups, as \p{..} takes
// them, folded (lower case, no "_", "-" or " ").
var categoryNames = map[string][]ucd.Cat{
	"l": {ucd.Lu, ucd.Ll, ucd.Lt, ucd.Lm, ucd.Lo}, "letter": {ucd.Lu, ucd.Ll, ucd.Lt, ucd.Lm, ucd.Lo},
	"lc": {ucd.Lu, ucd.Ll, ucd.Lt}, "l&": {ucd.Lu, ucd.Ll, ucd.Lt}, "casedletter": {ucd.Lu, ucd.Ll, ucd.Lt},
	"uppercaseletter": {ucd.Lu}, "lowercaseletter": {ucd.Ll}, "titlecaseletter": {ucd.Lt},
	"modifierletter": {ucd.Lm}, "otherletter": {ucd.Lo},
	"m": {ucd.Mn, ucd.Mc, ucd.Me}, "mark": {ucd.Mn, ucd.Mc, ucd.Me}, "combiningmark": {ucd.Mn, ucd.Mc, ucd.Me},
	"nonspacingmark": {ucd.Mn}, "spacingmark": {ucd.Mc}, "enclosingmark": {ucd.Me},
	"n": {ucd.Nd, ucd.Nl, ucd.No}, "number": {ucd.Nd, ucd.Nl, ucd.No},
	"decimalnumber": {ucd.Nd}, "letternumber": {ucd.Nl}, "othernumber": {ucd.No},
	"p": {ucd.Pc, ucd.Pd, ucd.Ps, ucd.Pe, ucd.Pi, ucd.Pf, ucd.Po}, "punctuation": {ucd.Pc, ucd.Pd, ucd.Ps, ucd.Pe, ucd.Pi, ucd.Pf, ucd.Po},
	"connectorpunctuation": {ucd.Pc}, "dashpunctuation": {ucd.Pd}, "openpunctuation": {ucd.Ps},
	"closepunctuation": {ucd.Pe}, "initialpunctuation": {ucd.Pi}, "finalpunctuation": {ucd.Pf}, "otherpunctuation": {ucd.Po},
	"s": {ucd.Sm, ucd.Sc, ucd.Sk, ucd.So}, "symbol": {ucd.Sm, ucd.Sc, ucd.Sk, ucd.So},
	"mathsymbol": {ucd.Sm}, "currencysymbol": {ucd.Sc}, "modifiersymbol": {ucd.Sk}, "othersymbol": {ucd.So},
	"z": {ucd.Zs, ucd.Zl, ucd.Zp}, "separator": {ucd.Zs, ucd.Zl, ucd.Zp},
	"spaceseparator": {ucd.Zs}, "lineseparator": {ucd.Zl}, "paragraphseparator": {ucd.Zp},
	"c": {ucd.Cc, ucd.Cf, ucd.Cs, ucd.Co, ucd.Cn}, "other": {ucd.Cc, ucd.Cf, ucd.Cs, ucd.Co, ucd.Cn},
	"control": {ucd.Cc}, "format": {ucd.Cf}, "surrogate": {ucd.Cs}, "privateuse": {ucd.Co}, "unassigned": {ucd.Cn},
}

func foldName(s string) string {
	return strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(s))
}

// onigProperty returns the code points of \p{name}.
func onigProperty(name string) (ucd.Ranges, error) {
	f := foldName(name)
	if len(name) == 2 {
		if c, ok := ucd.CatByName(name); ok {
			return ucd.CategoryRanges(c), nil
		}
	}
	if cats, ok := categoryNames[f]; ok {
		return ucd.CategoryRanges(cats...), nil
	}
	switch f {
	case "alphabetic":
		f = "alpha"
	case "whitespace":
		f = "space"
	case "uppercase":
		f = "upper"
	case "lowercase":
		f = "lower"
	case "joincontrol":
		jc, _ := ucd.Property("Join_Control")
		return jc, nil
	}
	if rs, ok := onigClass(f); ok {
		return rs, nil
	}
	for _, s := range ucd.Scripts() {
		if foldName(s) == f {
			rs, _ := ucd.Script(s)
			return rs, nil
		}
	}
	return nil, fmt.Errorf("unsupported Unicode property \\p{%s}", name)
}

// toRegexp2 rewrites an Oniguruma pattern for regexp2 (see above).
func toRegexp2(pat string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(pat); {
		switch pat[i] {
		case '[':
			set, n, err := parseClass(pat[i:])
			if err != nil {
				return "", err
			}
			writeSet(&b, set)
			i += n
		case '\\':
			set, lit, n, err := parseEscape(pat[i:], false)
			if err != nil {
				return "", err
			}
			switch {
			case set != nil:
				writeSet(&b, set)
			case lit >= 0:
				writeLiteral(&b, lit)
			default:
				b.WriteString(pat[i : i+n])
			}
			i += n
		default:
			b.WriteByte(pat[i])
			i++
		}
	}
	return b.String(), nil
}

// parseEscape reads the escape at s[0] == '\\'. It returns a set for a class
// escape, a literal code point (≥ 0) for a character escape that must be
// rewritten or that is in a class, or neither for an escape regexp2
// understands as written (anchors, back references); n is its length.
func parseEscape(s string, inClass bool) (set ucd.Ranges, lit rune, n int, err error) {
	if len(s) < 2 {
		return nil, -1, 0, fmt.Errorf("pattern ends with a backslash")
	}
	c := s[1]
	switch c {
	case 'w', 'd', 's', 'h', 'W', 'D', 'S', 'H':
		name := `\` + strings.ToLower(string(c))
		if inClass && name == `\w` {
			name = "word"
		}
		rs, _ := onigClass(name)
		if c < 'a' {
			rs = ucd.Complement(rs)
		}
		return rs, -1, 2, nil
	case 'p', 'P':
		if len(s) < 3 || s[2] != '{' {
			return nil, -1, 0, fmt.Errorf("\\%c without {name}", c)
		}
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return nil, -1, 0, fmt.Errorf("unterminated \\%c{", c)
		}
		name := s[3:end]
		neg := c == 'P'
		if strings.HasPrefix(name, "^") {
			name, neg = name[1:], !neg
		}
		rs, err := onigProperty(name)
		if err != nil {
			return nil, -1, 0, err
		}
		if neg {
			rs = ucd.Complement(rs)
		}
		return rs, -1, end + 1, nil
	case 'x':
		if len(s) > 2 && s[2] == '{' {
			end := strings.IndexByte(s, '}')
			v, perr := strconv.ParseUint(s[3:max(3, end)], 16, 32)
			if end < 0 || perr != nil || v > 0x10ffff {
				return nil, -1, 0, fmt.Errorf("bad escape %q", s[:min(len(s), 12)])
			}
			return nil, rune(v), end + 1, nil
		}
		k := 2
		for k < 4 && k < len(s) && isHex(s[k]) {
			k++
		}
		v, _ := strconv.ParseUint(s[2:k], 16, 8)
		return nil, rune(v), k, nil
	case 'u':
		if len(s) >= 6 && isHex(s[2]) && isHex(s[3]) && isHex(s[4]) && isHex(s[5]) {
			v, _ := strconv.ParseUint(s[2:6], 16, 32)
			return nil, rune(v), 6, nil
		}
		return nil, -1, 0, fmt.Errorf("bad escape %q", s[:min(len(s), 6)])
	case 't':
		return nil, '\t', 2, nil
	case 'n':
		return nil, '\n', 2, nil
	case 'r':
		return nil, '\r', 2, nil
	case 'f':
		return nil, '\f', 2, nil
	case 'v':
		return nil, '\v', 2, nil
	case 'a':
		return nil, '\a', 2, nil
	case 'e':
		return nil, 0x1b, 2, nil
	}
	if c >= utf8.RuneSelf {
		r, size := utf8.DecodeRuneInString(s[1:])
		return nil, r, 1 + size, nil
	}
	if inClass || !isAlnum(c) {
		// An escaped punctuation character (or, in a class, any
		// character) stands for itself.
		return nil, rune(c), 2, nil
	}
	if c >= '1' && c <= '9' || strings.IndexByte("AzZbBGk", c) >= 0 {
		return nil, -1, 2, nil // anchors and back references, as written
	}
	return nil, -1, 0, fmt.Errorf("unsupported escape \\%c", c)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// parseClass reads the bracket expression at s[0] == '[' and returns its
// code points and length. It handles negation, ranges, escapes, POSIX
// brackets ([:alpha:], [:^alpha:]), nested classes and intersection (&&).
func parseClass(s string) (ucd.Ranges, int, error) {
	i := 1
	neg := false
	if i < len(s) && s[i] == '^' {
		neg = true
		i++
	}
	var acc ucd.Ranges // the items since the last &&
	var inter []ucd.Ranges
	first := true
	prev := rune(-1) // a literal that may start a range
	for {
		if i >= len(s) {
			return nil, 0, fmt.Errorf("unterminated character class")
		}
		c := s[i]
		if c == ']' && !first {
			i++
			break
		}
		first = false
		switch {
		case c == '&' && strings.HasPrefix(s[i:], "&&"):
			inter = append(inter, acc)
			acc, prev = nil, -1
			i += 2
			continue
		case c == '[' && strings.HasPrefix(s[i:], "[:"):
			end := strings.Index(s[i:], ":]")
			if end < 0 {
				return nil, 0, fmt.Errorf("unterminated POSIX bracket")
			}
			name := s[i+2 : i+end]
			pneg := strings.HasPrefix(name, "^")
			rs, ok := onigClass(strings.TrimPrefix(name, "^"))
			if !ok {
				return nil, 0, fmt.Errorf("unknown POSIX bracket [:%s:]", name)
			}
			if pneg {
				rs = ucd.Complement(rs)
			}
			acc, prev = ucd.Union(acc, rs), -1
			i += end + 2
			continue
		case c == '[':
			rs, n, err := parseClass(s[i:])
			if err != nil {
				return nil, 0, err
			}
			acc, prev = ucd.Union(acc, rs), -1
			i += n
			continue
		case c == '-' && prev >= 0 && i+1 < len(s) && s[i+1] != ']':
			// A range from prev.
			var hi rune
			j := i + 1
			if s[j] == '\\' {
				set, lit, n, err := parseEscape(s[j:], true)
				if err != nil {
					return nil, 0, err
				}
				if set != nil || lit < 0 {
					return nil, 0, fmt.Errorf("bad range end in character class")
				}
				hi, j = lit, j+n
			} else {
				r, size := utf8.DecodeRuneInString(s[j:])
				hi, j = r, j+size
			}
			if hi < prev {
				return nil, 0, fmt.Errorf("empty range in character class")
			}
			acc, prev = ucd.Union(acc, ucd.Ranges{{prev, hi}}), -1
			i = j
			continue
		case c == '\\':
			set, lit, n, err := parseEscape(s[i:], true)
			if err != nil {
				return nil, 0, err
			}
			if set != nil {
				acc, prev = ucd.Union(acc, set), -1
			} else {
				acc, prev = ucd.Union(acc, ucd.Ranges{{lit, lit}}), lit
			}
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		acc, prev = ucd.Union(acc, ucd.Ranges{{r, r}}), r
		i += size
	}
	set := acc
	for _, x := range inter {
		set = intersect(x, set)
	}
	if neg {
		set = ucd.Complement(set)
	}
	return set, i, nil
}

func intersect(a, b ucd.Ranges) ucd.Ranges {
	var out ucd.Ranges
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
		if lo <= hi {
			out = append(out, [2]rune{lo, hi})
		}
		if a[i][1] < b[j][1] {
			i++
		} else {
			j++
		}
	}
	return out
}

// writeSet writes rs as a regexp2 character class.
func writeSet(b *strings.Builder, rs ucd.Ranges) {
	if len(rs) == 0 {
		b.WriteString("(?!)") // matches nothing
		return
	}
	b.WriteByte('[')
	for _, r := range rs {
		writeClassRune(b, r[0])
		if r[1] != r[0] {
			if r[1] > r[0]+1 {
				b.WriteByte('-')
			}
			writeClassRune(b, r[1])
		}
	}
	b.WriteByte(']')
}

func writeClassRune(b *strings.Builder, r rune) {
	switch {
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		fmt.Fprintf(b, `\x%02X`, r)
	case strings.ContainsRune(`\]^-[`, r):
		b.WriteByte('\\')
		b.WriteRune(r)
	default:
		b.WriteRune(r)
	}
}

// writeLiteral writes a code point outside a class.
func writeLiteral(b *strings.Builder, r rune) {
	switch {
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		fmt.Fprintf(b, `\x%02X`, r)
	case r < utf8.RuneSelf && strings.ContainsRune(`\.^$|?*+()[]{}#`, r):
		b.WriteByte('\\')
		b.WriteRune(r)
	default:
		b.WriteRune(r)
	}
}
