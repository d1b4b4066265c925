package trace

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// TestTokenCountRange: token counts wider than the 32 bits records carry are
// an error naming the field, in every format (they used to wrap downstream:
// an output_length of 2^32 became max_tokens 0).
func TestTokenCountRange(t *testing.T) {
	t.Parallel()
	const big = "4294967296"
	sm := func(req string) string {
		return `{"captureData": {"endpointInput": {"data": ` + strconv.Quote(req) + `, "encoding": "JSON"}}, "eventMetadata": {"eventId": "e", "inferenceTime": "2026-01-01T00:00:00Z"}}`
	}
	tests := []struct {
		name, typ, input, field string
		line                    int64
	}{
		{"mooncake output_length", TypeMooncake, `{"input_length": 5, "output_length": ` + big + `}`, "output_length", 1},
		{"mooncake input_length", TypeMooncake, `{"input_length": 1e10}`, "input_length", 1},
		{"bailian output_length", TypeBailian, `{"chat_id": 1, "timestamp": 1, "input_length": 1, "output_length": ` + big + `}`, "output_length", 1},
		{"bailian input_length", TypeBailian, `{"chat_id": 1, "timestamp": 1, "input_length": 18446744073709551616, "output_length": 1}`, "input_length", 1},
		{"single_turn output_length", TypeSingleTurn, `{"text": "x", "output_length": ` + big + `}`, "output_length", 1},
		{"multi_turn output_length", TypeMultiTurn, `{"turns": [{"text": "x", "output_length": ` + big + `}]}`, "turns[0].output_length", 1},
		{"sagemaker max_tokens", TypeSageMaker, sm(`{"messages": [{"role": "user", "content": "x"}], "max_tokens": ` + big + `}`), "captureData.endpointInput.data.max_tokens", 1},
		{"sagemaker prompt_tokens", TypeSageMaker, strings.Replace(sm(`{"messages": [{"role": "user", "content": "x"}]}`), `"encoding": "JSON"}`,
			`"encoding": "JSON"}, "endpointOutput": {"data": "{\"usage\": {\"prompt_tokens\": `+big+`}}", "encoding": "JSON"}`, 1), "captureData.endpointOutput.data.usage.prompt_tokens", 1},
		{"burst response tokens", TypeBurstGPT, "Timestamp,Request tokens,Response tokens\n1,2,3\n2,5," + big + "\n", `"Response tokens"`, 3},
		{"burst request tokens", TypeBurstGPT, "Timestamp,Request tokens,Response tokens\n1,99999999999999999999999,3\n", `"Request tokens"`, 2},
		{"burst timestamp", TypeBurstGPT, "Timestamp,Request tokens,Response tokens\n1e30,1,3\n", `"Timestamp"`, 2},
	}
	for _, tt := range tests {
		_, _, err := readString("n.jsonl", tt.input, Options{Type: tt.typ})
		checkError(t, tt.name, err, "n.jsonl", tt.line, tt.field, "out of range")
	}
	rows := mustRead(t, "n.jsonl", `{"input_length": 4294967295, "output_length": 4294967295}`, Options{Type: TypeMooncake})
	if rows[0].InputLength != MaxTokens || rows[0].OutputLength != MaxTokens {
		t.Errorf("the largest counts: %s", fmtRow(rows[0]))
	}
}

// TestPlainIDs: the one-pass reading of plain hash_ids agrees with the
// element by element one, and leaves anything else to it.
func TestPlainIDs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []uint64
		ok   bool
	}{
		{`[]`, []uint64{}, true},
		{`[ ]`, []uint64{}, true},
		{`[1,2, 3 ,18446744073709551615]`, []uint64{1, 2, 3, 18446744073709551615}, true},
		{`[0]`, []uint64{0}, true},
		{`[18446744073709551616]`, nil, false},
		{`[1.0]`, nil, false},
		{`[1e3]`, nil, false},
		{`[-1]`, nil, false},
		{`["1"]`, nil, false},
	} {
		got, ok := plainIDs([]byte(c.in))
		if ok != c.ok || ok && fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("plainIDs(%s) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
		if slow, fe := hashIDs("h", []byte(c.in)); c.ok && (fe != nil || fmt.Sprint(slow) != fmt.Sprint(c.want)) {
			t.Errorf("hashIDs(%s) = %v, %v", c.in, slow, fe)
		}
	}
}
