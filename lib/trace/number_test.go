package trace

import (
	"errors"
	"testing"
)

func TestScaledDecimal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		scale int
		want  int64
		neg   bool
		exact bool
		err   error
	}{
		{"0", scaleMS, 0, false, true, nil},
		{"-0", scaleMS, 0, true, true, nil},
		{"1234.5", scaleMS, 1234500000, false, true, nil},
		{"1234.567891", scaleMS, 1234567891, false, true, nil},
		{"1234.567891234", scaleMS, 1234567891, false, false, nil},
		{"0.1", scaleMS, 100000, false, true, nil},
		{"0.3", scaleS, 300000000, false, true, nil},
		{"61.114", scaleS, 61114000000, false, true, nil},
		{"1.0000000001", scaleMS, 1000000, false, false, nil}, // below 1 ns: truncated
		{"1e3", scaleMS, 1000000000, false, true, nil},
		{"1.5E+2", scaleMS, 150000000, false, true, nil},
		{"25e-1", scaleMS, 2500000, false, true, nil},
		{"1e-10", scaleMS, 0, false, false, nil},
		{"000012", 0, 12, false, true, nil},
		{"12.000", 0, 12, false, true, nil},
		{"12.5", 0, 12, false, false, nil},
		{"-7", 0, 7, true, true, nil},
		{"+7", 0, 7, false, true, nil},
		{".5", scaleS, 500000000, false, true, nil},
		{"5.", scaleS, 5000000000, false, true, nil},
		{"9223372036854775807", 0, 9223372036854775807, false, true, nil},
		{"9223372036854775808", 0, 0, false, false, errNumRange},
		{"9223372036854.775807", scaleMS, 9223372036854775807, false, true, nil},
		{"9223372036855", scaleMS, 0, false, false, errNumRange},
		{"1e999999999999", 0, 0, false, false, errNumRange},
		{"0e999999999999", 0, 0, false, true, nil},
		{"1e-999999999999", 0, 0, false, false, nil},
		{"", 0, 0, false, false, errNumSyntax},
		{"-", 0, 0, true, false, errNumSyntax},
		{".", 0, 0, false, false, errNumSyntax},
		{"1e", 0, 0, false, false, errNumSyntax},
		{"1x", 0, 0, false, false, errNumSyntax},
		{"nan", 0, 0, false, false, errNumSyntax},
	}
	for _, tt := range tests {
		v, neg, exact, err := scaledDecimal(tt.in, tt.scale)
		if !errors.Is(err, tt.err) || (err == nil && (v != tt.want || neg != tt.neg || exact != tt.exact)) {
			t.Errorf("scaledDecimal(%q, %d) = %d, %v, %v, %v; want %d, %v, %v, %v", tt.in, tt.scale, v, neg, exact, err, tt.want, tt.neg, tt.exact, tt.err)
		}
	}
}

func TestParseUint64(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"18446744073709551615", 18446744073709551615, true},
		{"18446744073709551616", 0, false},
		{"99999999999999999999", 0, false},
		{"100000000000000000000", 0, false},
		{"-1", 0, false},
		{"1.0", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseUint64([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseUint64(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{File: "trace.jsonl", Line: 17, Field: "hash_ids[3]", Err: errors.New("not an unsigned 64-bit integer")},
			"trace.jsonl:17: hash_ids[3]: not an unsigned 64-bit integer"},
		{&Error{File: "t.csv", Line: 1, Err: errors.New("bad")}, "t.csv:1: bad"},
		{&Error{File: "dir", Err: errors.New("no files")}, "dir: no files"},
		{&Error{Line: 3, Field: "x", Err: errors.New("y")}, "line 3: x: y"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	inner := errors.New("inner")
	if e := (&Error{Err: inner}); !errors.Is(e, inner) {
		t.Errorf("errors.Is(%v, inner) = false", e)
	}
}
