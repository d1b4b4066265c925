package rundir

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/aiperf/toolkit/lib/compare"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
)

// CompareRequestMetrics are the per-request metrics a comparison of runs
// shows (p50, p99, avg), and CompareRunMetrics the run-level figures (the
// trials' mean); a metric neither side has is left out.
var (
	CompareRequestMetrics = []string{
		"time_to_first_token", "time_to_second_token", "inter_token_latency", "request_latency",
		"output_token_throughput_per_user", "output_sequence_length", "input_sequence_length",
	}
	CompareRunMetrics = []string{"request_throughput", "output_token_throughput", "goodput"}
)

// OutputSettings are the settings of a run that say where and how its
// files were written, not what was measured: runs that differ only in them
// are alike (shards, trials, the two sides of a comparison).
var OutputSettings = []string{"output", "slice_duration"}

// Side is one side of a comparison of runs: its trials' results files and
// their run info (nil for a file without).
type Side struct {
	Name   string // "old" or "new"
	Trials []string
	Runs   []*result.RunInfo
	// Warnings say what the side's trials folders left out or hold that
	// a --trials run did not make (expand).
	Warnings []string
	cleanup  func() // removes the spooled pipes
}

// LoadSide finds a side's results files, each argument expanded by Expand,
// and their run info. Stdin, a file given twice, a run given twice (a copy
// of its folder), a shard of a run and a file that is not a regular one
// are refused; a pipe from a shell's process substitution (<(cat FILE)) is
// read once, spooled (SpoolStdin). Close removes the spooled copies.
func LoadSide(name string, args []string) (*Side, error) {
	s := &Side{Name: name, cleanup: func() {}}
	for _, a := range args {
		if a == "-" {
			return nil, fmt.Errorf("%s: compare reads files, not stdin", name)
		}
		files, warnings, err := expand(a)
		if err != nil {
			return nil, err
		}
		s.Trials = append(s.Trials, files...)
		s.Warnings = append(s.Warnings, warnings...)
	}
	trials, cleanup, err := SpoolStdin(nil, s.Trials)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.Trials, s.cleanup = trials, cleanup
	if err := s.check(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close removes what LoadSide spooled.
func (s *Side) Close() { s.cleanup() }

// check refuses a side whose trials are not each one whole run, once.
func (s *Side) check() error {
	name := s.Name
	infos := make([]os.FileInfo, len(s.Trials))
	for i, f := range s.Trials {
		fi, err := os.Stat(f)
		if err != nil {
			return err
		}
		for j := range i {
			if os.SameFile(infos[j], fi) {
				return fmt.Errorf("%s: %s is given twice: its requests would count twice", name, DisplayName(f))
			}
		}
		infos[i] = fi
	}
	s.Runs = Runs(s.Trials)
	for i, r := range s.Runs {
		if r == nil {
			if found, err := hasRecord(s.Trials[i]); err != nil || !found {
				return cmp.Or(err, fmt.Errorf("%s: %s holds no request (an empty file, or only an end line): nothing was measured to compare", name, DisplayName(s.Trials[i])))
			}
			continue
		}
		if r.Shards > 0 {
			return fmt.Errorf("%s: %s holds shard %d/%d of a run: compare takes whole runs (each shard would count as a trial)", name, DisplayName(s.Trials[i]), r.Shard, r.Shards)
		}
		for j, q := range s.Runs[:i] {
			if q != nil && r.ID != "" && q.ID == r.ID {
				return fmt.Errorf("%s: %s and %s hold the same run (id %s): its requests would count twice", name, DisplayName(s.Trials[j]), DisplayName(s.Trials[i]), r.ID)
			}
		}
	}
	return nil
}

// hasRecord reports whether the results file holds a record.
func hasRecord(name string) (found bool, err error) {
	err = each([]string{name}, func(*result.Record) bool { found = true; return false })
	return found, err
}

// CheckSides refuses sides that share a run (by its id, or a file) without
// being the same runs: a trial of one side that is the other's run (a
// trial folder linked to it, or a copy) pools that run into both, and the
// change measured is a blend. Sides of the very same runs (compare a a)
// pass, for CompareWarnings to say so.
func CheckSides(old, new *Side) error {
	same := len(old.Trials) == len(new.Trials)
	var shared string
	for i, a := range old.Trials {
		inNew := false
		for j, b := range new.Trials {
			if sameRun(a, old.Runs[i], b, new.Runs[j]) {
				inNew = true
				if shared == "" {
					shared = fmt.Sprintf("old's %s and new's %s hold the same run", DisplayName(a), DisplayName(b))
					if r := old.Runs[i]; r != nil && r.ID != "" {
						shared += " (id " + r.ID + ")"
					}
				}
			}
		}
		same = same && inNew
	}
	if shared != "" && !same {
		return fmt.Errorf("%s: a side holds a run of the other, and the change would be measured against a blend of both (a trial folder linked to, or copied from, the other side's run?)", shared)
	}
	return nil
}

// sameRun reports whether results files a and b (with their run info) are
// one run: the same file, or runs of one id.
func sameRun(a string, ra *result.RunInfo, b string, rb *result.RunInfo) bool {
	if ra != nil && rb != nil && ra.ID != "" {
		return ra.ID == rb.ID
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// Info is the side as the comparison's JSON names it.
func (s *Side) Info() compare.SideInfo {
	return compare.SideInfo{Files: DisplayNames(s.Trials), Trials: len(s.Trials)}
}

// CompareMetrics are the metrics compared, per-request ones first.
func CompareMetrics() []compare.Metric {
	var ms []compare.Metric
	for _, tag := range CompareRequestMetrics {
		info, _ := metrics.Lookup(tag)
		ms = append(ms, compare.Metric{Tag: tag, Unit: info.Unit, PerRequest: true})
	}
	for _, tag := range CompareRunMetrics {
		info, _ := metrics.Lookup(tag)
		ms = append(ms, compare.Metric{Tag: tag, Unit: info.Unit})
	}
	return ms
}

// ParseGates reads the --fail-on specs and checks that each names a
// statistic a comparison of runs shows.
func ParseGates(specs []string) ([]compare.Gate, error) {
	var gates []compare.Gate
	for _, s := range specs {
		g, err := compare.ParseGate(s)
		if err != nil {
			return nil, fmt.Errorf("--fail-on %q: %v", s, err)
		}
		if g.Metric == compare.ErrorRate {
			if g.Stat != compare.StatMean && g.Stat != compare.StatRate {
				return nil, fmt.Errorf("--fail-on %q: the error rate has one statistic: leave .%s out", s, g.Stat)
			}
			g.Stat = compare.StatRate
			gates = append(gates, g)
			continue
		}
		perRequest := slices.Contains(CompareRequestMetrics, g.Metric)
		switch {
		case !perRequest && !slices.Contains(CompareRunMetrics, g.Metric):
			return nil, fmt.Errorf("--fail-on %q: compare shows no metric %q (it shows %s, %s, %s)", s, g.Metric,
				strings.Join(CompareRequestMetrics, ", "), strings.Join(CompareRunMetrics, ", "), compare.ErrorRate)
		case perRequest && g.Stat == compare.StatMean:
			return nil, fmt.Errorf("--fail-on %q: %s is a per-request metric: name its .p50, .p99 or .avg", s, g.Metric)
		case !perRequest && g.Stat != compare.StatMean:
			return nil, fmt.Errorf("--fail-on %q: %s is a run-level figure: compare shows the trials' mean (leave .%s out)", s, g.Metric, g.Stat)
		}
		gates = append(gates, g)
	}
	return gates, nil
}

// CompareWarnings says where the sides' runs differ: in store or settings
// between the sides (the first trial of each), and among a side's trials.
// The server URL is not compared between the sides (an A/B test of two
// servers has two).
func CompareWarnings(old, new *Side) []string {
	var out []string
	diff := func(what string, a, b *result.RunInfo, ignore ...string) {
		out = append(out, runDiff(what, a, b, ignore...)...)
	}
	for _, s := range []*Side{old, new} {
		out = append(out, s.TrialsWarnings()...)
	}
	if a, b := old.Runs[0], new.Runs[0]; a != nil && b != nil {
		diff("old and new", a, b, "url")
	}
	for _, a := range old.Runs {
		for _, b := range new.Runs {
			if a != nil && b != nil && a.ID != "" && a.ID == b.ID {
				out = append(out, fmt.Sprintf("old and new both hold run %s: a run against itself shows no change", a.ID))
				return out
			}
		}
	}
	return out
}

// runDiff says where runs a and b differ in store or settings (but the
// settings ignore and OutputSettings); what names them.
func runDiff(what string, a, b *result.RunInfo, ignore ...string) []string {
	var out []string
	ignore = append(ignore, OutputSettings...)
	if same, known := a.SameStore(b); known && !same {
		out = append(out, fmt.Sprintf("%s replayed different stores (%s, sha256 %s; %s, sha256 %s)",
			what, ShowPath(a.Store.Path), ShortSum(a.Store.SHA256), ShowPath(b.Store.Path), ShortSum(b.Store.SHA256)))
	}
	d := slices.DeleteFunc(a.Diff(b, ignore...), func(s string) bool {
		return slices.Contains(ignore, "url") && strings.HasPrefix(s, "url: ")
	})
	if len(d) > 0 {
		out = append(out, fmt.Sprintf("%s ran with different settings (%s)", what, strings.Join(d, "; ")))
	}
	return out
}

// TrialsWarnings say what the side's trials folders left out or doubt,
// the trials' end lines, and where its trials differ in store or settings
// from its first; each is led by the side's name.
func (s *Side) TrialsWarnings() []string {
	var out []string
	for _, w := range s.Warnings {
		out = append(out, s.Name+": "+w)
	}
	ends, _ := EndWarnings(s.Trials, s.Runs, Ends(s.Trials, s.Runs), false)
	for _, w := range ends {
		out = append(out, s.Name+": "+w)
	}
	for i, r := range s.Runs {
		if r == nil {
			out = append(out, fmt.Sprintf("%s: %s has no run info (written before records carried it): its store and settings are not checked", s.Name, DisplayName(s.Trials[i])))
			continue
		}
		if i > 0 && s.Runs[0] != nil {
			out = append(out, runDiff(fmt.Sprintf("the %s trials %s and %s", s.Name, DisplayName(s.Trials[0]), DisplayName(s.Trials[i])), s.Runs[0], r)...)
		}
	}
	return out
}

// ShortSum shortens a sha256 for messages.
func ShortSum(sum string) string {
	if len(sum) > 12 {
		return sum[:12] + "…"
	}
	return sum
}

// Compare measures both sides and compares them metric by metric
// (CompareMetrics).
func Compare(old, new *Side, gp metrics.Goodput, o compare.Options) (*compare.Table, error) {
	a, err := old.Measure(gp)
	if err != nil {
		return nil, err
	}
	b, err := new.Measure(gp)
	if err != nil {
		return nil, err
	}
	return compare.Compare(CompareMetrics(), a, b, o), nil
}

// Measure reads the side's results: every request's values of the
// per-request metrics, pooled, and each trial's run-level figures.
func (s *Side) Measure(gp metrics.Goodput) (compare.Side, error) {
	side := compare.Side{Values: map[string][]float64{}}
	mo := metrics.Options{Goodput: gp}
	var err error
	if mo.Streaming, err = Streaming(s.Trials, s.Runs); err != nil {
		return side, err
	}
	var failedTrials []int
	for i, f := range s.Trials {
		sum, err := Summarize([]string{f}, mo)
		if err != nil {
			return side, err
		}
		if sum.Requests+sum.ErrorRequests == 0 {
			return side, fmt.Errorf("%s: %s holds no profiling request (an empty file, or only an end line or warmup requests): nothing was measured to compare", s.Name, DisplayName(f))
		}
		run := map[string]float64{}
		for _, tag := range CompareRunMetrics {
			if r := sum.Get(tag); r != nil {
				run[tag] = r.Avg
			}
		}
		if sum.Requests == 0 {
			failedTrials = append(failedTrials, i)
		}
		side.Runs = append(side.Runs, run)
		// the error rate leaves out the requests cancelled on purpose (the
		// cancel rate, the grace period's cut): they are not failures
		failed := sum.ErrorRequests - sum.Cancelled
		side.Requests += sum.Requests + failed
		side.Failed += failed
	}
	zeroFailedTrials(side.Runs, failedTrials, CompareRunMetrics)
	src, closer, err := Open(s.Trials)()
	if err != nil {
		return side, err
	}
	defer closer.Close()
	vals, err := metrics.Values(src, mo, CompareRequestMetrics...)
	if err != nil {
		return side, err
	}
	for i, tag := range CompareRequestMetrics {
		if len(vals[i]) > 0 {
			side.Values[tag] = vals[i]
		}
	}
	return side, nil
}

// zeroFailedTrials gives the trials in which no request succeeded (failed)
// a 0 for each run-level figure some other trial has: such a trial
// completed nothing, and leaving it out of the trials' mean would hide the
// failure.
func zeroFailedTrials(runs []map[string]float64, failed []int, tags []string) {
	for _, tag := range tags {
		had := false
		for _, r := range runs {
			_, ok := r[tag]
			had = had || ok
		}
		if !had {
			continue
		}
		for _, i := range failed {
			if _, ok := runs[i][tag]; !ok {
				runs[i][tag] = 0
			}
		}
	}
}
