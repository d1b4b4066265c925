package cachekey

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// A Description is a parsed description: each field name with its value as
// written (a quoted string, a list of quoted strings or, for the salt, a
// decimal integer). String gives back the canonical text.
//
// A store carries the settings part of the description of the key it was
// built for (every field but input: the salt, the stage settings, the
// tokenizer), so that a cache can refuse to file it under a key whose
// description says otherwise ([DiffSettings]).
type Description map[string]string

// ParseDescription parses the text [Builder.Explain] returns, strictly: the
// domain line, then "name=value" lines, each ending in a newline, with
// names in increasing order and values of one of the three kinds. Any text
// it accepts is the canonical form of what it returns (String gives it back
// byte for byte), so a description cannot be spelled two ways.
func ParseDescription(text string) (Description, error) {
	rest, ok := strings.CutPrefix(text, Domain+"\n")
	if !ok {
		return nil, fmt.Errorf("cachekey: a description starts with the line %q", Domain)
	}
	d := Description{}
	prev := ""
	for n := 2; rest != ""; n++ {
		line, tail, ok := strings.Cut(rest, "\n")
		if !ok {
			return nil, fmt.Errorf("cachekey: description line %d does not end with a newline", n)
		}
		rest = tail
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("cachekey: description line %d: no '='", n)
		}
		if err := checkName(name); err != nil {
			return nil, fmt.Errorf("cachekey: description line %d: %w", n, err)
		}
		if name <= prev {
			return nil, fmt.Errorf("cachekey: description line %d: %q after %q: names must increase", n, name, prev)
		}
		if err := checkValue(name, value); err != nil {
			return nil, fmt.Errorf("cachekey: description line %d (%s): %w", n, name, err)
		}
		d[name], prev = value, name
	}
	return d, nil
}

// checkValue accepts the value kinds a Builder writes: a decimal integer
// for a salt field, else a quoted string or a list of them, each in the
// exact form strconv.Quote gives.
func checkValue(name, v string) error {
	if strings.HasPrefix(name, saltPrefix) {
		if n, err := strconv.Atoi(v); err != nil || strconv.Itoa(n) != v {
			return errors.New("a salt value is a decimal integer")
		}
		return nil
	}
	if strings.HasPrefix(v, "[") {
		if !strings.HasSuffix(v, "]") {
			return errors.New("a list ends with ']'")
		}
		var items []string
		for s := v[1 : len(v)-1]; s != ""; {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return errors.New("a list holds quoted strings")
			}
			u, _ := strconv.Unquote(q)
			items = append(items, u)
			s = s[len(q):]
			if s != "" {
				if s[0] != ',' || len(s) == 1 {
					return errors.New("list items are separated by ','")
				}
				s = s[1:]
			}
		}
		if quoteList(items) != v {
			return errors.New("a list is not in its canonical form")
		}
		return nil
	}
	u, err := strconv.Unquote(v)
	if err != nil || !strings.HasPrefix(v, `"`) || strconv.Quote(u) != v {
		return errors.New("not a quoted string in its canonical form")
	}
	return nil
}

// String returns the canonical text of d: the domain line, then its fields
// in name order.
func (d Description) String() string {
	names := make([]string, 0, len(d))
	for n := range d {
		names = append(names, n)
	}
	sort.Strings(names)
	var sb strings.Builder
	sb.WriteString(Domain)
	sb.WriteByte('\n')
	for _, n := range names {
		sb.WriteString(n)
		sb.WriteByte('=')
		sb.WriteString(d[n])
		sb.WriteByte('\n')
	}
	return sb.String()
}

// Settings returns the fields of d but input: what the settings of the
// stages decide, which a store records about itself.
func (d Description) Settings() Description {
	s := make(Description, len(d))
	for n, v := range d {
		if n != inputField {
			s[n] = v
		}
	}
	return s
}

// Value returns the value of a field that holds a quoted string, unquoted,
// and whether it is there as one.
func (d Description) Value(name string) (string, bool) {
	v, ok := d[name]
	if !ok || !strings.HasPrefix(v, `"`) {
		return "", false
	}
	u, err := strconv.Unquote(v)
	return u, err == nil
}

// DiffSettings compares the settings of a key's description (want) with
// those a store records (got) and returns one line per field that differs,
// in name order: `pack.model: "m" in the key, "other" in the store`. A
// field only one side has is "absent" on the other; when a side has no
// field of a group at all (the part before the first '.', such as
// "tokenize"), the group is one line: `tokenize.* (8 fields): absent in the
// store`. The input field is not compared: a store does not know the digest
// of the trace it came from.
func DiffSettings(want, got Description) []string {
	var diffs []string
	groups := map[string]bool{}
	for _, side := range []struct {
		d, other Description
		where    string
	}{{want, got, "the store"}, {got, want, "the key"}} {
		count := map[string]int{}
		for n := range side.d {
			if g, _, ok := strings.Cut(n, "."); ok && n != inputField {
				count[g]++
			}
		}
		for g, c := range count {
			if c > 1 && !hasGroup(side.other, g) {
				groups[g] = true
				diffs = append(diffs, fmt.Sprintf("%s.* (%d fields): absent in %s", g, c, side.where))
			}
		}
	}
	for _, l := range diffSettings(want, got) {
		if g, _, _ := strings.Cut(l, "."); !groups[g] {
			diffs = append(diffs, l)
		}
	}
	sort.Strings(diffs)
	return diffs
}

func hasGroup(d Description, g string) bool {
	for n := range d {
		if strings.HasPrefix(n, g+".") {
			return true
		}
	}
	return false
}

func diffSettings(want, got Description) []string {
	names := map[string]bool{}
	for n := range want {
		names[n] = true
	}
	for n := range got {
		names[n] = true
	}
	delete(names, inputField)
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	say := func(d Description, n string) string {
		if v, ok := d[n]; ok {
			return v
		}
		return "absent"
	}
	var diffs []string
	for _, n := range sorted {
		if w, g := say(want, n), say(got, n); w != g {
			diffs = append(diffs, fmt.Sprintf("%s: %s in the key, %s in the store", n, w, g))
		}
	}
	return diffs
}
