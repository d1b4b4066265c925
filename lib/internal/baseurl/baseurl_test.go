package baseurl

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      error
	}{
		{"localhost:8000", "http://localhost:8000", nil},
		{"127.0.0.1:8000/metrics", "http://127.0.0.1:8000/metrics", nil},
		{"https://h/v1?x=1", "https://h/v1?x=1", nil},
		{"http://u:p@h:1", "http://u:p@h:1", nil},
		{"ftp://h", "", ErrScheme},
		{"http://", "", ErrNoHost},
		{"http:///v1", "", ErrNoHost},
	} {
		u, err := Parse(tc.in)
		switch {
		case tc.err != nil && !errors.Is(err, tc.err):
			t.Errorf("Parse(%q): error %v, want %v", tc.in, err, tc.err)
		case tc.err == nil && (err != nil || u.String() != tc.want):
			t.Errorf("Parse(%q) = %v, %v; want %s", tc.in, u, err, tc.want)
		}
	}
	if _, err := Parse("http://h:port/"); err == nil || errors.Is(err, ErrScheme) || errors.Is(err, ErrNoHost) {
		t.Errorf("a bad port: %v, want url.Parse's error", err)
	}
}
