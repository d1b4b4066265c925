package result

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckShards(t *testing.T) {
	sh := func(id string, i, n int) *RunInfo { return &RunInfo{ID: id, Shard: i, Shards: n} }
	whole := func(id string) *RunInfo { return &RunInfo{ID: id} }
	files := func(runs ...*RunInfo) []RunFile {
		out := make([]RunFile, len(runs))
		for i, r := range runs {
			out[i] = RunFile{Name: string(rune('a' + i)), Run: r}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		files   []RunFile
		allow   bool
		refuse  string // a ShardError saying this
		warning string // else a warning saying this ("" none)
	}{
		{"three of three", files(sh("x", 0, 3), sh("y", 2, 3), sh("z", 1, 3)), false, "", ""},
		{"one whole run", files(whole("x")), false, "", ""},
		{"records without run info", files(nil, nil), false, "", ""},
		{"one run split in files", files(whole("x"), nil, nil), false, "", ""},
		{"two whole runs", files(whole("x"), whole("y")), false, "", "a and b are two runs of the whole store"},
		{"a shard twice", files(sh("x", 0, 2), sh("y", 1, 2), sh("z", 1, 2)), false, "b and c are both shard 1/2: its requests would count twice", ""},
		{"different N", files(sh("x", 0, 2), sh("y", 1, 3)), false, "a is shard 0/2 and b shard 1/3", ""},
		{"whole beside shards", files(whole("x"), sh("y", 0, 2)), false, "a is a whole run and b shard 0/2 of one", ""},
		{"missing", files(sh("x", 0, 4), sh("y", 2, 4)), false, "shards 1/4, 3/4 of the replay are missing", ""},
		{"missing allowed", files(sh("x", 0, 4), sh("y", 2, 4), sh("z", 3, 4)), true, "", "shard 1/4 of the replay is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			warns, err := CheckShards(tc.files, tc.allow)
			var se *ShardError
			switch {
			case tc.refuse != "":
				if !errors.As(err, &se) || !strings.Contains(se.Msg, tc.refuse) {
					t.Fatalf("got %v, want a refusal saying %q", err, tc.refuse)
				}
			case err != nil:
				t.Fatalf("refused: %v", err)
			case tc.warning == "" && len(warns) > 0:
				t.Fatalf("warnings %q, want none", warns)
			case tc.warning != "" && (len(warns) != 1 || !strings.Contains(warns[0], tc.warning)):
				t.Fatalf("warnings %q, want one saying %q", warns, tc.warning)
			}
		})
	}
}

func TestShardSpread(t *testing.T) {
	spread, early, late := ShardSpread(map[int]int64{0: 1000, 1: 400, 2: 1900})
	if spread != 1500 || early != 1 || late != 2 {
		t.Errorf("got %d, %d, %d; want 1500, 1, 2", spread, early, late)
	}
	if s, _, _ := ShardSpread(map[int]int64{3: 5}); s != 0 {
		t.Errorf("one shard: spread %d", s)
	}
}
