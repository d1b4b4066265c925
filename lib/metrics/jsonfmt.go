package metrics

import (
	"math"
	"strconv"
	"time"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// JSON number and string formatting as the Python aiperf's serializers
// write them: pydantic (the summary) and orjson (the per-request records)
// both print the shortest digits that round-trip, as an integer with ".0"
// or a plain decimal while the decimal point is within 16 digits of the
// first one and not more than 5 places left of it, else in exponent form;
// pydantic writes "1e+16", orjson "1e16". NaN and infinities are null.

// appendFloat appends f; plusExp selects pydantic's exponent sign.
func appendFloat(dst []byte, f float64, plusExp bool) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if a := math.Abs(f); a >= 1e-5 && a < 1e16 {
		// The plain decimal layout: strconv's shortest digits in %f form,
		// with ".0" when they are an integer.
		n := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
		for _, c := range dst[n:] {
			if c == '.' {
				return dst
			}
		}
		return append(dst, '.', '0')
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // [-]d[.ddd]e±XX
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	var digits [24]byte
	nd := 0
	i := 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
	kk := exp + 1 // the decimal point sits after kk digits
	switch {
	case kk >= nd && kk <= 16:
		dst = append(dst, digits[:nd]...)
		for j := nd; j < kk; j++ {
			dst = append(dst, '0')
		}
		return append(dst, '.', '0')
	case kk > 0 && kk <= 16:
		dst = append(dst, digits[:kk]...)
		dst = append(dst, '.')
		return append(dst, digits[kk:nd]...)
	case kk > -5 && kk <= 0:
		dst = append(dst, '0', '.')
		for j := kk; j < 0; j++ {
			dst = append(dst, '0')
		}
		return append(dst, digits[:nd]...)
	}
	dst = append(dst, digits[0])
	if nd > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:nd]...)
	}
	dst = append(dst, 'e')
	if exp >= 0 && plusExp {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(exp), 10)
}

// appendString appends s as a JSON string escaped as pydantic and orjson
// do (jsonx.PythonEscaping).
func appendString(dst []byte, s string) []byte { return jsonx.PythonEscaping.AppendString(dst, s) }

// appendDatetime appends ns as pydantic writes Python's naive local
// datetime.fromtimestamp: "2025-11-07T13:38:54.793124", the microseconds
// (rounded half to even) omitted when zero.
func appendDatetime(dst []byte, ns int64, loc *time.Location) []byte {
	sec, rem := ns/1e9, ns%1e9
	if rem < 0 {
		sec, rem = sec-1, rem+1e9
	}
	us, frac := rem/1000, rem%1000
	if frac > 500 || frac == 500 && us%2 == 1 {
		us++
	}
	if us == 1e6 {
		sec, us = sec+1, 0
	}
	t := time.Unix(sec, 0).In(loc)
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, "2006-01-02T15:04:05")
	if us != 0 {
		dst = append(dst, '.')
		s := strconv.FormatInt(us+1e6, 10)
		dst = append(dst, s[1:]...)
	}
	return append(dst, '"')
}
