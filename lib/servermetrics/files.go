package servermetrics

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
)

// LoadFile rebuilds the scraped series from the JSONL stream at path
// (LoadJSONL). A last line cut short (a scraper killed mid-write) is left
// out with a warning; a missing file is an error that wraps
// os.ErrNotExist, any other bad line a *LineError.
func LoadFile(path string) (c *Collector, warnings []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	c, cut, err := LoadJSONL(f, path, DefaultLimits)
	if err != nil {
		return nil, nil, err
	}
	if cut > 0 {
		warnings = append(warnings, fmt.Sprintf("server metrics: %s: the last line is cut short (the scraper stopped mid-write); left out", path))
	}
	return c, warnings, nil
}

// WriteExports writes the JSON and CSV exports of c over window w into
// dir, each atomically, and returns the report.
func WriteExports(dir string, c *Collector, w Window, meta Meta) (*Report, error) {
	rep := c.Report(w)
	for _, x := range []struct {
		name string
		fn   func(io.Writer, *Report, Meta) error
	}{{JSONFile, WriteJSON}, {CSVFile, WriteCSV}} {
		if err := atomicfile.Write(filepath.Join(dir, x.name), func(w io.Writer) error { return x.fn(w, rep, meta) }); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// Rebuilt is the server side of runs rebuilt from their directories.
type Rebuilt struct {
	// Report is nil when no directory held a JSONL stream.
	Report *Report
	// Notes say which shard's scrapes a target shared by several came
	// from; Warnings, the last lines cut short.
	Notes, Warnings []string
}

// Rebuild reads the JSONL streams of the run directories dirs (a directory
// without one brings nothing), joins shards' scrapes by target
// (MergeLoaded: the shard covering w best) and reports window w; with out, it writes the JSON and
// CSV exports there too. A stream that cannot be read is an error naming
// its line (*LineError).
func Rebuild(dirs []string, out string, w Window, meta Meta) (*Rebuilt, error) {
	r := &Rebuilt{}
	var names []string
	var cs []*Collector
	for _, d := range dirs {
		c, warns, err := LoadFile(filepath.Join(d, JSONLFile))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		r.Warnings = append(r.Warnings, warns...)
		names, cs = append(names, d), append(cs, c)
	}
	if len(cs) == 0 {
		return r, nil
	}
	c, notes := MergeLoaded(names, cs, w)
	r.Notes = notes
	if out == "" {
		r.Report = c.Report(w)
		return r, nil
	}
	if err := os.MkdirAll(out, 0o777); err != nil {
		return nil, err
	}
	rep, err := WriteExports(out, c, w, meta)
	if err != nil {
		return nil, err
	}
	r.Report = rep
	return r, nil
}
