package trace

import (
	"bytes"
	"fmt"
	"math"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// Decimal scales: a value in these units times 10^scale is nanoseconds.
const (
	scaleMS = 6 // milliseconds (mooncake, single_turn)
	scaleS  = 9 // seconds (bailian, BurstGPT)
)

// durationNS converts a non-negative JSON number in units of 10^-scale
// seconds (scaleMS, scaleS) to nanoseconds.
func durationNS(field string, v []byte, scale int) (int64, *fieldError) {
	if kind(v) != kindNumber {
		return 0, wrongKind(field, "a number", v)
	}
	ns, neg, _, err := jsonx.ParseDecimal(v, scale)
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
	n, neg, exact, err := jsonx.ParseDecimal(v, 0)
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
		return 0, ferr(field, "%s: %v", v, jsonx.ErrRange)
	}
	return int(n), nil
}

// MaxTokens is the largest token count (input_length, output_length,
// max_tokens, ...) a row may carry: records and stores hold 32-bit counts,
// and no model has a context anywhere near it.
const MaxTokens = math.MaxUint32

// tokens parses a token count: a non-negative integer up to MaxTokens.
func tokens(field string, v []byte) (int, *fieldError) {
	n, fe := count(field, v)
	if fe != nil {
		return 0, fe
	}
	if uint64(n) > MaxTokens {
		return 0, ferr(field, "%s is out of range (at most %d tokens)", v, MaxTokens)
	}
	return n, nil
}

// hashIDs parses a JSON array of unsigned 64-bit integers from its text.
// Elements are digit strings, or numbers whose value is an integer (1.0,
// 1e3: as input_length takes them, and as pydantic's list[int] does):
// negative numbers, fractions and values above 2^64-1 (2^63-1 when
// written with a fraction or exponent) are errors. (v is valid JSON, so
// the leading zeros that jsonx.ParseUint rejects cannot occur.)
func hashIDs(field string, v []byte) ([]uint64, *fieldError) {
	if kind(v) != kindArray {
		return nil, wrongKind(field, "an array of integers", v)
	}
	if ids, ok := plainIDs(v); ok {
		return ids, nil
	}
	ids := make([]uint64, 0, 16)
	var fe *fieldError
	_ = elements(v, func(i int, e []byte, _ int) error {
		id, ok := jsonx.ParseUint(e)
		if !ok {
			if n, fe := integer(field, e); fe == nil && n >= 0 {
				id, ok = uint64(n), true
			}
		}
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

// plainIDs parses an array of plain decimal integers below 2^64 (the
// usual hash_ids: no sign, fraction or exponent) in one pass; ok is false
// for anything else, which hashIDs then reads element by element. v is an
// array of valid JSON.
func plainIDs(v []byte) (ids []uint64, ok bool) {
	ids = make([]uint64, 0, bytes.Count(v, []byte{','})+1)
	i := 1
	ws := func() {
		for i < len(v) && (v[i] == ' ' || v[i] == '\n' || v[i] == '\t' || v[i] == '\r') {
			i++
		}
	}
	ws()
	if i < len(v) && v[i] == ']' {
		return ids, true
	}
	for i < len(v) {
		start := i
		var x uint64
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			d := uint64(v[i] - '0')
			if x > (math.MaxUint64-d)/10 {
				return nil, false
			}
			x = x*10 + d
			i++
		}
		if i == start || i-start > 1 && v[start] == '0' {
			return nil, false
		}
		ids = append(ids, x)
		ws()
		if i >= len(v) {
			return nil, false
		}
		switch v[i] {
		case ',':
			i++
			ws()
		case ']':
			return ids, i == len(v)-1
		default:
			return nil, false
		}
	}
	return nil, false
}
