package redact

import "testing"

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8000/metrics":              "http://127.0.0.1:8000/metrics",
		"http://u:pw@h:1/metrics?token=t0k&x=1&flag": "http://[redacted]@h:1/metrics?token=[redacted]&x=[redacted]&flag",
		"https://tok@h/":                             "https://[redacted]@h/",
		"http://h/m?a=@b":                            "http://h/m?a=[redacted]",
		"http://u:p@ss@h?k=v#frag":                   "http://[redacted]@h?k=[redacted]#frag",
		"/v1/chat/completions?api-key=k1":            "/v1/chat/completions?api-key=[redacted]",
		"/v1/chat/completions":                       "/v1/chat/completions",
		"h:8000/metrics?token=":                      "h:8000/metrics?token=",
		"":                                           "",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}
