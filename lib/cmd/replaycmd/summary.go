package replaycmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
)

// Output files, in the Python aiperf's names and shapes.
const (
	recordsFile      = "records.jsonl"
	exportJSONFile   = "profile_export_aiperf.json"
	exportCSVFile    = "profile_export_aiperf.csv"
	exportRecordFile = "profile_export.jsonl"
)

func parseGoodput(s string) (metrics.Goodput, error) {
	if s == "" {
		return nil, nil
	}
	return metrics.ParseGoodput(s)
}

// summarize computes the exact summary of records files (a few passes over
// them, bounded memory).
func summarize(files []string, o metrics.Options) (*metrics.Summary, error) {
	return summarizeOpen(openRecords(files), o)
}

func summarizeOpen(open func() (metrics.Source, io.Closer, error), o metrics.Options) (*metrics.Summary, error) {
	s, err := metrics.Summarize(open, o)
	if err != nil {
		var de *result.DecodeError
		if errors.As(err, &de) {
			return nil, &base.Error{Code: base.ExitTrouble, Err: err}
		}
		return nil, err
	}
	return s, nil
}

// inferStreaming reports whether the records look streamed: a successful
// answer with more than one content chunk, or whose first token came
// before its end. (A non-streamed answer is one chunk at its end.)
func inferStreaming(files []string) (bool, error) {
	src, c, err := openRecords(files)()
	if err != nil {
		return false, err
	}
	defer c.Close()
	var r result.Record
	for {
		err := src.Next(&r)
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, &base.Error{Code: base.ExitTrouble, Err: err}
		}
		if r.OK() && (len(r.ChunkOffsetsNS) > 1 || r.FirstTokenNS != 0 && r.FirstTokenNS < r.EndNS) {
			return true, nil
		}
	}
}

// writeOutputs writes the export files into dir, each atomically:
// profile_export_aiperf.json and .csv from the summary, and
// profile_export.jsonl from the records (one more pass).
func writeOutputs(dir string, s *metrics.Summary, o metrics.Options, run metrics.Run, files []string) error {
	write := func(name string, fn func(io.Writer) error) error {
		f, err := atomicfile.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		defer f.Abort()
		if err := fn(f); err != nil {
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
		return f.Commit()
	}
	if err := write(exportJSONFile, func(w io.Writer) error { return metrics.WriteJSON(w, s, run) }); err != nil {
		return err
	}
	if err := write(exportCSVFile, func(w io.Writer) error { return metrics.WriteCSV(w, s) }); err != nil {
		return err
	}
	return write(exportRecordFile, func(w io.Writer) error {
		rw, err := metrics.NewRecordWriter(w, o)
		if err != nil {
			return err
		}
		src, c, err := openRecords(files)()
		if err != nil {
			return err
		}
		defer c.Close()
		var r result.Record
		for {
			err := src.Next(&r)
			if err == io.EOF {
				return rw.Flush()
			}
			if err != nil {
				return err
			}
			if err := rw.Write(&r); err != nil {
				return err
			}
		}
	})
}

// inputConfig describes the run for profile_export_aiperf.json. It names
// the variable that held the API key, never the key.
func (o *options) inputConfig(storePath string, schedule string) json.RawMessage {
	cfg := map[string]any{
		"tool":          "aiperf-replay",
		"store":         storePath,
		"url":           o.url,
		"endpoint":      o.endpoint,
		"path":          o.path,
		"schedule":      schedule,
		"concurrency":   o.concurrency,
		"rate":          o.rate,
		"arrival":       o.arrival,
		"smoothness":    o.smoothness,
		"speedup":       o.speedup,
		"start_offset":  o.startOffset,
		"end_offset":    o.endOffset,
		"request_count": o.requestCount,
		"warmup":        o.warmup,
		"duration":      o.duration,
		"grace":         o.grace,
		"cancel_rate":   o.cancelRate,
		"cancel_after":  o.cancelAfter,
		"timeout":       o.timeout,
		"max_response":  o.maxResponse,
		"history":       o.history,
		"seed":          o.seed,
		"per_shard":     o.perShard, // the shard itself is the run info's identity, not a setting
		"start_at":      o.startAt,
		"tokenizer":     o.tokenizer,
		"goodput":       o.goodput,
		"api_key_env":   o.apiKeyEnv,
		"header_names":  headerNames(o.headers.Value()),
		// The exports' input_config (aiperfInputConfig) names these as
		// aiperf does (output.artifact_directory, output.slice_duration).
		"output":         o.out,
		"slice_duration": o.sliceDuration,
	}
	if o.stopOnSaturation {
		cfg["stop_on_saturation"] = o.saturationWindow
	}
	o.conn.config(cfg)
	b, _ := json.Marshal(cfg)
	return b
}

// headerNames lists the names of the extra headers (their values may be
// secrets).
func headerNames(hs []string) []string {
	var out []string
	for _, h := range hs {
		k, _, _ := cutHeader(h)
		out = append(out, k)
	}
	return out
}

// stdinName names the records read from stdin ("-") in messages.
const stdinName = "<stdin>"

// spooled maps the temporary files that hold stdin to stdinName.
var spooled sync.Map

// spoolStdin returns args with a "-" replaced by a temporary file holding
// all of r: the summary reads its records in several passes, and a pipe can
// be read once. cleanup removes the file.
func spoolStdin(r io.Reader, args []string) (files []string, cleanup func(), err error) {
	cleanup = func() {}
	files = append([]string(nil), args...)
	if i := slices.Index(files, "-"); i >= 0 && slices.Index(files[i+1:], "-") >= 0 {
		return nil, cleanup, base.UsageError("- is given twice: stdin can be read only once")
	}
	for i, a := range files {
		if a != "-" {
			continue
		}
		f, err := os.CreateTemp("", "aiperf-report-stdin-*.jsonl")
		if err != nil {
			return nil, cleanup, &base.Error{Code: base.ExitTrouble, Err: err}
		}
		name := f.Name()
		cleanup = func() { spooled.Delete(name); os.Remove(name) }
		_, err = io.Copy(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			cleanup()
			return nil, func() {}, &base.Error{Code: base.ExitTrouble, Err: fmt.Errorf("read %s: %w", stdinName, err)}
		}
		spooled.Store(name, stdinName)
		files[i] = name
	}
	return files, cleanup, nil
}

// displayName is how a records file is named in messages.
func displayName(path string) string {
	if n, ok := spooled.Load(path); ok {
		return n.(string)
	}
	return path
}

// displayNames joins the display names of files.
func displayNames(files []string) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = displayName(f)
	}
	return strings.Join(names, ", ")
}

// openRecords opens records files one after the other as one source for
// metrics.Summarize. It refuses lines that are not replay records: the
// codec ignores unknown fields, so another "v":1 JSONL (aiperf-tokenize's
// records) would otherwise read as records of zeros. Every replay record
// has a send time.
func openRecords(files []string) func() (metrics.Source, io.Closer, error) {
	return func() (metrics.Source, io.Closer, error) {
		r := &recordFiles{files: files}
		return r, r, nil
	}
}

type recordFiles struct {
	files []string
	i     int
	f     *os.File
	dec   *result.Decoder
	name  string
}

func (r *recordFiles) Next(rec *result.Record) error {
	for {
		if r.dec == nil {
			if r.i >= len(r.files) {
				return io.EOF
			}
			f, err := os.Open(r.files[r.i])
			if err != nil {
				return err
			}
			r.f, r.name = f, displayName(r.files[r.i])
			r.dec = result.NewDecoder(f, r.name)
			r.i++
		}
		err := r.dec.Next(rec)
		if err == io.EOF {
			r.f.Close()
			r.f, r.dec = nil, nil
			continue
		}
		if err != nil {
			return err
		}
		if rec.SentNS == 0 {
			return &result.DecodeError{File: r.name, Line: r.dec.LineNo(), Field: "sent_unix_ns", Err: errors.New("missing: not a replay records file")}
		}
		return nil
	}
}

func (r *recordFiles) Close() error {
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}
