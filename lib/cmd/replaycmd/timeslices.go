package replaycmd

import (
	"errors"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/urfave/cli/v2"
)

// Time slices (--slice-duration), in the Python aiperf's file names.
const (
	timeslicesJSONFile = "profile_export_aiperf_timeslices.json"
	timeslicesCSVFile  = "profile_export_aiperf_timeslices.csv"
)

func sliceDurationFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "slice-duration", Usage: "also write the statistics of every metric per window of `D` (10s, 500ms), requests placed by their start, into " +
		timeslicesJSONFile + " and .csv", Destination: dst}
}

// parseSliceDuration reads --slice-duration ("" unless set). A bare number
// is refused: aiperf's flag counts seconds and this tool's plain numbers
// are milliseconds, so either reading would surprise someone.
func parseSliceDuration(c *cli.Context, s string) (time.Duration, error) {
	if !c.IsSet("slice-duration") {
		return 0, nil
	}
	if _, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		return 0, base.UsageError("--slice-duration %s: give the unit (%ss, %sms): aiperf's --slice-duration counts seconds, this tool's bare numbers milliseconds", s, s, s)
	}
	d, err := duration("--slice-duration", s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, base.UsageError("--slice-duration %q: want a duration above 0", s)
	}
	return d, nil
}

// checkTimeslicesDest checks, before a run sends anything, that the
// time-slice files can be written into dir.
func checkTimeslicesDest(dir string) error {
	for _, name := range []string{timeslicesJSONFile, timeslicesCSVFile} {
		if _, err := atomicfile.Destination(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// summarizeSlices summarizes the results files per window of d; nil when
// d is 0 (no --slice-duration). It runs before any export is written, so a
// refusal leaves none behind.
func summarizeSlices(files []string, mo metrics.Options, d time.Duration) (*metrics.Slices, error) {
	if d <= 0 {
		return nil, nil
	}
	s, err := metrics.SummarizeSlices(openResults(files), mo, d)
	if err != nil {
		var de *result.DecodeError
		if errors.As(err, &de) {
			return nil, &base.Error{Code: base.ExitTrouble, Err: err}
		}
		if errors.Is(err, metrics.ErrTooManySlices) {
			return nil, base.UsageError("--slice-duration %v: %v", d, err)
		}
		return nil, err
	}
	return s, nil
}

// writeTimeslices writes the two time-slice files of s into dir, each
// atomically; nothing when s is nil.
func writeTimeslices(dir string, s *metrics.Slices, run metrics.Run) error {
	if s == nil {
		return nil
	}
	write := func(name string, fn func(io.Writer) error) error {
		return atomicfile.Write(filepath.Join(dir, name), fn)
	}
	if err := write(timeslicesJSONFile, func(w io.Writer) error { return metrics.WriteTimeslicesJSON(w, s, run) }); err != nil {
		return err
	}
	return write(timeslicesCSVFile, func(w io.Writer) error { return metrics.WriteTimeslicesCSV(w, s) })
}
