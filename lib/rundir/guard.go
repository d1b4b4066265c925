package rundir

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/gofrs/flock"
)

// LockFile is the file in a run's folder whose lock (flock(2), held while
// a run, a sweep or a report writes there) keeps a second writer out. The
// writer removes it when it ends (while it still holds the lock; a writer
// that locked the file just as it went checks that the name is still the
// file it locked, and starts again if not), so a finished folder holds
// only the run's files; one killed outright leaves it, unlocked.
const LockFile = ".aiperf-replay.lock"

// sweepFile is lib/sweep's state file (sweep.File): a folder holding one
// is a sweep's.
const sweepFile = "sweep.json"

// Kind is what takes a folder with Claim.
type Kind int

const (
	// KindRun is a run, a --trials run or one of its trials, or a sweep's
	// step: it refuses a folder that holds an earlier run unless Force.
	KindRun Kind = iota
	// KindSweep is a sweep: its own sweep.json is taken up (resumed); a
	// folder holding a run's results or trials is refused.
	KindSweep
	// KindReport is report -o: it takes the lock only (report judges the
	// folder's results itself).
	KindReport
)

// ClaimOptions say how a folder is taken.
type ClaimOptions struct {
	Kind Kind
	// Force lets a run replace the results of an earlier run there.
	Force bool
	// Nested is for a folder the tool names inside a run's folder
	// (trial-K, step-NN): a symbolic link there is refused, not followed.
	Nested bool
	// Follow are outputs the user named that may be in the folder (--html
	// FILE): they keep the rule of named outputs (atomicfile.Own).
	Follow []string
}

// Claim is a writer's hold on its folder.
type Claim struct {
	lock    *flock.Flock
	release func()
}

// Take makes dir (with its parents) and takes it for a writer of kind
// o.Kind, before anything is written there:
//
//   - A folder another writer holds (its LockFile's lock) is refused: two
//     runs started into one -o would mix their files.
//   - A run refuses a folder that holds an earlier run's results
//     (results.jsonl), trials (trials.json, trial-K/) or sweep (sweep.json)
//     unless o.Force: the default -o artifacts would otherwise silently
//     replace the last run (an A/B comparison's A). A sweep refuses a
//     folder of runs or trials, and resumes its own.
//   - A nested folder (o.Nested: trial-K, step-NN) that is a symbolic link
//     is refused: the folders in a run's folder are the tool's own.
//   - While the claim is held, the files written directly in dir replace
//     what is at their names and never follow a link (atomicfile.Own), but
//     o.Follow's.
//
// Release ends the claim.
func Take(dir string, o ClaimOptions) (*Claim, error) {
	if o.Nested {
		if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s is a symbolic link: the folders in a run's folder are the tool's own, and a link there is never followed; remove it", dir)
		}
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	lk, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	if err := checkEarlier(dir, o); err != nil {
		unlock(lk)
		return nil, err
	}
	return &Claim{lock: lk, release: atomicfile.Own(dir, o.Follow...)}, nil
}

// lockDir takes the lock of dir's LockFile.
func lockDir(dir string) (*flock.Flock, error) {
	lf := filepath.Join(dir, LockFile)
	for range 10 {
		if fi, err := os.Lstat(lf); err == nil && !fi.Mode().IsRegular() {
			os.Remove(lf) // a link or pipe planted at the tool's own name: replaced, never followed
		}
		lk := flock.New(lf, flock.SetPermissions(0o644))
		ok, err := lk.TryLock()
		if err != nil {
			return nil, fmt.Errorf("%s: taking the folder's lock: %w", dir, err)
		}
		if !ok {
			lk.Close()
			return nil, fmt.Errorf("%s: another run (or report) is writing into this folder now (it holds %s): choose another folder, or wait for it to end", dir, LockFile)
		}
		held, err1 := lk.Stat()
		now, err2 := os.Lstat(lf)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return lk, nil
		}
		lk.Close() // the file was removed by the writer that just ended: again
	}
	return nil, fmt.Errorf("%s: taking the folder's lock: its %s keeps changing", dir, LockFile)
}

// Release ends the claim and removes the lock file; it is safe on nil and
// more than once.
func (c *Claim) Release() {
	if c == nil || c.lock == nil {
		return
	}
	c.release()
	unlock(c.lock)
	c.lock = nil
}

// unlock removes a held lock's file, then lets the lock go (see LockFile).
func unlock(lk *flock.Flock) {
	os.Remove(lk.Path())
	lk.Close()
}

// checkEarlier refuses a folder that holds what o.Kind may not replace.
func checkEarlier(dir string, o ClaimOptions) error {
	if o.Kind == KindReport || o.Force {
		return nil
	}
	what := earlier(dir, o.Kind == KindSweep)
	switch {
	case what == "":
		return nil
	case o.Kind == KindSweep:
		return fmt.Errorf("%s holds %s, not a sweep's: choose another folder", dir, what)
	case o.Nested:
		return fmt.Errorf("%s holds %s, not this run's: remove it, or choose another folder", dir, what)
	}
	return fmt.Errorf("%s holds %s: a run never replaces another's results without a word; give --force to replace them, or choose another -o", dir, what)
}

// earlier describes what of an earlier run dir holds ("" for nothing):
// its results, trials or sweep (not a sweep's state when sweep).
func earlier(dir string, sweep bool) string {
	p := ResultsPath(dir)
	if fi, err := os.Lstat(p); err == nil {
		if r := Runs([]string{p})[0]; fi.Mode().IsRegular() && r != nil && r.ID != "" {
			return fmt.Sprintf("an earlier run's results (%s of run %s)", ResultsFile, r.ID)
		}
		return "an earlier run's results (" + ResultsFile + ")"
	}
	if _, err := os.Lstat(filepath.Join(dir, TrialsFile)); err == nil {
		return "an earlier --trials run's trials (" + TrialsFile + ")"
	}
	if ts, err := TrialDirs(dir); err == nil && len(ts) > 0 {
		return "an earlier --trials run's trials (" + filepath.Base(ts[0]) + "/)"
	}
	if _, err := os.Lstat(filepath.Join(dir, sweepFile)); err == nil && !sweep {
		return "a sweep (" + sweepFile + ")"
	}
	return ""
}
