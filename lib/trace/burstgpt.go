package trace

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// burstDecoder streams a BurstGPT CSV: every data row is a single-turn
// session with a timestamp in seconds and token counts.
type burstDecoder struct {
	name    string
	cr      *csv.Reader
	filt    *filter
	header  []string
	col     [3]int // indexes of Timestamp, Request tokens, Response tokens
	seq     int64
	skipped int
}

func newBurstDecoder(r io.Reader, name string, filt *filter) (*burstDecoder, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // Python's DictReader accepts ragged rows
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	d := &burstDecoder{name: name, cr: cr, filt: filt}
	header, err := cr.Read()
	if err != nil && err != io.EOF {
		return nil, d.csvError(err)
	}
	header = slices.Clone(header) // cr reuses its record
	d.header = header
	if err := d.checkUTF8(header, true); err != nil {
		return nil, err
	}
	var missing []string
	for i, c := range burstColumns {
		d.col[i] = -1
		for j, h := range header {
			if h == c {
				d.col[i] = j // the last duplicate wins, as in DictReader
			}
		}
		if d.col[i] < 0 {
			missing = append(missing, strconv.Quote(c))
		}
	}
	if len(missing) > 0 {
		return nil, &Error{File: name, Line: 1, Field: "header",
			Err: fmt.Errorf("missing required columns %s", strings.Join(missing, ", "))}
	}
	return d, nil
}

func (d *burstDecoder) csvError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{File: d.name, Line: int64(pe.StartLine), Err: fmt.Errorf("bad CSV: %v", pe.Err)}
	}
	return &Error{File: d.name, Err: err}
}

func (d *burstDecoder) next() (*Row, error) {
	for {
		rec, err := d.cr.Read()
		if err == io.EOF {
			return nil, io.EOF
		}
		if err != nil {
			return nil, d.csvError(err)
		}
		line, _ := d.cr.FieldPos(0)
		if err := d.checkUTF8(rec, false); err != nil {
			return nil, err
		}
		seq := d.seq
		d.seq++
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			d.seq-- // a blank line is not a row
			continue
		}
		row, ok, fe := d.parse(rec)
		if fe != nil {
			return nil, at(d.name, int64(line), fe)
		}
		if !ok {
			d.skipped++
			continue
		}
		row.Source, row.Line, row.Seq = d.name, int64(line), seq
		if d.filt.keep(row) {
			return row, nil
		}
	}
}

// checkUTF8 refuses a CSV record with a cell that is not valid UTF-8 (as
// Python's csv module, reading the file as UTF-8 text, does), naming the
// cell by its column's header (by number in the header itself).
func (d *burstDecoder) checkUTF8(rec []string, isHeader bool) error {
	for i, c := range rec {
		if utf8.ValidString(c) {
			continue
		}
		line, _ := d.cr.FieldPos(i)
		field := fmt.Sprintf("column %d", i+1)
		if !isHeader && i < len(d.header) {
			field = strconv.Quote(d.header[i])
		}
		bad := 0
		for r, size := utf8.DecodeRuneInString(c); r != utf8.RuneError || size != 1; r, size = utf8.DecodeRuneInString(c[bad:]) {
			bad += size
		}
		return &Error{File: d.name, Line: int64(line), Field: field,
			Err: fmt.Errorf("invalid UTF-8 (byte 0x%02x)", c[bad])}
	}
	return nil
}

// parse reads the three required cells; ok is false when one is missing or
// not a number, and such rows are skipped like aiperf does. A number out of
// range is an error naming its column.
func (d *burstDecoder) parse(rec []string) (row *Row, ok bool, fe *fieldError) {
	cell := func(i int) (string, bool) {
		if d.col[i] >= len(rec) {
			return "", false
		}
		return strings.TrimSpace(rec[d.col[i]]), true
	}
	ts, ok1 := cell(0)
	in, ok2 := cell(1)
	out, ok3 := cell(2)
	if !ok1 || !ok2 || !ok3 {
		return nil, false, nil
	}
	ns, neg, _, err := jsonx.ParseDecimal(ts, scaleS)
	if err == jsonx.ErrRange {
		return nil, false, ferr(strconv.Quote(burstColumns[0]), "%s s is out of range (at most %d ns)", ts, int64(math.MaxInt64))
	}
	if err != nil || neg && ns != 0 {
		return nil, false, nil
	}
	row = &Row{HasTimestamp: true, TimestampNS: ns, HasOutputLength: true}
	for i, dst := range []*int{&row.InputLength, &row.OutputLength} {
		v := in
		if i == 1 {
			v = out
		}
		n, isNum := csvInt(v)
		if !isNum {
			return nil, false, nil
		}
		if n > MaxTokens {
			return nil, false, ferr(strconv.Quote(burstColumns[i+1]), "%s is out of range (at most %d tokens)", v, MaxTokens)
		}
		*dst = int(n)
	}
	return row, true, nil
}

// csvInt parses a non-negative integer cell the way Python's int() does
// for plain digits (an optional '+', leading zeros allowed). A number too
// large for a uint64 is returned as math.MaxUint64.
func csvInt(s string) (uint64, bool) {
	s = strings.TrimPrefix(s, "+")
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return math.MaxUint64, true // only digits: the error is the range
	}
	return n, true
}
