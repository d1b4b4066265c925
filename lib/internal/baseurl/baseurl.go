// Package baseurl reads a server's base URL as --url and --server-metrics
// take it: as in the Python aiperf, a URL without a scheme
// ("localhost:8000", its default) is http, and only http and https with a
// host are servers.
package baseurl

import (
	"errors"
	"net/url"
	"strings"
)

// The errors of Parse besides url.Parse's own; the callers wrap them with
// the flag and the value given.
var (
	ErrScheme = errors.New("want an http:// or https:// URL")
	ErrNoHost = errors.New("no host")
)

// Parse parses s, http when it names no scheme: an http or https URL with a
// host, else url.Parse's error, ErrScheme or ErrNoHost. User information
// is kept (a caller that refuses credentials checks u.User).
func Parse(s string) (*url.URL, error) {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, err
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, ErrScheme
	case u.Host == "":
		return nil, ErrNoHost
	}
	return u, nil
}
