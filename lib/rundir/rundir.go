// Package rundir reads what a run of aiperf-replay leaves behind: its
// directory (-o DIR) and the per-request results file in it, the exports
// beside it, the trial-K folders of --trials, the shards of a sharded
// replay, and stdin spooled for the several passes of a summary.
//
// Readers find a run's results file through Results (and writers name it
// with ResultsPath), so the file's name is known here only.
package rundir

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ResultsFile is the name of a run's per-request results (JSONL, one
// lib/result record a line) in its directory.
const ResultsFile = "results.jsonl"

// LegacyResultsFile is the name runs gave their results before they were
// called results.jsonl: it read like aiperf-tokenize's records.jsonl (one
// lib/record line a request to pack, another format), and a run's -o DIR
// holding the tokenized records replaced them. A directory without a
// results.jsonl is still read through it.
const LegacyResultsFile = "records.jsonl"

// TrialPrefix names the run directories of --trials N -o DIR: DIR/trial-1,
// DIR/trial-2, ...
const TrialPrefix = "trial-"

// ResultsPath is where a run writing into dir puts its results.
func ResultsPath(dir string) string {
	return filepath.Join(dir, ResultsFile)
}

// Results locates the results file of the run whose directory is dir; ok
// is false when dir holds none.
func Results(dir string) (path string, ok bool) {
	for _, name := range []string{ResultsFile, LegacyResultsFile} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// TrialDir is the directory of trial k (from 1) of a --trials run into dir.
func TrialDir(dir string, k int) string {
	return filepath.Join(dir, TrialPrefix+strconv.Itoa(k))
}

// Resolve replaces each argument that is a run directory by its results
// file; "-" (stdin) and files are kept. A directory without results is an
// error.
func Resolve(args []string) ([]string, error) {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == "-" {
			continue
		}
		if fi, err := os.Stat(a); err == nil && fi.IsDir() {
			p, ok := Results(a)
			if !ok {
				return nil, fmt.Errorf("%s is a folder without a %s (a run's -o DIR holds one)", a, ResultsFile)
			}
			out[i] = p
		}
	}
	return out, nil
}

// Expand expands one argument into results files: a file is itself, a
// run directory its results, a trials directory (--trials N -o DIR) the
// results of its trials: those its trials.json lists (trial_dirs), else
// its trial-K folders in K's order. (A folder reused by a run of fewer
// trials keeps the earlier run's later trial-K folders, which are not
// this run's.)
func Expand(arg string) ([]string, error) {
	files, _, err := expand(arg)
	return files, err
}

// expand is Expand, and it says what of a trials folder it leaves out or
// doubts: trial-K folders its trials.json does not list, and trial
// folders that are links (a --trials run makes its own).
func expand(arg string) (files, warnings []string, err error) {
	fi, err := os.Stat(arg)
	if err != nil {
		return nil, nil, err
	}
	if !fi.IsDir() {
		return []string{arg}, nil, nil
	}
	if p, ok := Results(arg); ok {
		return []string{p}, nil, nil
	}
	trials, err := listedTrials(arg)
	if trials == nil && err == nil {
		trials, err = TrialDirs(arg)
	} else if err == nil {
		warnings = unlistedTrials(arg, trials)
	}
	if err != nil {
		return nil, nil, err
	}
	if len(trials) == 0 {
		return nil, nil, fmt.Errorf("%s is a folder with neither a %s (a run's -o DIR) nor trial-K/ folders (--trials N -o DIR)", arg, ResultsFile)
	}
	for _, d := range trials {
		p, ok := Results(d)
		if !ok {
			return nil, nil, fmt.Errorf("%s has no %s: an unfinished trial?", d, ResultsFile)
		}
		if li, err := os.Lstat(d); err == nil && li.Mode()&fs.ModeSymlink != 0 {
			to, _ := os.Readlink(d)
			warnings = append(warnings, fmt.Sprintf("%s is a link (to %s), not a trial folder a --trials run made", d, to))
		}
		files = append(files, p)
	}
	return files, warnings, nil
}

// TrialNumber returns K of a trial folder's name, trial-K (K from 1, as
// TrialDir writes it: trial-01 is no trial folder, or a copy of trial-1
// would count as a second trial 1).
func TrialNumber(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, TrialPrefix)
	k, err := strconv.Atoi(rest)
	return k, ok && err == nil && k > 0 && strconv.Itoa(k) == rest
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// TrialDirs lists dir's trial-K folders (K from 1) in K's order.
func TrialDirs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type trial struct {
		k    int
		path string
	}
	var ts []trial
	for _, e := range ents {
		if k, ok := TrialNumber(e.Name()); ok && isDir(filepath.Join(dir, e.Name())) {
			ts = append(ts, trial{k, filepath.Join(dir, e.Name())})
		}
	}
	slices.SortFunc(ts, func(a, b trial) int { return a.k - b.k })
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.path
	}
	return out, nil
}
