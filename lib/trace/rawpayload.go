package trace

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// rawPayloadDecoder streams a raw_payload file: every line is one complete
// request body and one single-turn session.
type rawPayloadDecoder struct {
	name string
	lr   *lineReader
	seq  int64
}

func (d *rawPayloadDecoder) next() (*Row, error) {
	rec, line, err := d.lr.Record()
	if err != nil {
		return nil, ioError(d.name, line, err)
	}
	if err := checkObject(rec); err != nil {
		return nil, at(d.name, line, err)
	}
	row := &Row{Source: d.name, Line: line, Seq: d.seq, Payload: d.lr.Take(rec)}
	d.seq++
	return row, nil
}

// rawPayloadDirDecoder streams a raw_payload directory: each *.jsonl file,
// in sorted order, is one multi-turn session, one body per line. The
// session id is the file name without ".jsonl" (aiperf generates a fresh
// id per file; the name keeps ours deterministic).
type rawPayloadDirDecoder struct {
	files   []string
	maxLine int
	read    *int64 // counts the bytes read
	f       *os.File
	lr      *lineReader
	name    string
	turn    int
	seq     int64
}

func (d *rawPayloadDirDecoder) next() (*Row, error) {
	for {
		if d.lr == nil {
			if len(d.files) == 0 {
				return nil, io.EOF
			}
			d.name, d.files = d.files[0], d.files[1:]
			f, err := os.Open(d.name)
			if err != nil {
				return nil, err
			}
			d.f, d.lr, d.turn = f, newLineReader(counter{f, d.read}, d.maxLine), 0
		}
		rec, line, err := d.lr.Record()
		if err == io.EOF {
			d.Close()
			continue
		}
		if err != nil {
			return nil, ioError(d.name, line, err)
		}
		if err := checkObject(rec); err != nil {
			return nil, at(d.name, line, err)
		}
		row := &Row{
			Source: d.name, Line: line, Seq: d.seq,
			SessionID:        strings.TrimSuffix(filepath.Base(d.name), ".jsonl"),
			SessionGenerated: true,
			Turn:             d.turn,
			Payload:          d.lr.Take(rec),
		}
		d.seq++
		d.turn++
		return row, nil
	}
}

// Close closes the file being read.
func (d *rawPayloadDirDecoder) Close() error {
	var err error
	if d.f != nil {
		err = d.f.Close()
	}
	d.f, d.lr = nil, nil
	return err
}
