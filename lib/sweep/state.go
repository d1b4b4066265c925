package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
)

// StateVersion is the "v" of sweep.json.
const StateVersion = 1

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
	var s State
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if s.V != StateVersion {
		return nil, fmt.Errorf("%s: field v: version %d, want %d", path, s.V, StateVersion)
	}
	for i, st := range s.Steps {
		if st.N != i+1 {
			return nil, fmt.Errorf("%s: steps[%d]: field step: %d, want %d", path, i, st.N, i+1)
		}
	}
	return &s, nil
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
