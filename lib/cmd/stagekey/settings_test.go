package stagekey

import "testing"

func TestCombineShards(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"0/1"}, "0/1"},
		{[]string{"1/3"}, "1/3"},
		{[]string{"2/3", "0/3", "1/3"}, "0/1"},
		{[]string{"2/3", "0/3"}, "0/3+2/3"},
		{[]string{"0/2", "0/3", "1/2"}, "0/2+0/3+1/2"},
		{[]string{"0/2", "0/2"}, "0/2"},
	} {
		if got := combineShards(c.in); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}
