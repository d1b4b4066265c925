package replay

import (
	"net/url"
	"slices"
	"strings"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// redactor removes the run's credentials from what a record carries. A
// server's error may echo the request's headers (a 401 body quoting the
// Authorization header it refused, a proxy dumping the request), and an
// error's message and type are written to the records and, from them, to
// every export; the key must appear in none of them.
//
// The credentials are the API key and the values of the extra headers that
// carry credentials (Authorization, Proxy-Authorization, Cookie, and any
// name holding "key", "token", "secret", "auth", "password" or
// "session"), each also without its scheme ("Bearer KEY" gives KEY). Each
// is looked for as sent, JSON-escaped (also with "\/" for "/", as some
// encoders write it) and percent-encoded, and replaced by "[redacted]"; a
// message cut short ("...") that ends with the first 4 or more bytes of one
// has them replaced too.
type redactor struct {
	forms []string // longest first
}

const redacted = "[redacted]"

func newRedactor(apiKey string, headers []Header) *redactor {
	var secrets []string
	if apiKey != "" {
		secrets = append(secrets, apiKey)
	}
	for _, h := range headers {
		if !credentialHeader(h.Name) || h.Value == "" {
			continue
		}
		secrets = append(secrets, h.Value)
		if _, cred, ok := strings.Cut(h.Value, " "); ok && strings.TrimSpace(cred) != "" {
			secrets = append(secrets, strings.TrimSpace(cred))
		}
	}
	if len(secrets) == 0 {
		return nil
	}
	var forms []string
	for _, s := range secrets {
		esc := string(jsonx.AppendString(nil, s))
		esc = esc[1 : len(esc)-1]
		forms = append(forms, s, esc, strings.ReplaceAll(esc, "/", `\/`), url.QueryEscape(s), url.PathEscape(s))
	}
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	return &redactor{forms: slices.Compact(forms)}
}

func credentialHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie":
		return true
	}
	for _, w := range []string{"key", "token", "secret", "auth", "password", "session"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// minPartial is the shortest start of a credential that is redacted at
// the end of a message cut short.
const minPartial = 4

// redact returns s without the credentials.
func (rd *redactor) redact(s string) string {
	if rd == nil || s == "" {
		return s
	}
	for _, f := range rd.forms {
		if strings.Contains(s, f) {
			s = strings.ReplaceAll(s, f, redacted)
		}
	}
	// clip cut the text at a byte count and added "...": the cut may have
	// left the start of a credential.
	if body, ok := strings.CutSuffix(s, "..."); ok {
		for _, f := range rd.forms {
			for n := min(len(f)-1, len(body)); n >= minPartial; n-- {
				if strings.HasSuffix(body, f[:n]) {
					return body[:len(body)-n] + redacted + "..."
				}
			}
		}
	}
	return s
}
