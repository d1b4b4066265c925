package jsonx

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

var skipCases = []string{
	`"plain"`, `"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00"`, `""`, `"héllo wörld 你好"`,
	`0`, `-0`, `12.5e-3`, `1E+9`, `true`, `false`, `null`,
	`{}`, `[]`, `{"a":[1,2,{"b":null}],"c":"d"}`, ` [ 1 , 2 ] `,
	// invalid
	`"unterminated`, `"bad \x escape"`, "\"ctl \x01\"", "\"\xff\"", `01`, `1.`, `-`, `tru`, `{"a"}`, `{"a":1,}`, `[1,]`, `{a:1}`, `[`, `"\u12"`,
	strings.Repeat("a", 3), `"` + strings.Repeat("long ascii run ", 100) + `"`,
}

// validValue reports what encoding/json thinks of a whole input. We are
// stricter in one way: strings must be valid UTF-8 (RFC 8259 §8.1), where
// encoding/json silently replaces bad bytes.
func validValue(b []byte) bool { return json.Valid(b) && utf8.Valid(b) }

func ourValid(b []byte) bool {
	i := SkipSpace(b, 0)
	end, err := Skip(b, i)
	if err != nil {
		return false
	}
	return SkipSpace(b, end) == len(b)
}

func TestSkipAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range skipCases {
		if got, want := ourValid([]byte(c)), validValue([]byte(c)); got != want {
			t.Errorf("Skip(%q) valid = %v, want %v", c, got, want)
		}
	}
}

func TestUnquote(t *testing.T) {
	for _, c := range []string{`"plain"`, `"a\"b\\c\/d\n\t\r\b\f"`, `"\u00e9\ud83d\ude00"`, `"\ud800 lone"`, `"中文"`} {
		var want string
		if err := json.Unmarshal([]byte(c), &want); err != nil {
			t.Fatal(err)
		}
		got, err := Unquote([]byte(c))
		if err != nil || got != want {
			t.Errorf("Unquote(%s) = %q, %v; want %q", c, got, err, want)
		}
		app, err := AppendUnquote([]byte("prefix:"), []byte(c))
		if err != nil || string(app) != "prefix:"+want {
			t.Errorf("AppendUnquote(prefix:, %s) = %q, %v; want %q", c, app, err, "prefix:"+want)
		}
	}
	for _, bad := range []string{`plain`, `"`, `"\x"`, `"\u12"`, `"end\"`} {
		if _, err := AppendUnquote(nil, []byte(bad)); err == nil {
			t.Errorf("AppendUnquote(%s): no error", bad)
		}
		if _, err := Unquote([]byte(bad)); err == nil {
			t.Errorf("Unquote(%s): no error", bad)
		}
	}
}

func TestAppendStringRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\ nl\n tab\t cr\r", "\x00\x01\x1f", "<html>&", "é 你好 😀", "\u2028\u2029", "bad \xff utf8"} {
		lit := AppendString(nil, s)
		if !json.Valid(lit) {
			t.Fatalf("AppendString(%q) = %s: not valid JSON", s, lit)
		}
		var back string
		if err := json.Unmarshal(lit, &back); err != nil {
			t.Fatal(err)
		}
		want := strings.ToValidUTF8(s, "\ufffd")
		if back != want {
			t.Errorf("round trip of %q = %q, want %q", s, back, want)
		}
	}
}

func TestParseScaled(t *testing.T) {
	for _, c := range []struct {
		in    string
		scale int
		want  int64
		ok    bool
	}{
		{"0", 6, 0, true}, {"1234", 6, 1234000000, true}, {"1234.5", 6, 1234500000, true},
		{"0.0000005", 6, 1, true}, {"0.0000004", 6, 0, true}, {"1e3", 6, 1000000000, true},
		{"1.5E-3", 6, 1500, true}, {"-1", 6, 0, false}, {"abc", 6, 0, false}, {"1e30", 6, 0, false},
		{"9223372036854", 6, 9223372036854000000, true}, {"330000", 6, 330000000000, true},
	} {
		got, ok := ParseScaled([]byte(c.in), c.scale)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseScaled(%q, %d) = %d, %v; want %d, %v", c.in, c.scale, got, ok, c.want, c.ok)
		}
	}
}

func TestAppendScaled(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want string
	}{{0, "0"}, {1234500000, "1234.5"}, {1, "0.000001"}, {1000000, "1"}, {330000000000, "330000"}} {
		if got := string(AppendScaled(nil, c.v, 6)); got != c.want {
			t.Errorf("AppendScaled(%d) = %s, want %s", c.v, got, c.want)
		}
		back, ok := ParseScaled([]byte(c.want), 6)
		if !ok || back != c.v {
			t.Errorf("ParseScaled(AppendScaled(%d)) = %d", c.v, back)
		}
	}
}

func TestParseUint(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{{"0", 0, true}, {"18446744073709551615", 1<<64 - 1, true}, {"18446744073709551616", 0, false}, {"01", 0, false}, {"-1", 0, false}, {"1.0", 0, false}} {
		got, ok := ParseUint([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("ParseUint(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestFields(t *testing.T) {
	var keys []string
	_, err := Fields([]byte(`{"a":1, "b" : [2], "c":{"d":"e"}}`), 0, func(k, v []byte, _ int) error {
		keys = append(keys, string(k)+"="+string(v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(keys, ";"), `"a"=1;"b"=[2];"c"={"d":"e"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func FuzzSkip(f *testing.F) {
	for _, c := range skipCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, want := ourValid(b), validValue(b)
		if got != want {
			t.Fatalf("Skip(%q) valid = %v, encoding/json says %v", b, got, want)
		}
		if got && len(b) > 0 {
			i := SkipSpace(b, 0)
			if b[i] == '"' {
				s, err := Unquote(bytes.TrimRight(b[i:], " \t\r\n"))
				if app, aerr := AppendUnquote(nil, bytes.TrimRight(b[i:], " \t\r\n")); string(app) != s || (aerr == nil) != (err == nil) {
					t.Fatalf("AppendUnquote(%q) = %q, %v; Unquote %q, %v", b, app, aerr, s, err)
				}
				var ref string
				if json.Unmarshal(b, &ref) == nil && (err != nil || s != ref) {
					if utf8.ValidString(ref) {
						t.Fatalf("Unquote(%q) = %q, %v; encoding/json %q", b, s, err, ref)
					}
				}
			}
		}
	})
}

func BenchmarkSkipString(b *testing.B) {
	s := AppendString(nil, strings.Repeat("The quick brown fox jumps over the lazy dog.\n", 20000))
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if _, err := SkipString(s, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// TestHasSpecialExhaustiveLanes checks the SWAR test against a byte loop for
// every byte value in every lane, alone and next to every other special byte.
func TestHasSpecialExhaustiveLanes(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 }
	for lane := 0; lane < 8; lane++ {
		for c := 0; c < 256; c++ {
			w := []byte("abcdefgh")
			w[lane] = byte(c)
			x := uint64(0)
			for i := 7; i >= 0; i-- {
				x = x<<8 | uint64(w[i])
			}
			if got, want := hasSpecial(x), special(byte(c)); got != want {
				t.Fatalf("hasSpecial(%q) = %v, want %v", w, got, want)
			}
		}
	}
}

// TestEscapingModes: the two modes write the same string differently only
// where encoding/json and Python's orjson/pydantic do, and both round-trip.
func TestEscapingModes(t *testing.T) {
	for _, c := range []struct{ in, goForm, pyForm string }{
		{"plain <&>", `"plain <&>"`, `"plain <&>"`},
		{"q\"b\\", `"q\"b\\"`, `"q\"b\\"`},
		{"\x01\b\f\n\r\t\x1f", `"\u0001\u0008\u000c\n\r\t\u001f"`, `"\u0001\b\f\n\r\t\u001f"`},
		{"é\u2028\u2029", "\"é\\u2028\\u2029\"", "\"é\u2028\u2029\""},
		{"bad\xffutf8", `"bad\ufffdutf8"`, "\"bad\ufffdutf8\""},
	} {
		for _, m := range []struct {
			e    Escaping
			want string
		}{{GoEscaping, c.goForm}, {PythonEscaping, c.pyForm}} {
			got := m.e.AppendString([]byte("x"), c.in)
			if string(got) != "x"+m.want {
				t.Errorf("mode %d, %q: %s, want %s", m.e, c.in, got[1:], m.want)
			}
			var back string
			if err := json.Unmarshal(got[1:], &back); err != nil || back != strings.ToValidUTF8(c.in, "\ufffd") {
				t.Errorf("mode %d, %q: round trip %q, %v", m.e, c.in, back, err)
			}
		}
		if got, want := string(AppendString(nil, c.in)), string(GoEscaping.AppendString(nil, c.in)); got != want {
			t.Errorf("AppendString(%q) = %s, not the Go mode's %s", c.in, got, want)
		}
	}
}
