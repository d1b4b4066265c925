package trace

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// sagemakerDecoder reads SageMaker Data Capture records from one stream or
// from a list of files, then zero-aligns the timestamps (the earliest
// becomes 0), applies the filters and returns the rows sorted by time (ties
// in input order).
type sagemakerDecoder struct {
	paths      []string    // files, in sorted order
	read       *int64      // counts the bytes read from paths
	stream     *lineReader // or a single stream
	streamName string
	maxLine    int
	filt       *filter
}

func (d *sagemakerDecoder) load() ([]*Row, error) {
	var all []*Row
	var seq int64
	read := func(name string, lr *lineReader) error {
		for {
			rec, line, err := lr.Record()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return ioError(name, line, err)
			}
			row, err := parseSageMaker(rec)
			if err != nil {
				return at(name, line, err)
			}
			row.Source, row.Line, row.Seq = name, line, seq
			seq++
			all = append(all, row)
		}
	}
	if d.stream != nil {
		if err := read(d.streamName, d.stream); err != nil {
			return nil, err
		}
	}
	for _, p := range d.paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		err = read(p, newLineReader(counter{f, d.read}, d.maxLine))
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	earliest := all[0]
	for _, r := range all {
		if r.TimestampNS < earliest.TimestampNS {
			earliest = r
		}
	}
	first := earliest.TimestampNS
	kept := all[:0]
	for _, r := range all {
		if r.TimestampNS-first < 0 { // wrapped: more than 292 years apart
			return nil, &Error{File: r.Source, Line: r.Line, Field: "eventMetadata.inferenceTime",
				Err: fmt.Errorf("more than %d years after the earliest capture (%s:%d), which nanosecond offsets cannot span",
					int64(math.MaxInt64)/int64(365.2425*24*float64(time.Hour)), earliest.Source, earliest.Line)}
		}
		r.TimestampNS -= first
		if d.filt.keep(r) {
			kept = append(kept, r)
		}
	}
	slices.SortStableFunc(kept, func(a, b *Row) int { return cmp.Compare(a.TimestampNS, b.TimestampNS) })
	return kept, nil
}

// parseSageMaker extracts one capture record: inferenceTime, the request's
// messages, tools and max tokens, and the response's prompt_tokens.
func parseSageMaker(rec []byte) (*Row, error) {
	if err := checkObject(rec); err != nil {
		return nil, err
	}
	meta := member(rec, "eventMetadata")
	capture := member(rec, "captureData")
	eventID := "<unknown>"
	if kind(meta) == kindObject {
		if id := member(meta, "eventId"); kind(id) == kindString {
			eventID, _ = stringValue("", id)
		}
	}
	fail := func(field, format string, args ...any) error {
		return ferr(field, "capture record %s: %s", eventID, fmt.Sprintf(format, args...))
	}
	if kind(meta) != kindObject {
		return nil, fail("eventMetadata", "missing or not an object")
	}
	when := member(meta, "inferenceTime")
	if when == nil {
		return nil, fail("eventMetadata.inferenceTime", "missing required field")
	}
	s, fe := stringValue("eventMetadata.inferenceTime", when)
	if fe != nil {
		return nil, fe
	}
	t, err := parseISO8601(s)
	if err != nil {
		return nil, fail("eventMetadata.inferenceTime", "%v", err)
	}
	if t.Before(minTime) || t.After(maxTime) {
		return nil, fail("eventMetadata.inferenceTime", "%q is out of range (nanosecond times span %s to %s)", s,
			minTime.Format(time.RFC3339Nano), maxTime.Format(time.RFC3339Nano))
	}
	if kind(capture) != kindObject {
		return nil, fail("captureData", "missing or not an object")
	}
	input := member(capture, "endpointInput")
	if kind(input) != kindObject {
		return nil, fail("captureData.endpointInput", "missing or not an object")
	}
	body, err := decodeCapture(input)
	if err != nil {
		return nil, fail("captureData.endpointInput.data", "%v", err)
	}
	if kind(body) != kindObject || member(body, "messages") == nil {
		return nil, fail("captureData.endpointInput", "no \"messages\" key in the payload; only OpenAI-compatible chat endpoints are supported")
	}

	row := &Row{HasTimestamp: true, TimestampNS: t.UnixNano()}
	messages := member(body, "messages")
	if fe := validateMessages("messages", messages); fe != nil {
		return nil, fail("captureData.endpointInput.data."+fe.field, "%s", fe.msg)
	}
	row.Messages = compactCopy(messages)
	if tools := member(body, "tools"); !isNull(tools) {
		if _, fe := objectList("tools", tools); fe != nil {
			return nil, fail("captureData.endpointInput.data."+fe.field, "%s", fe.msg)
		}
		row.Tools = compactCopy(tools)
	}
	maxTokens := member(body, "max_tokens")
	field := "max_tokens"
	if isNull(maxTokens) {
		maxTokens, field = member(body, "max_completion_tokens"), "max_completion_tokens"
	}
	if !isNull(maxTokens) {
		n, fe := tokens(field, maxTokens)
		if fe != nil {
			return nil, fail("captureData.endpointInput.data."+fe.field, "%s", fe.msg)
		}
		row.OutputLength, row.HasOutputLength = n, true
	}

	if output := member(capture, "endpointOutput"); kind(output) == kindObject {
		resp, err := decodeCapture(output)
		if err != nil {
			return nil, fail("captureData.endpointOutput.data", "%v", err)
		}
		if kind(resp) == kindObject {
			if usage := member(resp, "usage"); kind(usage) == kindObject {
				if pt := member(usage, "prompt_tokens"); !isNull(pt) {
					n, fe := tokens("prompt_tokens", pt)
					if fe != nil {
						return nil, fail("captureData.endpointOutput.data.usage."+fe.field, "%s", fe.msg)
					}
					row.InputLength = n
				}
			}
		}
	}
	return row, nil
}

// decodeCapture returns the JSON text of a captureData entry: "data" as is
// for encoding JSON, base64-decoded for BASE64 (the default). Other
// encodings (CSV) and a missing "data" give nil, as aiperf ignores them.
func decodeCapture(entry []byte) ([]byte, error) {
	data := member(entry, "data")
	if isNull(data) {
		return nil, nil
	}
	encoding := "BASE64"
	if e := member(entry, "encoding"); !isNull(e) {
		s, fe := stringValue("encoding", e)
		if fe != nil {
			return nil, fe
		}
		encoding = s
	}
	if encoding != "JSON" && encoding != "BASE64" {
		return nil, nil
	}
	text, fe := stringValue("data", data)
	if fe != nil {
		return nil, errors.New("must be a string")
	}
	raw := []byte(text)
	if encoding == "BASE64" {
		dec, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return nil, fmt.Errorf("bad base64: %v", err)
		}
		raw = dec
	}
	raw = trimJSONSpace(raw)
	if fe, _ := checkText(raw); fe != nil {
		if fe.field != "" {
			return nil, fmt.Errorf("the decoded body at %s: %s", fe.field, fe.msg)
		}
		return nil, fmt.Errorf("the decoded body: %s", fe.msg)
	}
	return raw, nil
}

func trimJSONSpace(b []byte) []byte {
	return bytes.TrimRight(b[jsonx.SkipSpace(b, 0):], " \t\n\r")
}

// iso8601Layouts are the forms of inferenceTime accepted, a subset of
// Python's datetime.fromisoformat. Fractional seconds of any length are
// accepted after the seconds by time.Parse. Times without a zone are UTC.
var iso8601Layouts = []string{
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05Z07",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
}

// The times whose Unix nanoseconds fit an int64 (1677-09-21 to 2262-04-11).
var (
	minTime = time.Unix(0, math.MinInt64).UTC()
	maxTime = time.Unix(0, math.MaxInt64).UTC()
)

func parseISO8601(s string) (time.Time, error) {
	for _, layout := range iso8601Layouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not an ISO 8601 time: %q", s)
}
