// Package bodytemplate reads and renders request body templates: the Python
// aiperf's template endpoint (--endpoint-type template, payload_template),
// which formats each request from a Jinja2 template for servers that speak
// their own JSON.
//
// Only the part of Jinja2 that body templates need is read: literal text,
// {{ expression }} placeholders with an optional "-" on either side (Jinja's
// white-space control) and {# comments #}. An expression is a variable
// name followed by filters, `{{ text|tojson }}`. Statements ({% if %},
// {% for %}) are refused with the line they are on, and so is any name or
// filter outside the lists below: a template is checked whole before any
// record is read.
//
// Variables (aiperf's names where it has them):
//
//	text, prompt  the record's prompt, or the last text of its messages (a string)
//	texts         every text of the record: [prompt], or each message's text (a list)
//	messages      the record's messages, or [{"role":"user","content":prompt}] (a list)
//	model         the --model name (a string)
//	max_tokens    the record's max_tokens (an integer; None when it has none)
//	stream        --streaming (a boolean)
//	role          "user"
//
// Filters: tojson (the value as JSON: strings and lists as the records hold
// them, escapes included, integers in decimal, booleans as true and false,
// None as null) and lower (Python's str(value).lower()). Without tojson a
// value is written as Jinja writes it with aiperf's autoescape: Python's
// str() of it (True, False, None), with & < > " ' HTML-escaped; a list must
// go through tojson.
//
// The rendered text must be one JSON object, no member of any object in
// it given twice; it is stored with its insignificant white space removed.
// A template is text: a NUL byte is refused, and a UTF-8 byte order mark
// at its start is skipped (as every line-oriented input skips it), though
// the digest covers the file's bytes as they are. The Python aiperf parses the rendered
// text and sends it re-encoded (orjson: compact, members in the template's
// order), so the two send the same bytes except where a string's escapes
// or a number's spelling differ between the encoders.
package bodytemplate

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// Var is a template variable.
type Var uint8

// The variables, in the order the package comment lists them.
const (
	Text Var = iota
	Texts
	Messages
	Model
	MaxTokens
	Stream
	Role
	numVars
)

// varNames maps every accepted name to its variable (prompt is text's
// second name: our records call it so).
var varNames = map[string]Var{
	"text": Text, "prompt": Text, "texts": Texts, "messages": Messages, "model": Model,
	"max_tokens": MaxTokens, "stream": Stream, "role": Role,
}

// Names lists the variable names a template may use, for messages.
var Names = []string{"text", "prompt", "texts", "messages", "model", "max_tokens", "stream", "role"}

// Filters lists the filters a template may use.
var Filters = []string{"tojson", "lower"}

// Template is a parsed body template. It is safe for concurrent use.
type Template struct {
	// Name is the template's file name, for messages.
	Name string
	// Digest is the SHA-256 of the template's bytes: a cache key holds it.
	Digest [32]byte
	segs   []segment
	uses   [numVars]bool
}

// segment is literal text followed by an optional placeholder.
type segment struct {
	lit     []byte
	hasVar  bool
	v       Var
	filters []string
	litLine int // where lit starts
	line    int // of the placeholder
	expr    string
}

// Error is a problem of a template, at a line of its file (0: the file as
// a whole).
type Error struct {
	Name string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Name + ": " + e.Msg
	}
	return e.Name + ":" + strconv.Itoa(e.Line) + ": " + e.Msg
}

// Parse reads a template's source. name is its file name, for messages.
// Besides the syntax it checks that the template renders one JSON object
// for a record that has every field, so a template that can only fail is
// refused before any record is read.
func Parse(name string, src []byte) (*Template, error) {
	t := &Template{Name: name, Digest: sha256.Sum256(src)}
	src = bytes.TrimPrefix(src, utf8BOM)
	if i := bytes.IndexByte(src, 0); i >= 0 {
		return nil, &Error{name, 1 + bytes.Count(src[:i], []byte("\n")), "a NUL byte: a template is text"}
	}
	s := string(src)
	line := 1 // of s[0]
	var lit []byte
	litLine := 1
	for len(s) > 0 {
		i := strings.Index(s, "{")
		if i < 0 || i+1 >= len(s) {
			lit = append(lit, s...)
			break
		}
		lit = append(lit, s[:i+1]...)
		line += strings.Count(s[:i], "\n")
		s = s[i+1:]
		closing, ok := map[byte]string{'{': "}}", '#': "#}", '%': "%}"}[s[0]]
		if !ok {
			continue
		}
		lit = lit[:len(lit)-1]
		open := "{" + s[:1]
		j := strings.Index(s[1:], closing)
		if j < 0 {
			return nil, &Error{name, line, fmt.Sprintf("%s is not closed by %s", open, closing)}
		}
		inner := s[1 : 1+j]
		s = s[1+j+2:]
		switch open {
		case "{%":
			return nil, &Error{name, line, fmt.Sprintf("statement {%%%s%%} is not supported: a body template holds {{ placeholders }} only", clip(inner))}
		case "{#":
			line += strings.Count(inner, "\n")
			continue
		}
		expr := strings.TrimSpace(inner)
		trimAfter := len(expr) > 1 && strings.HasSuffix(expr, "-") // Jinja's -}}: the white space after goes
		if strings.HasPrefix(expr, "-") {                          // {{- : the white space before goes
			lit = trimRightSpace(lit)
			expr = strings.TrimSpace(expr[1:])
		}
		if trimAfter {
			expr = strings.TrimSpace(expr[:len(expr)-1])
		}
		seg, err := parseExpr(expr)
		if err != nil {
			return nil, &Error{name, line, err.Error()}
		}
		seg.lit, seg.litLine, seg.line = lit, litLine, line
		t.segs = append(t.segs, seg)
		t.uses[seg.v] = true
		line += strings.Count(inner, "\n")
		if trimAfter {
			rest := strings.TrimLeft(s, " \t\r\n")
			line += strings.Count(s[:len(s)-len(rest)], "\n")
			s = rest
		}
		lit, litLine = nil, line
	}
	if len(lit) > 0 {
		t.segs = append(t.segs, segment{lit: lit, litLine: litLine})
	}
	if _, err := t.render(nil, sample, true); err != nil {
		return nil, err
	}
	return t, nil
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// maxQuoted is the most of a template's text an error message quotes: a
// placeholder of megabytes gives a message of a line.
const maxQuoted = 64

// clip is s cut to maxQuoted bytes (at a character's start), "..." added
// when it was cut.
func clip(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func trimRightSpace(b []byte) []byte {
	for len(b) > 0 && strings.IndexByte(" \t\r\n", b[len(b)-1]) >= 0 {
		b = b[:len(b)-1]
	}
	return b
}

// parseExpr parses `name|filter|filter`.
func parseExpr(expr string) (segment, error) {
	parts := strings.Split(expr, "|")
	name := strings.TrimSpace(parts[0])
	expr = clip(expr) // for messages only
	v, ok := varNames[name]
	if !ok {
		return segment{}, fmt.Errorf("unknown placeholder %q in {{ %s }} (want one of %s)", clip(name), expr, strings.Join(Names, ", "))
	}
	seg := segment{hasVar: true, v: v, expr: expr}
	for _, f := range parts[1:] {
		f = strings.TrimSpace(f)
		if !slices.Contains(Filters, f) {
			return segment{}, fmt.Errorf("unknown filter %q in {{ %s }} (want %s)", clip(f), expr, strings.Join(Filters, " or "))
		}
		seg.filters = append(seg.filters, f)
	}
	if (v == Texts || v == Messages) && (len(seg.filters) == 0 || seg.filters[0] != "tojson") {
		return segment{}, fmt.Errorf("{{ %s }}: %s is a list; write {{ %s|tojson }}", expr, name, name)
	}
	return seg, nil
}

// Uses reports whether the template uses v.
func (t *Template) Uses(v Var) bool { return t.uses[v] }

// Values are one record's values of the variables. Strings and lists are
// JSON texts as the record holds them (a string with its quotes).
type Values struct {
	Text, Texts, Messages, Model []byte
	MaxTokens                    uint32
	HasMaxTokens                 bool
	Stream                       bool
}

// sample has every field, for Parse's check.
var sample = &Values{
	Text: []byte(`"x"`), Texts: []byte(`["x"]`), Messages: []byte(`[{"role":"user","content":"x"}]`),
	Model: []byte(`"m"`), MaxTokens: 1, HasMaxTokens: true,
}

// Render appends the body v renders to dst, compact. An error names the
// template's line where the rendered text stops being JSON.
func (t *Template) Render(dst []byte, v *Values) ([]byte, error) { return t.render(dst, v, false) }

// render is Render; with dups it also refuses an object that names a
// member twice (Parse's check: only the template's text can do that).
func (t *Template) render(dst []byte, v *Values, dups bool) ([]byte, error) {
	raw := make([]byte, 0, 256)
	starts := make([]int, len(t.segs)) // where each segment's placeholder output starts
	for i := range t.segs {
		sg := &t.segs[i]
		raw = append(raw, sg.lit...)
		starts[i] = len(raw)
		if sg.hasVar {
			var err error
			if raw, err = sg.render(raw, v); err != nil {
				return dst, &Error{t.Name, sg.line, err.Error()}
			}
		}
	}
	if err := checkObject(raw); err != nil {
		return dst, t.jsonError(raw, starts, "the rendered body is not a JSON object: ", err)
	}
	if dups {
		if err := checkDuplicates(raw, jsonx.SkipSpace(raw, 0), 0); err != nil {
			return dst, t.jsonError(raw, starts, "the rendered body: ", err)
		}
	}
	return jsonx.AppendCompact(dst, raw), nil
}

// maxDepth bounds the nesting checkDuplicates follows.
const maxDepth = 1000

// checkDuplicates checks that no object in the JSON value at b[i] (valid:
// checkObject passed) names a member twice; the error's offset is the
// second one's key.
func checkDuplicates(b []byte, i, depth int) error {
	if depth > maxDepth {
		return &jsonx.SyntaxError{Offset: i, Msg: "nested too deep"}
	}
	switch b[i] {
	case '{':
		seen := map[string]bool{}
		_, err := jsonx.WalkFields(b, i, func(key []byte, off int) (int, error) {
			k, err := jsonx.Unquote(key)
			if err != nil {
				return off, err
			}
			if seen[k] {
				ko := off - 1
				for ko > 0 && b[ko] != '"' {
					ko--
				}
				return off, &jsonx.SyntaxError{Offset: ko - len(key) + 1, Msg: fmt.Sprintf("member %q given twice (the server would take one, silently)", clip(k))}
			}
			seen[k] = true
			return skipChecked(b, off, depth)
		})
		return err
	case '[':
		_, err := jsonx.WalkElements(b, i, func(_, off int) (int, error) { return skipChecked(b, off, depth) })
		return err
	}
	return nil
}

// skipChecked checks the value at b[off] and returns the index past it.
func skipChecked(b []byte, off, depth int) (int, error) {
	if err := checkDuplicates(b, off, depth+1); err != nil {
		return off, err
	}
	return jsonx.Skip(b, off)
}

// jsonError names the template line where the rendered text raw stops
// being JSON, or holds what err says (starts: where each segment's
// placeholder output starts); prefix leads the message.
func (t *Template) jsonError(raw []byte, starts []int, prefix string, err error) error {
	line, msg := 0, err.Error()
	var se *jsonx.SyntaxError
	if errors.As(err, &se) {
		off := min(se.Offset, len(raw))
		for i := range t.segs {
			sg := &t.segs[i]
			litStart := starts[i] - len(sg.lit)
			switch {
			case off < litStart:
			case off < starts[i] || !sg.hasVar:
				line = sg.litLine + bytes.Count(sg.lit[:min(off-litStart, len(sg.lit))], []byte("\n"))
				msg = se.Msg
			default:
				line = sg.line
				msg = fmt.Sprintf("at {{ %s }}: %s", sg.expr, se.Msg)
			}
		}
	}
	return &Error{t.Name, line, prefix + msg}
}

// checkObject checks that b is one JSON object.
func checkObject(b []byte) error {
	i := jsonx.SkipSpace(b, 0)
	if i == len(b) {
		return errors.New("it is empty")
	}
	end, err := jsonx.Skip(b, i)
	if err != nil {
		return err
	}
	if b[i] != '{' {
		return &jsonx.SyntaxError{Offset: i, Msg: "a JSON value that is not an object"}
	}
	if j := jsonx.SkipSpace(b, end); j != len(b) {
		return &jsonx.SyntaxError{Offset: j, Msg: "text after the object"}
	}
	return nil
}

// value is a variable's value while filters apply: JSON text (json) or a
// Python string (str, with isStr).
type value struct {
	json  []byte
	str   string
	isStr bool
}

func (sg *segment) render(dst []byte, v *Values) ([]byte, error) {
	val, err := sg.initial(v)
	if err != nil {
		return dst, err
	}
	markup := false
	for _, f := range sg.filters {
		switch f {
		case "tojson":
			if val.isStr {
				val = value{json: jsonx.AppendString(nil, val.str)}
			}
			markup = true
		case "lower":
			s, err := pyStr(val)
			if err != nil {
				return dst, err
			}
			val, markup = value{str: strings.ToLower(s), isStr: true}, false
		}
	}
	if markup {
		return append(dst, val.json...), nil
	}
	s, err := pyStr(val)
	if err != nil {
		return dst, fmt.Errorf("{{ %s }}: %w", sg.expr, err)
	}
	return appendEscaped(dst, s), nil
}

// initial is the variable's value as JSON text.
func (sg *segment) initial(v *Values) (value, error) {
	switch sg.v {
	case Text:
		return value{json: orNull(v.Text)}, nil
	case Texts:
		return value{json: orEmpty(v.Texts)}, nil
	case Messages:
		return value{json: orEmpty(v.Messages)}, nil
	case Model:
		return value{json: orNull(v.Model)}, nil
	case MaxTokens:
		if !v.HasMaxTokens {
			return value{json: []byte("null")}, nil
		}
		return value{json: strconv.AppendUint(nil, uint64(v.MaxTokens), 10)}, nil
	case Stream:
		return value{json: strconv.AppendBool(nil, v.Stream)}, nil
	}
	return value{json: []byte(`"user"`)}, nil
}

func orNull(b []byte) []byte {
	if b == nil {
		return []byte("null")
	}
	return b
}

func orEmpty(b []byte) []byte {
	if b == nil {
		return []byte("[]")
	}
	return b
}

// pyStr is Python's str() of a value.
func pyStr(val value) (string, error) {
	if val.isStr {
		return val.str, nil
	}
	switch b := val.json; {
	case string(b) == "null":
		return "None", nil
	case string(b) == "true":
		return "True", nil
	case string(b) == "false":
		return "False", nil
	case len(b) > 0 && b[0] == '"':
		return jsonx.Unquote(b)
	case len(b) > 0 && (b[0] == '[' || b[0] == '{'):
		return "", errors.New("a list has no text form here; use tojson")
	}
	return string(val.json), nil // a number
}

// appendEscaped appends s HTML-escaped as markupsafe escapes it (aiperf's
// Jinja environment autoescapes).
func appendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			dst = append(dst, "&amp;"...)
		case '<':
			dst = append(dst, "&lt;"...)
		case '>':
			dst = append(dst, "&gt;"...)
		case '"':
			dst = append(dst, "&#34;"...)
		case '\'':
			dst = append(dst, "&#39;"...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
