// Package jsonx is a small, strict JSON scanner for the hot paths of the
// toolkit: it validates a value and returns its extent without building Go
// values, so large strings and objects can be spliced verbatim into request
// bodies. encoding/json decodes at ~150 MB/s here; skipping runs at memory
// speed for the long string runs that dominate prompts.
package jsonx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// MaxDepth bounds nesting so hostile input cannot exhaust the stack.
const MaxDepth = 10000

// SyntaxError reports malformed JSON at a byte offset within the scanned slice.
type SyntaxError struct {
	Offset int
	Msg    string
	err    error // ErrInvalidUTF8 or ErrLoneSurrogate, for errors.Is
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.Msg, e.Offset) }

// Unwrap returns [ErrInvalidUTF8] or [ErrLoneSurrogate] when the value is
// well formed but its text is not valid Unicode, else nil.
func (e *SyntaxError) Unwrap() error { return e.err }

// The encoding errors a [SyntaxError] may wrap.
var (
	ErrInvalidUTF8   = errors.New("invalid UTF-8 in string")
	ErrLoneSurrogate = errors.New("lone surrogate escape in string")
)

func syntaxErr(off int, format string, args ...any) error {
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// SkipSpace returns the index of the first non-whitespace byte at or after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Skip validates the JSON value starting at b[i] (no leading whitespace) and
// returns the index just past it.
func Skip(b []byte, i int) (int, error) { return skip(b, i, 0, 0) }

// Valid reports whether b holds exactly one JSON value, with optional
// white space around it. It is json.Valid, except that strings must be
// valid UTF-8 (see [Scanner] for the encoding/json rule).
func Valid(b []byte) bool { return valid(b, 0) }

// A Scanner is a set of scanning options. Its methods behave like the
// package-level functions of the same names, which use the zero Scanner.
type Scanner struct {
	// AllowInvalidUTF8 accepts bytes that are not valid UTF-8 inside
	// strings, as encoding/json does: Scanner{AllowInvalidUTF8: true}.Valid
	// is json.Valid. By default such strings are a syntax error, as RFC 8259
	// requires.
	AllowInvalidUTF8 bool
	// RejectLoneSurrogates refuses \u escapes of UTF-16 surrogates that do
	// not pair up: a high surrogate (\uD800-\uDBFF) not followed by an
	// escaped low one (\uDC00-\uDFFF), or a low one on its own. RFC 8259
	// lets them through the grammar but they encode no character: strict
	// parsers (Rust's serde_json, pydantic's jiter) refuse them, and
	// encoding/json turns them into U+FFFD.
	RejectLoneSurrogates bool
}

// mode is a Scanner as flags, passed down the scanning functions.
type mode uint8

const (
	laxUTF8 mode = 1 << iota
	noLoneSurrogates
)

func (s Scanner) mode() mode {
	var m mode
	if s.AllowInvalidUTF8 {
		m |= laxUTF8
	}
	if s.RejectLoneSurrogates {
		m |= noLoneSurrogates
	}
	return m
}

// Skip is [Skip] with the scanner's options.
func (s Scanner) Skip(b []byte, i int) (int, error) { return skip(b, i, 0, s.mode()) }

// SkipString is [SkipString] with the scanner's options.
func (s Scanner) SkipString(b []byte, i int) (int, error) {
	return skipString(b, i, s.mode())
}

// Valid is [Valid] with the scanner's options.
func (s Scanner) Valid(b []byte) bool { return valid(b, s.mode()) }

// Check is Valid with the reason: nil when b holds exactly one JSON value
// with optional white space around it, else a [*SyntaxError] with the
// offset of the first problem.
func (s Scanner) Check(b []byte) error {
	end, err := skip(b, SkipSpace(b, 0), 0, s.mode())
	if err != nil {
		return err
	}
	if end = SkipSpace(b, end); end != len(b) {
		return syntaxErr(end, "invalid character %q after top-level value", b[end])
	}
	return nil
}

// Fields is [Fields] with the scanner's options.
func (s Scanner) Fields(b []byte, i int, fn func(key, value []byte, valueOff int) error) (int, error) {
	return fields(b, i, s.mode(), fn)
}

// Elements is [Elements] with the scanner's options.
func (s Scanner) Elements(b []byte, i int, fn func(n int, value []byte, valueOff int) error) (int, error) {
	return elements(b, i, s.mode(), fn)
}

func valid(b []byte, m mode) bool {
	end, err := skip(b, SkipSpace(b, 0), 0, m)
	return err == nil && SkipSpace(b, end) == len(b)
}

// skip validates the value at b[i]; depth counts the enclosing containers
// and m holds the scanner's options.
func skip(b []byte, i, depth int, m mode) (int, error) {
	if i >= len(b) {
		return i, syntaxErr(i, "unexpected end of input")
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i, m)
	case c == '{':
		return skipObject(b, i, depth+1, m)
	case c == '[':
		return skipArray(b, i, depth+1, m)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return SkipNumber(b, i)
	default:
		return i, syntaxErr(i, "invalid character %q looking for a value", c)
	}
}

func literal(b []byte, i int, lit string) (int, error) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), nil
	}
	return i, syntaxErr(i, "invalid literal")
}

func skipObject(b []byte, i, depth int, m mode) (int, error) {
	if depth > MaxDepth {
		return i, syntaxErr(i, "nesting deeper than %d", MaxDepth)
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, syntaxErr(i, "expected object key")
		}
		var err error
		if i, err = skipString(b, i, m); err != nil {
			return i, err
		}
		i = SkipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, syntaxErr(i, "expected ':' after object key")
		}
		i = SkipSpace(b, i+1)
		if i, err = skip(b, i, depth, m); err != nil {
			return i, err
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return i, syntaxErr(i, "unexpected end of object")
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return i, syntaxErr(i, "expected ',' or '}' in object")
		}
	}
}

func skipArray(b []byte, i, depth int, m mode) (int, error) {
	if depth > MaxDepth {
		return i, syntaxErr(i, "nesting deeper than %d", MaxDepth)
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = skip(b, i, depth, m); err != nil {
			return i, err
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return i, syntaxErr(i, "unexpected end of array")
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case ']':
			return i + 1, nil
		default:
			return i, syntaxErr(i, "expected ',' or ']' in array")
		}
	}
}

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// hasSpecial reports whether any byte of x is '"', '\\', a control character
// (< 0x20) or non-ASCII (>= 0x80). Classic SWAR zero-byte tests.
//
// Lanes with the high bit set are flagged by x itself, so the usual "&^v"
// guards of the zero-byte test are not needed: a lane's high bit can only
// be set wrongly by a borrow from a lower lane that is flagged already.
func hasSpecial(x uint64) bool {
	q := x ^ (lo8 * '"')
	s := x ^ (lo8 * '\\')
	return ((q-lo8)|(s-lo8)|(x-lo8*0x20)|x)&hi8 != 0
}

// SkipString validates the JSON string starting at b[i] == '"' and returns the
// index just past its closing quote. Escapes and UTF-8 are checked.
func SkipString(b []byte, i int) (int, error) { return skipString(b, i, 0) }

// skipString is SkipString with the scanner options m.
func skipString(b []byte, i int, m mode) (int, error) {
	start := i
	i++
	for {
		// Fast path: 8 plain ASCII bytes at a time.
		for i+8 <= len(b) && !hasSpecial(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			return start, syntaxErr(start, "unterminated string")
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			if i+1 >= len(b) {
				return start, syntaxErr(start, "unterminated string")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					return i, syntaxErr(i, "invalid \\u escape in string")
				}
				if m&noLoneSurrogates != 0 {
					if n := surrogateEscape(b, i); n < 0 {
						return i, &SyntaxError{Offset: i, Msg: fmt.Sprintf("lone surrogate escape %s in string", b[i:i+6]), err: ErrLoneSurrogate}
					} else if n > 0 {
						i += n
						continue
					}
				}
				i += 6
			default:
				return i, syntaxErr(i, "invalid escape in string")
			}
		case c < 0x20:
			return i, syntaxErr(i, "control character in string")
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 {
				if m&laxUTF8 == 0 {
					return i, &SyntaxError{Offset: i, Msg: fmt.Sprintf("invalid UTF-8 (byte 0x%02x) in string", c), err: ErrInvalidUTF8}
				}
				size = 1
			}
			i += size
		}
	}
}

// surrogateEscape looks at the \uXXXX escape at b[i]: it returns 0 when
// XXXX is not a surrogate, 12 when it is a high surrogate followed by an
// escaped low one (the pair's length), and -1 for a lone surrogate.
func surrogateEscape(b []byte, i int) int {
	r, _ := hex4(b[i+2 : i+6])
	switch {
	case r < 0xD800 || r >= 0xE000:
		return 0
	case r >= 0xDC00:
		return -1
	}
	if i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
		if r2, ok := hex4(b[i+8 : i+12]); ok && r2 >= 0xDC00 && r2 < 0xE000 {
			return 12
		}
	}
	return -1
}

func hex4(h []byte) (rune, bool) {
	if len(h) != 4 || !isHex4(h) {
		return 0, false
	}
	v, _ := strconv.ParseUint(string(h), 16, 32)
	return rune(v), true
}

func isHex4(h []byte) bool {
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// SkipNumber validates a JSON number starting at b[i].
func SkipNumber(b []byte, i int) (int, error) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return start, syntaxErr(start, "invalid number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return start, syntaxErr(start, "invalid number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return start, syntaxErr(start, "invalid number")
		}
	}
	return i, nil
}

// Unquote decodes a JSON string literal (with quotes) into a Go string.
func Unquote(lit []byte) (string, error) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", errors.New("not a string")
	}
	body := lit[1 : len(lit)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), nil
	}
	out, err := appendUnquoted(make([]byte, 0, len(body)), body)
	return string(out), err
}

// AppendUnquote is Unquote appending the string's bytes to dst: no
// allocation when dst has room (a loader reading 150,000 keys into a
// scratch buffer).
func AppendUnquote(dst, lit []byte) ([]byte, error) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return dst, errors.New("not a string")
	}
	body := lit[1 : len(lit)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return append(dst, body...), nil
	}
	return appendUnquoted(dst, body)
}

func appendUnquoted(out, b []byte) ([]byte, error) {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(b) {
			return out, errors.New("bad escape")
		}
		switch b[i] {
		case '"', '\\', '/':
			out = append(out, b[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+5 > len(b) {
				return out, errors.New("bad \\u escape")
			}
			r, ok := hex4(b[i+1 : i+5])
			if !ok {
				return out, errors.New("bad \\u escape")
			}
			i += 4
			if r >= 0xD800 && r < 0xDC00 && i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
				if r2, ok := hex4(b[i+3 : i+7]); ok && r2 >= 0xDC00 && r2 < 0xE000 {
					r = (r-0xD800)<<10 + (r2 - 0xDC00) + 0x10000
					i += 6
				}
			}
			if r >= 0xD800 && r < 0xE000 {
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default:
			return out, errors.New("bad escape")
		}
	}
	return out, nil
}

// ParseUint parses a JSON integer literal as an unsigned 64-bit value, exactly.
func ParseUint(lit []byte) (uint64, bool) {
	if len(lit) == 0 || len(lit) > 20 {
		return 0, false
	}
	if len(lit) > 1 && lit[0] == '0' {
		return 0, false
	}
	var v uint64
	for _, c := range lit {
		if c < '0' || c > '9' {
			return 0, false
		}
		hi, lo := bits.Mul64(v, 10)
		if hi != 0 {
			return 0, false
		}
		var carry uint64
		v, carry = bits.Add64(lo, uint64(c-'0'), 0)
		if carry != 0 {
			return 0, false
		}
	}
	return v, true
}

// ParseScaled parses a non-negative JSON number (integer or decimal fraction,
// optionally with an exponent) and returns round(value * 10^scale) as int64,
// using exact decimal arithmetic (no float rounding). It is how milliseconds
// in a trace become integer nanoseconds (scale 6).
func ParseScaled(lit []byte, scale int) (int64, bool) {
	if len(lit) == 0 || lit[0] == '-' {
		return 0, false
	}
	if end, err := SkipNumber(lit, 0); err != nil || end != len(lit) {
		return 0, false
	}
	d, err := parseDecimal(lit, scale)
	if err != nil || d.exp > 400 || d.exp < -400 {
		return 0, false
	}
	if d.half { // round half up
		if d.v == math.MaxInt64 {
			return 0, false
		}
		d.v++
	}
	return d.v, true
}

// Errors of [ParseDecimal].
var (
	ErrNotNumber = errors.New("not a number")
	ErrRange     = errors.New("out of range")
)

// ParseDecimal parses the decimal number s and returns its magnitude times
// 10^scale, truncated toward zero, with the sign apart: neg reports a
// leading '-' (also for "-0"), and exact reports that no non-zero digit was
// truncated. The arithmetic is on the decimal digits, so "1234.5" at scale 6
// is exactly 1234500000; no float64 is involved.
//
// s is JSON number syntax, loosened to the finite decimals Python's float()
// reads: a leading '+', leading zeros, and a point without digits on one
// side ("5.", ".5"). Exponents of any size are accepted: a non-zero value
// that scales below 1 is 0 (inexact) and one above math.MaxInt64 is
// [ErrRange]. Anything else, including surrounding space, is [ErrNotNumber].
func ParseDecimal[T string | []byte](s T, scale int) (v int64, neg, exact bool, err error) {
	d, err := parseDecimal(s, scale)
	return d.v, d.neg, d.exact, err
}

// decimal is the result of parseDecimal.
type decimal struct {
	v          int64
	neg, exact bool
	half       bool // the first truncated digit is 5 or more
	exp        int  // the exponent written, saturated at ±100000
}

func parseDecimal[T string | []byte](s T, scale int) (d decimal, err error) {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		d.neg = s[i] == '-'
		i++
	}
	// The mantissa is s[ms:me]: digits with at most one point.
	ms := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	nInt := i - ms
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	me := i
	if nInt == 0 && me-ms <= 1 { // no digit, at most a point
		return d, ErrNotNumber
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			eneg = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if d.exp < 100000 { // saturate; larger exponents are out of range anyway
				d.exp = d.exp*10 + int(s[i]-'0')
			}
			i++
		}
		if i == es {
			return d, ErrNotNumber
		}
		if eneg {
			d.exp = -d.exp
		}
	}
	if i != len(s) {
		return d, ErrNotNumber
	}
	j, lead := ms, 0 // skip leading zeros
	for ; j < me && (s[j] == '0' || s[j] == '.'); j++ {
		if s[j] == '0' {
			lead++
		}
	}
	if j == me {
		d.exact = true
		return d, nil
	}
	// point is the number of significant digits before the scaled point.
	point := nInt + d.exp + scale - lead
	if point <= 0 {
		d.half = point == 0 && s[j] >= '5'
		return d, nil
	}
	if point > 19 {
		return d, ErrRange
	}
	var u uint64 // at most 19 digits: no overflow
	for ; j < me && point > 0; j++ {
		if c := s[j]; c != '.' {
			u = u*10 + uint64(c-'0')
			point--
		}
	}
	for ; point > 0; point-- {
		u *= 10
	}
	if u > math.MaxInt64 {
		return d, ErrRange
	}
	d.v, d.exact = int64(u), true
	if j < me && s[j] == '.' {
		j++
	}
	if j < me {
		d.half = s[j] >= '5'
		for ; j < me; j++ {
			if s[j] != '0' && s[j] != '.' {
				d.exact = false
				break
			}
		}
	}
	return d, nil
}

// AppendScaled writes v / 10^scale as a minimal JSON decimal (no exponent,
// no trailing zeros): AppendScaled(dst, 1234500000, 6) → "1234.5".
func AppendScaled(dst []byte, v int64, scale int) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	s := strconv.FormatInt(v, 10)
	if len(s) <= scale {
		s = zeros(scale-len(s)+1) + s
	}
	intPart, frac := s[:len(s)-scale], s[len(s)-scale:]
	for len(frac) > 0 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	dst = append(dst, intPart...)
	if frac != "" {
		dst = append(dst, '.')
		dst = append(dst, frac...)
	}
	return dst
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}

// Escaping is a way of writing a JSON string: the two in use write the same
// text for every valid string and differ only in which characters they
// spell as escapes.
type Escaping uint8

const (
	// GoEscaping escapes like encoding/json without HTML escaping (so '<',
	// '>' and '&' stay as they are): the quote, the backslash, control
	// characters (\n \r \t short, the others as \u00XX), U+2028 and U+2029
	// as \u2028 and \u2029, invalid UTF-8 as \ufffd.
	GoEscaping Escaping = iota
	// PythonEscaping escapes what pydantic and orjson escape: the quote,
	// the backslash and control characters (short forms for \b \f \n \r
	// \t); everything else, non-ASCII included, is written as UTF-8, and
	// invalid UTF-8 becomes U+FFFD. Files that the Python aiperf writes
	// are matched byte for byte with it.
	PythonEscaping
)

// AppendString appends s as a JSON string literal with GoEscaping.
func AppendString(dst []byte, s string) []byte { return GoEscaping.AppendString(dst, s) }

// AppendString appends s as a JSON string literal escaped in the manner e.
func (e Escaping) AppendString(dst []byte, s string) []byte {
	py := e == PythonEscaping
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch {
			case c == '"', c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case py && c == '\b':
				dst = append(dst, '\\', 'b')
			case py && c == '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			if py {
				dst = append(dst, "\ufffd"...)
			} else {
				dst = append(dst, `\ufffd`...)
			}
			i += size
			start = i
			continue
		}
		if !py && (r == '\u2028' || r == '\u2029') {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigit[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigit = "0123456789abcdef"

// Fields calls fn for each member of the JSON object at b[i] with the raw key
// literal (quotes included) and the raw value. It returns the index past the
// object. fn may return an error to stop.
func Fields(b []byte, i int, fn func(key, value []byte, valueOff int) error) (int, error) {
	return fields(b, i, 0, fn)
}

func fields(b []byte, i int, m mode, fn func(key, value []byte, valueOff int) error) (int, error) {
	return object(b, i, m, fn, nil)
}

// WalkFields walks the JSON object at b[i] like [Fields], but leaves each
// value to fn: fn gets the raw key literal (quotes included) and the offset
// of the value (less than len(b), not white space), reads the value with
// [Skip] or a reader of its own, which must check its syntax, and returns
// the index just past it. A large value is thus scanned once, by fn, and
// not first by WalkFields. Keys and the punctuation around values are
// checked as in Fields. WalkFields returns the index past the object; an
// error from fn is returned as is, with the index fn returned. Nesting is
// not counted: a reader that recurses must bound its own depth.
func WalkFields(b []byte, i int, fn func(key []byte, valueOff int) (int, error)) (int, error) {
	return object(b, i, 0, nil, fn)
}

// object is Fields when walk is nil, else WalkFields. (One loop for both;
// calling fn through a closure given to WalkFields made Fields slower.)
func object(b []byte, i int, m mode, fn func(key, value []byte, valueOff int) error, walk func(key []byte, valueOff int) (int, error)) (int, error) {
	if i >= len(b) || b[i] != '{' {
		return i, syntaxErr(i, "expected '{'")
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, syntaxErr(i, "expected object key")
		}
		ks := i
		var err error
		if i, err = skipString(b, i, m); err != nil {
			return i, err
		}
		key := b[ks:i]
		i = SkipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, syntaxErr(i, "expected ':' after object key")
		}
		vs := SkipSpace(b, i+1)
		if walk != nil {
			if vs >= len(b) {
				return vs, syntaxErr(vs, "unexpected end of input") // as skip says
			}
			if i, err = walk(key, vs); err != nil {
				return i, err
			}
		} else {
			if i, err = skip(b, vs, 1, m); err != nil {
				return i, err
			}
			if err := fn(key, b[vs:i], vs); err != nil {
				return vs, err
			}
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return i, syntaxErr(i, "unexpected end of object")
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return i, syntaxErr(i, "expected ',' or '}' in object")
		}
	}
}

// Elements calls fn for each element of the JSON array at b[i] with its
// index n (from 0), the raw value and the value's offset in b. It returns the
// index past the array. The array is validated as it is walked, so fn may
// have seen earlier elements when a syntax error is returned; fn may return
// an error to stop, and that error is returned as is.
func Elements(b []byte, i int, fn func(n int, value []byte, valueOff int) error) (int, error) {
	return elements(b, i, 0, fn)
}

func elements(b []byte, i int, m mode, fn func(n int, value []byte, valueOff int) error) (int, error) {
	return array(b, i, m, fn, nil)
}

// WalkElements is the array counterpart of [WalkFields]: fn gets each
// element's index n (from 0) and offset, reads the element and returns the
// index just past it.
func WalkElements(b []byte, i int, fn func(n, valueOff int) (int, error)) (int, error) {
	return array(b, i, 0, nil, fn)
}

// array is Elements when walk is nil, else WalkElements.
func array(b []byte, i int, m mode, fn func(n int, value []byte, valueOff int) error, walk func(n, valueOff int) (int, error)) (int, error) {
	if i >= len(b) || b[i] != '[' {
		return i, syntaxErr(i, "expected '['")
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for n := 0; ; n++ {
		vs := i
		var err error
		if walk != nil {
			if vs >= len(b) {
				return vs, syntaxErr(vs, "unexpected end of input") // as skip says
			}
			if i, err = walk(n, vs); err != nil {
				return i, err
			}
		} else {
			if i, err = skip(b, vs, 1, m); err != nil {
				return i, err
			}
			if err := fn(n, b[vs:i], vs); err != nil {
				return vs, err
			}
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return i, syntaxErr(i, "unexpected end of array")
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case ']':
			return i + 1, nil
		default:
			return i, syntaxErr(i, "expected ',' or ']' in array")
		}
	}
}

// AppendCompact appends the valid JSON text src with its insignificant
// white space removed; every other byte is kept as it is (no escaping or
// re-encoding), so a multi-line document becomes one line. It is
// json.Compact without the error: src must be valid.
func AppendCompact(dst, src []byte) []byte {
	for i := 0; i < len(src); {
		switch src[i] {
		case ' ', '\t', '\n', '\r':
			i++
		case '"':
			end, err := skipString(src, i, laxUTF8)
			if err != nil { // not valid JSON: keep the rest as it is
				return append(dst, src[i:]...)
			}
			dst = append(dst, src[i:end]...)
			i = end
		default:
			j := i + 1
			for j < len(src) && !isSpaceOrQuote(src[j]) {
				j++
			}
			dst = append(dst, src[i:j]...)
			i = j
		}
	}
	return dst
}

func isSpaceOrQuote(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"'
}

// IsCompact reports whether the valid JSON text b has no white space
// outside its strings, that is, AppendCompact would copy it unchanged.
func IsCompact(b []byte) bool {
	for i := 0; i < len(b); {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			return false
		case '"':
			end, err := skipString(b, i, laxUTF8)
			if err != nil {
				return true
			}
			i = end
		default:
			i++
		}
	}
	return true
}
