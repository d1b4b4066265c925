package metrics

import (
	"math"
	"testing"
	"time"
)

// The expected strings are what pydantic 2.13 (model_dump_json) and orjson
// printed for the same float64 bits. orjson prints 2^53 without ".0", a
// quirk of its own left out here.
var floatCases = []struct {
	bits             uint64
	pydantic, orjson string
}{
	{0x0000000000000000, `0.0`, `0.0`},
	{0x8000000000000000, `-0.0`, `-0.0`},
	{0x3ff0000000000000, `1.0`, `1.0`},
	{0x4028000000000000, `12.0`, `12.0`},
	{0x3fb999999999999a, `0.1`, `0.1`},
	{0x3ee4f8b588e368f1, `0.00001`, `0.00001`},
	{0x3eef75104d551d69, `0.000015`, `0.000015`},
	{0x3ee4f357252adccd, `9.99e-6`, `9.99e-6`},
	{0x3e7ad7f29abcaf48, `1e-7`, `1e-7`},
	{0x3e8421f5f40d8376, `1.5e-7`, `1.5e-7`},
	{0x430c6bf526340000, `1000000000000000.0`, `1000000000000000.0`},
	{0x4341c37937e08000, `1e+16`, `1e16`},
	{0x4341c37937e07fff, `9999999999999998.0`, `9999999999999998.0`},
	{0x4345eddb25e04800, `1.2345e+16`, `1.2345e16`},
	{0x419d6f3454800000, `123456789.125`, `123456789.125`},
	{0x0000000000000001, `5e-324`, `5e-324`},
	{0x7fefffffffffffff, `1.7976931348623157e+308`, `1.7976931348623157e308`},
	{0xbdf12e0be826d695, `-2.5e-10`, `-2.5e-10`},
	{0x403fbe30ec311622, `31.742933999999998`, `31.742933999999998`},
	{0x406ff1ecef4cdd07, `255.56017270100003`, `255.56017270100003`},
	{0x43b875d74851e616, `1.7625515347970678e+18`, `1.7625515347970678e18`},
	{0x3eff75104d551d69, `0.00003`, `0.00003`},
	{0x4059000000000000, `100.0`, `100.0`},
	{0x4340000000000001, `9007199254740994.0`, `9007199254740994.0`},
	{0x3d56c9a708ad0025, `3.2383276483316235e-13`, `3.2383276483316235e-13`},
	{0x3de4bb889123b488, `1.5084917392450194e-10`, `1.5084917392450194e-10`},
	{0x3ea5d77c0b473258, `6.509344730398537e-7`, `6.509344730398537e-7`},
	{0x3f12fd1deddb0313, `0.00007243628666754277`, `0.00007243628666754277`},
	{0x3fe125f2046063a0, `0.5358820043066892`, `0.5358820043066892`},
	{0x4076db05cdbd9375, `365.6889169125855`, `365.6889169125855`},
	{0x40ec51dd97c1203d, `57998.92477470681`, `57998.92477470681`},
	{0x41be3edad5307dd9, `507435733.1894203`, `507435733.1894203`},
	{0x422175d4af93f842, `37495658441.98488`, `37495658441.98488`},
	{0x42f8a6600eede31e, `433645683662385.9`, `433645683662385.9`},
	{0x436f05a467799667, `6.9855423574618936e+16`, `6.9855423574618936e16`},
	{0x4413ab9574128963, `9.071301334386506e+19`, `9.071301334386506e19`},
	{0xc402691c1aa92d21, `-4.24519189142514e+19`, `-4.24519189142514e19`},
}

func TestAppendFloat(t *testing.T) {
	for _, c := range floatCases {
		f := math.Float64frombits(c.bits)
		if got := string(appendFloat(nil, f, true)); got != c.pydantic {
			t.Errorf("%v: pydantic form %s, want %s", f, got, c.pydantic)
		}
		if got := string(appendFloat(nil, f, false)); got != c.orjson {
			t.Errorf("%v: orjson form %s, want %s", f, got, c.orjson)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := string(appendFloat(nil, f, true)); got != "null" {
			t.Errorf("%v: %s", f, got)
		}
	}
}

func TestAppendString(t *testing.T) {
	for in, want := range map[string]string{
		"plain":              "\"plain\"",
		"q\"b\\":             "\"q\\\"b\\\\\"",
		"<&>\u2028é":         "\"<&>\u2028é\"",
		"\x01\b\f\n\r\t\x1f": "\"\\u0001\\b\\f\\n\\r\\t\\u001f\"",
		"bad\xffutf8":        "\"bad\ufffdutf8\"",
	} {
		if got := string(appendString(nil, in)); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

func TestAppendDatetime(t *testing.T) {
	utc := time.UTC
	for _, c := range []struct {
		ns   int64
		want string
	}{
		{1762551534797067827, "\"2025-11-07T21:38:54.797068\""},
		{1762551534000000000, "\"2025-11-07T21:38:54\""},
		{1762551534000000500, "\"2025-11-07T21:38:54\""},        // half to even: 0
		{1762551534000001500, "\"2025-11-07T21:38:54.000002\""}, // half to even: 2
		{1762551534999999600, "\"2025-11-07T21:38:55\""},
	} {
		if got := string(appendDatetime(nil, c.ns, utc)); got != c.want {
			t.Errorf("%d: %s, want %s", c.ns, got, c.want)
		}
	}
}
