package rundir

import (
	"errors"
	"io"
	"os"
	"slices"
	"time"

	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
)

// Open returns an opener of results files, one after the other as one
// source, for metrics.Summarize (which reads its source in several
// passes). The source refuses lines that are not replay results: the codec
// ignores unknown fields, so another "v":1 JSONL (aiperf-ingest's records)
// would otherwise read as results of zeros. Every replay result has a send
// time, and every time of it is within [2000, now + a day]
// (result.Record.CheckWindow). The decoder refuses a file that contradicts
// itself (result.Decoder). Files are named in errors by DisplayName.
func Open(files []string) func() (metrics.Source, io.Closer, error) {
	return func() (metrics.Source, io.Closer, error) {
		r := &resultFiles{files: files, latest: time.Now().Add(result.ClockSlack).UnixNano()}
		return r, r, nil
	}
}

// resultFiles reads files in turn.
type resultFiles struct {
	files  []string
	i      int
	f      *os.File
	dec    *result.Decoder
	name   string
	latest int64 // the latest time a record may hold
}

func (r *resultFiles) Next(rec *result.Record) error {
	for {
		if r.dec == nil {
			if r.i >= len(r.files) {
				return io.EOF
			}
			f, err := openResults(r.files[r.i])
			if err != nil {
				return err
			}
			r.f, r.name = f, DisplayName(r.files[r.i])
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
		if err := rec.CheckWindow(result.MinTimeNS, r.latest); err != nil {
			de := err.(*result.DecodeError)
			de.File, de.Line = r.name, r.dec.LineNo()
			return de
		}
		return nil
	}
}

func (r *resultFiles) Close() error {
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}

// each calls fn with every record of files, in order, until fn returns
// false.
func each(files []string, fn func(*result.Record) bool) error {
	src, c, err := Open(files)()
	if err != nil {
		return err
	}
	defer c.Close()
	var r result.Record
	for {
		err := src.Next(&r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !fn(&r) {
			return nil
		}
	}
}

// Summarize computes the exact summary of results files (a few passes over
// them, bounded memory).
func Summarize(files []string, o metrics.Options) (*metrics.Summary, error) {
	return metrics.Summarize(Open(files), o)
}

// Runs returns the run info of each results file: its first record's (nil
// for a file without one, written before results carried it, or empty). A
// file that cannot be read or decoded gives nil here; reading it for the
// summary reports the problem.
func Runs(files []string) []*result.RunInfo {
	runs := make([]*result.RunInfo, len(files))
	for i, name := range files {
		f, err := openResults(name)
		if err != nil {
			continue
		}
		var r result.Record
		if result.NewDecoder(f, name).Next(&r) == nil {
			runs[i] = r.Run
		}
		f.Close()
	}
	return runs
}

// KnownRuns reports whether every file carries run info.
func KnownRuns(runs []*result.RunInfo) bool {
	return len(runs) > 0 && !slices.Contains(runs, nil)
}

// Streaming decides whether files get the streaming metrics: as the run
// did when every file carries run info (StreamingOf), else from the
// answers' shapes (InferStreaming).
func Streaming(files []string, runs []*result.RunInfo) (bool, error) {
	if KnownRuns(runs) {
		return StreamingOf(files, runs)
	}
	return InferStreaming(files)
}

// StreamingOf decides the streaming metrics of files that all carry run
// info as the run did (replay.Stats.StreamingMetrics): they follow what the
// answers were (the results' "streamed"), or with no successful answer,
// what the store's bodies asked for.
func StreamingOf(files []string, runs []*result.RunInfo) (bool, error) {
	streamed, answered := false, false
	err := each(files, func(r *result.Record) bool {
		if r.OK() {
			streamed, answered = r.Streamed, true
		}
		return !streamed
	})
	switch {
	case err != nil:
		return false, err
	case answered:
		return streamed, nil
	}
	return slices.ContainsFunc(runs, func(r *result.RunInfo) bool { return r.Streaming }), nil
}

// InferStreaming reports whether the results look streamed, for files
// written before results carried run info: a successful answer with more
// than one content chunk, or whose first token came before its end. (A
// non-streamed answer is one chunk at its end.)
func InferStreaming(files []string) (bool, error) {
	streamed := false
	err := each(files, func(r *result.Record) bool {
		streamed = r.OK() && (len(r.ChunkOffsetsNS) > 1 || r.FirstTokenNS != 0 && r.FirstTokenNS < r.EndNS)
		return !streamed
	})
	if err != nil {
		return false, err
	}
	return streamed, nil
}

// WarmupAfter counts the warmup requests of files whose answer ended after
// t (ns): the server worked on them after that instant, so counters read
// from a scrape at t include their work.
func WarmupAfter(files []string, t int64) (n int64, err error) {
	err = each(files, func(r *result.Record) bool {
		if r.Warmup() && r.EndNS > t {
			n++
		}
		return true
	})
	return n, err
}
