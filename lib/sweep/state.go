package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
)

// StateVersion is the "v" of sweep.json. Version 2 (2026-12) judges rate
// steps held back by the --max-concurrency ceiling by their SLOs, counts a
// step's sessions over the sessions it played, and tries the synchronous
// probe's rate as arrivals: version 1's steps read (sweep report), but a
// sweep does not resume from them.
const StateVersion = 2

// State is a sweep's sweep.json: the settings that decide its steps, the
// steps so far and, once the search ended, the answer. It is rewritten
// (atomically) after every step, so an interrupted sweep leaves the steps
// it finished.
type State struct {
	V int `json:"v"`
	// Settings are every setting that changes what a step measures, as
	// strings (the store's digest, the url, the SLOs, the step size, ...).
	// A sweep resumes only with equal settings.
	Settings map[string]string `json:"settings"`
	Steps    []Step            `json:"steps"`
	Answer   *Answer           `json:"answer,omitempty"`
	// ElapsedSec is the wall time of the runs that made the steps
	// (reused steps keep theirs).
	ElapsedSec float64 `json:"elapsed_s"`
}

// LoadState reads path; a missing file is (nil, nil).
func LoadState(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseState(b, path)
}

// ParseState decodes a sweep.json; errors name the file (name), the line
// and the field.
func ParseState(b []byte, name string) (*State, error) {
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("%s line %d: %v", name, lineAt(b, se.Offset), err)
		case errors.As(err, &te):
			return nil, fmt.Errorf("%s line %d: field %s: want a %v, got a JSON %s", name, lineAt(b, te.Offset), te.Field, te.Type, te.Value)
		}
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if s.V < 1 || s.V > StateVersion {
		return nil, fmt.Errorf("%s: field v: version %d, want 1 to %d", name, s.V, StateVersion)
	}
	for i, st := range s.Steps {
		if st.N != i+1 {
			return nil, fmt.Errorf("%s: field steps[%d].step: %d, want %d", name, i, st.N, i+1)
		}
		if !(st.Load > 0) || math.IsInf(st.Load, 0) {
			return nil, fmt.Errorf("%s: field steps[%d].load: %v, want a number above 0", name, i, st.Load)
		}
	}
	return &s, nil
}

// lineAt is the line (from 1) of byte offset off in b.
func lineAt(b []byte, off int64) int {
	off = min(max(off, 0), int64(len(b)))
	return 1 + bytes.Count(b[:off], []byte{'\n'})
}

// Save writes s to path atomically.
func (s *State) Save(path string) error {
	s.V = StateVersion
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	return atomicfile.WriteFile(path, bytes.NewReader(b))
}

// DiffSettings names the settings that differ between a and b (set in one
// and not the other included), sorted.
func DiffSettings(a, b map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if v, ok := b[k]; !ok || v != a[k] {
			out = append(out, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
