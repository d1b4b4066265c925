package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
)

// laxCases are inputs on which the strict and the lax scanner differ or
// could: invalid UTF-8 inside and outside strings.
var laxCases = []string{
	"\"\xff\"", "\"a\xc3\"", "\"\xed\xa0\x80\"", `"\u00e9` + "\xfe\"", "{\"k\xff\":\"v\"}", "[\"\xff\", 1]",
	"\xff", "[\xff]", "{\"a\":1}\xff", "\"\xef\xbf\xbd\"",
}

func TestValid(t *testing.T) {
	for _, c := range append(skipCases, laxCases...) {
		if got, want := Valid([]byte(c)), validValue([]byte(c)); got != want {
			t.Errorf("Valid(%q) = %v, want %v", c, got, want)
		}
	}
}

func TestScannerAllowInvalidUTF8(t *testing.T) {
	lax := Scanner{AllowInvalidUTF8: true}
	for _, c := range append(skipCases, laxCases...) {
		if got, want := lax.Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("lax Valid(%q) = %v, json.Valid %v", c, got, want)
		}
		if got, want := (Scanner{}).Valid([]byte(c)), Valid([]byte(c)); got != want {
			t.Errorf("Scanner{}.Valid(%q) = %v, Valid %v", c, got, want)
		}
	}
	b := []byte("{\"a\xff\": [\"x\xfey\", 2]}")
	if _, err := Fields(b, 0, func(_, _ []byte, _ int) error { return nil }); err == nil {
		t.Errorf("Fields(%q) accepted invalid UTF-8", b)
	}
	var got []string
	end, err := lax.Fields(b, 0, func(k, v []byte, _ int) error {
		got = append(got, string(k), string(v))
		_, err := lax.Elements(v, 0, func(_ int, e []byte, _ int) error {
			got = append(got, string(e))
			return nil
		})
		return err
	})
	if err != nil || end != len(b) || strings.Join(got, "|") != "\"a\xff\"|[\"x\xfey\", 2]|\"x\xfey\"|2" {
		t.Errorf("lax.Fields(%q) = %d, %v, %q", b, end, err, got)
	}
	s := []byte("\"x\xfey\"")
	if end, err := lax.SkipString(s, 0); err != nil || end != len(s) {
		t.Errorf("lax.SkipString(%q) = %d, %v", s, end, err)
	}
	if _, err := SkipString(s, 0); err == nil {
		t.Errorf("SkipString(%q) accepted invalid UTF-8", s)
	}
	if _, err := lax.Skip(s, 0); err != nil {
		t.Errorf("lax.Skip(%q): %v", s, err)
	}
}

func TestMaxDepthAgreesWithEncodingJSON(t *testing.T) {
	for _, n := range []int{MaxDepth - 1, MaxDepth, MaxDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			close := "]"
			if open != "[" {
				close = "}"
			}
			b := []byte(strings.Repeat(open, n) + "1" + strings.Repeat(close, n))
			if got, want := Valid(b), json.Valid(b); got != want {
				t.Errorf("depth %d %s: Valid = %v, json.Valid %v", n, open, got, want)
			}
		}
	}
}

func TestElements(t *testing.T) {
	b := []byte(` [1, "a,b" ,{"c":[2]},[], null ] `)
	var got []string
	var offs []int
	end, err := Elements(b, 1, func(n int, v []byte, off int) error {
		if string(b[off:off+len(v)]) != string(v) {
			t.Errorf("element %d: offset %d does not point at %s", n, off, v)
		}
		got = append(got, string(v))
		offs = append(offs, n)
		return nil
	})
	if err != nil || end != len(b)-1 {
		t.Fatalf("Elements = %d, %v; want %d, nil", end, err, len(b)-1)
	}
	if s := strings.Join(got, ";"); s != `1;"a,b";{"c":[2]};[];null` {
		t.Errorf("elements %s", s)
	}
	if len(offs) != 5 || offs[4] != 4 {
		t.Errorf("indexes %v", offs)
	}
	if end, err := Elements([]byte(`[ ]`), 0, func(int, []byte, int) error { t.Error("called for []"); return nil }); err != nil || end != 3 {
		t.Errorf("Elements([ ]) = %d, %v", end, err)
	}
	stop := errors.New("stop")
	n := 0
	if _, err := Elements([]byte(`[1,2,3]`), 0, func(int, []byte, int) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("fn error: got %v after %d calls", err, n)
	}
	for _, bad := range []string{`{}`, `[1,]`, `[1 2]`, `[1`, `[`, ``, "[\"\xff\"]"} {
		if _, err := Elements([]byte(bad), 0, func(int, []byte, int) error { return nil }); err == nil {
			t.Errorf("Elements(%q) accepted", bad)
		}
	}
}

func TestParseDecimal(t *testing.T) {
	for _, c := range []struct {
		in         string
		scale      int
		want       int64
		neg, exact bool
		err        error
	}{
		{"0", 6, 0, false, true, nil},
		{"-0", 6, 0, true, true, nil},
		{"1234.5", 6, 1234500000, false, true, nil},
		{"1234.567891234", 6, 1234567891, false, false, nil}, // truncated, not rounded
		{"0.0000009", 6, 0, false, false, nil},
		{"61.114", 9, 61114000000, false, true, nil},
		{"1.5E+2", 6, 150000000, false, true, nil},
		{"25e-1", 6, 2500000, false, true, nil},
		{"12.000", 0, 12, false, true, nil},
		{"-7", 0, 7, true, true, nil},
		{"+7", 0, 7, false, true, nil},
		{"000012", 0, 12, false, true, nil},
		{".5", 9, 500000000, false, true, nil},
		{"5.", 9, 5000000000, false, true, nil},
		{"9223372036854775807", 0, 9223372036854775807, false, true, nil},
		{"9223372036854775807.9", 0, 9223372036854775807, false, false, nil},
		{"9223372036854775808", 0, 0, false, false, ErrRange},
		{"9223372036855", 6, 0, false, false, ErrRange},
		{"1e999999999999", 0, 0, false, false, ErrRange},
		{"0e999999999999", 0, 0, false, true, nil},
		{"1e-999999999999", 0, 0, false, false, nil},
		{"", 0, 0, false, false, ErrNotNumber},
		{"-", 0, 0, false, false, ErrNotNumber},
		{".", 0, 0, false, false, ErrNotNumber},
		{"1e", 0, 0, false, false, ErrNotNumber},
		{" 1", 0, 0, false, false, ErrNotNumber},
		{"1x", 0, 0, false, false, ErrNotNumber},
		{"nan", 0, 0, false, false, ErrNotNumber},
	} {
		v, neg, exact, err := ParseDecimal(c.in, c.scale)
		if err != c.err || (err == nil && (v != c.want || neg != c.neg || exact != c.exact)) {
			t.Errorf("ParseDecimal(%q, %d) = %d, %v, %v, %v; want %d, %v, %v, %v", c.in, c.scale, v, neg, exact, err, c.want, c.neg, c.exact, c.err)
		}
		v2, neg2, exact2, err2 := ParseDecimal([]byte(c.in), c.scale)
		if v2 != v || neg2 != neg || exact2 != exact || err2 != err {
			t.Errorf("ParseDecimal([]byte(%q)) differs from the string form", c.in)
		}
	}
}

// TestParseScaledRounding covers the rounding edges of ParseScaled, which
// shares its digit arithmetic with ParseDecimal.
func TestParseScaledRounding(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0.0000015", 2, true}, {"0.00000149", 1, true}, {"0.0000005", 1, true}, {"0.00000005", 0, true},
		{"1e-400", 0, true}, {"1e-401", 0, false}, {"0e400", 0, true}, {"0e401", 0, false},
		{"9223372036854.775807", 9223372036854775807, true}, {"9223372036854.7758074", 9223372036854775807, true},
		{"9223372036854.7758075", 0, false}, {"9223372036854.775808", 0, false},
		{"01", 0, false}, {"+1", 0, false}, {".5", 0, false}, {"-0", 0, false}, {"1 ", 0, false},
	} {
		if got, ok := ParseScaled([]byte(c.in), 6); got != c.want || ok != c.ok {
			t.Errorf("ParseScaled(%q, 6) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// FuzzLax checks that the lax scanner accepts exactly what encoding/json does.
func FuzzLax(f *testing.F) {
	for _, c := range append(skipCases, laxCases...) {
		f.Add([]byte(c))
	}
	for _, c := range surrogateCases {
		f.Add([]byte(c))
	}
	lax := Scanner{AllowInvalidUTF8: true}
	sur := Scanner{AllowInvalidUTF8: true, RejectLoneSurrogates: true}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := lax.Valid(b), json.Valid(b); got != want {
			t.Fatalf("lax Valid(%q) = %v, json.Valid %v", b, got, want)
		}
		if got, want := sur.Valid(b), json.Valid(b) && !hasLoneSurrogate(b); got != want {
			t.Fatalf("RejectLoneSurrogates Valid(%q) = %v, want %v", b, got, want)
		}
		if json.Valid(b) {
			var want bytes.Buffer
			_ = json.Compact(&want, b)
			if got := AppendCompact(nil, b); !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("AppendCompact(%q) = %q, json.Compact %q", b, got, want.Bytes())
			}
		}
	})
}

func TestWalk(t *testing.T) {
	b := []byte(`{"a" : [1, {"b": "c"}] ,"\u006b": "x\"y", "n": null}`)
	var got []string
	end, err := WalkFields(b, 0, func(key []byte, i int) (int, error) {
		if key[0] != '"' || b[i] == ' ' {
			t.Errorf("key %s, value at %d: %q", key, i, b[i])
		}
		if b[i] != '[' {
			e, err := Skip(b, i)
			got = append(got, string(key)+"="+string(b[i:e]))
			return e, err
		}
		return WalkElements(b, i, func(n, i int) (int, error) {
			e, err := Skip(b, i)
			got = append(got, fmt.Sprint(n, "=", string(b[i:e])))
			return e, err
		})
	})
	if err != nil || end != len(b) {
		t.Fatalf("WalkFields = %d, %v", end, err)
	}
	if s := strings.Join(got, ";"); s != `0=1;1={"b": "c"};"\u006b"="x\"y";"n"=null` {
		t.Errorf("got %s", s)
	}
	stop := errors.New("stop")
	for _, c := range []string{`{"a":1}`, `[1]`} {
		var end int
		var err error
		if c[0] == '{' {
			end, err = WalkFields([]byte(c), 0, func(_ []byte, i int) (int, error) { return 42, stop })
		} else {
			end, err = WalkElements([]byte(c), 0, func(_, i int) (int, error) { return 42, stop })
		}
		if end != 42 || err != stop {
			t.Errorf("%s: fn error: got %d, %v", c, end, err)
		}
	}
	for _, c := range []string{`{"a":`, `{"a": `, `[`, `[1,`, `[1, `} {
		called := false
		fn := func(i int) (int, error) {
			if i >= len(c) {
				called = true
			}
			return Skip([]byte(c), i)
		}
		var err error
		if c[0] == '{' {
			_, err = WalkFields([]byte(c), 0, func(_ []byte, i int) (int, error) { return fn(i) })
		} else {
			_, err = WalkElements([]byte(c), 0, func(_, i int) (int, error) { return fn(i) })
		}
		if err == nil || called {
			t.Errorf("%q: err %v, fn called at the end: %v", c, err, called)
		}
	}
}

// FuzzWalk checks that WalkFields and WalkElements with a Skip reader are
// Fields and Elements: same end, same error.
func FuzzWalk(f *testing.F) {
	for _, c := range append(skipCases, laxCases...) {
		f.Add([]byte(c))
		f.Add([]byte(`{"k": ` + c + `}`))
		f.Add([]byte(`[` + c + `, 1]`))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		i := SkipSpace(b, 0)
		e1, err1 := Fields(b, i, func(_, _ []byte, _ int) error { return nil })
		e2, err2 := WalkFields(b, i, func(_ []byte, j int) (int, error) { return Skip(b, j) })
		if e1 != e2 || fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Fatalf("%q: Fields %d, %v; WalkFields %d, %v", b, e1, err1, e2, err2)
		}
		e1, err1 = Elements(b, i, func(int, []byte, int) error { return nil })
		e2, err2 = WalkElements(b, i, func(_, j int) (int, error) { return Skip(b, j) })
		if e1 != e2 || fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Fatalf("%q: Elements %d, %v; WalkElements %d, %v", b, e1, err1, e2, err2)
		}
	})
}

// hasLoneSurrogate is an independent reference for RejectLoneSurrogates:
// it reads every \uXXXX escape of a valid JSON text (escapes occur only in
// strings) and pairs surrogates with unicode/utf16.
func hasLoneSurrogate(b []byte) bool {
	hex := func(i int) rune {
		v, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
		if err != nil {
			return -1
		}
		return rune(v)
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if i+5 >= len(b) || b[i+1] != 'u' {
			i++ // a two-byte escape such as \\ or \"
			continue
		}
		r := hex(i + 2)
		if utf16.IsSurrogate(r) {
			if i+11 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' && utf16.DecodeRune(r, hex(i+8)) != unicode.ReplacementChar {
				i += 11
				continue
			}
			return true
		}
		i += 5
	}
	return false
}

var surrogateCases = []string{
	`"\ud800"`, `"\udc00"`, `"a\ud83d"`, `"\ud83d\ude00"`, `"\ud83d\u0041"`, `"\ude00\ud83d"`, `"\uD83D\uDE00x"`,
	`"\ud83d\\ude00"`, `"\\ud800"`, `["\ud800", 1]`, `{"\udfff": 1}`, `"\ud83d\ude00\ud800"`, `"\ud83d\ud83d\ude00"`,
	`"\ue000 \uffff \u0000"`,
}

func TestRejectLoneSurrogates(t *testing.T) {
	s := Scanner{RejectLoneSurrogates: true}
	for _, c := range append(append(skipCases, laxCases...), surrogateCases...) {
		b := []byte(c)
		want := Valid(b) && !hasLoneSurrogate(b)
		err := s.Check(b)
		if got := err == nil; got != want {
			t.Errorf("Check(%s) = %v, want valid %v", c, err, want)
		}
		if got := s.Valid(b); got != want {
			t.Errorf("Valid(%s) = %v, want %v", c, got, want)
		}
		if Valid(b) && hasLoneSurrogate(b) && !errors.Is(err, ErrLoneSurrogate) {
			t.Errorf("Check(%s) = %v, want ErrLoneSurrogate", c, err)
		}
	}
	err := s.Check([]byte(`{"a": ["ok", "x\ud800y"]}`))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Offset != 15 || !strings.Contains(se.Msg, `\ud800`) {
		t.Errorf("Check: %v, want a lone surrogate at byte 15", err)
	}
	err = (Scanner{}).Check([]byte("[\"ok\", \"x\xc3(\"]"))
	if !errors.As(err, &se) || se.Offset != 9 || !errors.Is(err, ErrInvalidUTF8) {
		t.Errorf("Check: %v, want invalid UTF-8 at byte 9", err)
	}
	if err := s.Check([]byte(`1 2`)); err == nil || errors.Is(err, ErrInvalidUTF8) {
		t.Errorf("Check(1 2) = %v", err)
	}
}

func TestAppendCompact(t *testing.T) {
	for _, c := range append(append(skipCases, laxCases...), surrogateCases...,
	) {
		c += "\n"
		b := []byte(" \n" + strings.ReplaceAll(strings.ReplaceAll(c, ",", " ,\n\t"), ":", "\r\n: "))
		if !json.Valid(b) {
			continue
		}
		var want bytes.Buffer
		if err := json.Compact(&want, b); err != nil {
			t.Fatal(err)
		}
		got := AppendCompact(nil, b)
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("AppendCompact(%q) = %q, want %q", b, got, want.Bytes())
		}
		if IsCompact(b) != bytes.Equal(got, b) || !IsCompact(got) {
			t.Errorf("IsCompact(%q) = %v", b, IsCompact(b))
		}
	}
}
