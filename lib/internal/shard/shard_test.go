package shard

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		i, n    int
		wantErr bool
	}{
		{"0/1", 0, 1, false}, {"2/3", 2, 3, false}, {"3/3", 0, 0, true}, {"-1/3", 0, 0, true},
		{"1/0", 0, 0, true}, {"1", 0, 0, true}, {"a/b", 0, 0, true}, {"1/2/3", 0, 0, true},
		{"", 0, 0, true},
	} {
		i, n, err := Parse(tc.in)
		if (err != nil) != tc.wantErr || i != tc.i || n != tc.n {
			t.Errorf("Parse(%q) = %d, %d, %v; want %d, %d, error %v", tc.in, i, n, err, tc.i, tc.n, tc.wantErr)
		}
	}
}
