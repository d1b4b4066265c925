package trace

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Decimal scales: a value in these units times 10^scale is nanoseconds.
const (
	scaleMS = 6 // milliseconds (mooncake, single_turn)
	scaleS  = 9 // seconds (bailian, BurstGPT)
)

var (
	errNumSyntax = errors.New("not a number")
	errNumRange  = errors.New("out of range")
)

// scaledDecimal parses the decimal number s (JSON number syntax, plus an
// optional '+' and forms like "5." and ".5" that Python's float accepts) and
// returns s × 10^scale truncated toward zero. exact reports that nothing was
// truncated. The arithmetic is on the decimal digits, so "1234.5" with scale
// 6 is exactly 1234500000; no float64 is involved.
func scaledDecimal(s string, scale int) (v int64, neg, exact bool, err error) {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	intStart := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intDigits := s[intStart:i]
	var fracDigits string
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		fracDigits = s[fs:i]
	}
	if intDigits == "" && fracDigits == "" {
		return 0, neg, false, errNumSyntax
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			eneg = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if exp < 100000 { // saturate; larger exponents are out of range anyway
				exp = exp*10 + int(s[i]-'0')
			}
			i++
		}
		if i == es {
			return 0, neg, false, errNumSyntax
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return 0, neg, false, errNumSyntax
	}

	// Digits of the mantissa without the point; the point sits after
	// point digits once scaled.
	digits := intDigits + fracDigits
	point := len(intDigits) + exp + scale
	// Drop leading zeros so that point counts significant positions.
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
		point--
	}
	if digits == "" {
		return 0, neg, true, nil
	}
	exact = true
	var whole string
	switch {
	case point <= 0:
		return 0, neg, false, nil
	case point >= len(digits):
		if point > 19 {
			return 0, neg, false, errNumRange
		}
		whole = digits + zeros(point-len(digits))
	default:
		whole = digits[:point]
		for _, c := range digits[point:] {
			if c != '0' {
				exact = false
				break
			}
		}
	}
	if len(whole) > 19 {
		return 0, neg, false, errNumRange
	}
	u, perr := strconv.ParseUint(whole, 10, 64)
	if perr != nil || u > math.MaxInt64 {
		return 0, neg, false, errNumRange
	}
	return int64(u), neg, exact, nil
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}

// durationNS converts a non-negative JSON number in units of 10^-scale
// seconds (scaleMS, scaleS) to nanoseconds.
func durationNS(field string, v []byte, scale int) (int64, *fieldError) {
	if kind(v) != kindNumber {
		return 0, wrongKind(field, "a number", v)
	}
	ns, neg, _, err := scaledDecimal(string(v), scale)
	if err != nil {
		return 0, ferr(field, "%s: %v", v, err)
	}
	if neg && ns != 0 {
		return 0, ferr(field, "must not be negative, got %s", v)
	}
	return ns, nil
}

// integer parses a JSON number whose value is an integer ("12", "12.0" and
// "1.2e1" are all 12, as pydantic accepts) into an int64.
func integer(field string, v []byte) (int64, *fieldError) {
	if kind(v) != kindNumber {
		return 0, wrongKind(field, "an integer", v)
	}
	n, neg, exact, err := scaledDecimal(string(v), 0)
	if err != nil {
		return 0, ferr(field, "%s: %v", v, err)
	}
	if !exact {
		return 0, ferr(field, "must be an integer, got %s", v)
	}
	if neg {
		n = -n
	}
	return n, nil
}

// count parses a non-negative integer that fits in an int.
func count(field string, v []byte) (int, *fieldError) {
	n, fe := integer(field, v)
	if fe != nil {
		return 0, fe
	}
	if n < 0 {
		return 0, ferr(field, "must not be negative, got %s", v)
	}
	if n > math.MaxInt {
		return 0, ferr(field, "%s: %v", v, errNumRange)
	}
	return int(n), nil
}

// hashIDs parses a JSON array of unsigned 64-bit integers from its text.
// Elements must be plain digit strings: negative numbers, fractions,
// exponents and values above 2^64-1 are errors.
func hashIDs(field string, v []byte) ([]uint64, *fieldError) {
	if kind(v) != kindArray {
		return nil, wrongKind(field, "an array of integers", v)
	}
	ids := make([]uint64, 0, 16)
	var fe *fieldError
	_ = elements(v, func(i int, e []byte, _ int) error {
		id, ok := parseUint64(e)
		if !ok {
			fe = ferr(fmt.Sprintf("%s[%d]", field, i), "not an unsigned 64-bit integer")
			return fe
		}
		ids = append(ids, id)
		return nil
	})
	if fe != nil {
		return nil, fe
	}
	return ids, nil
}

func parseUint64(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
