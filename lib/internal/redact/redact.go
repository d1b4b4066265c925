// Package redact takes the credentials out of URLs before they are written
// to a file or a message: a token in a query (?api_key=...) or a password
// in the user information (http://user:pass@host) of a --url or a
// --server-metrics URL must not land in results, exports or pages.
package redact

import "strings"

// Marker replaces what is taken out.
const Marker = "[redacted]"

// URL returns u with its user information and the value of every query
// parameter replaced by Marker: "http://u:p@h/metrics?token=t&x" reads
// "http://[redacted]@h/metrics?token=[redacted]&x". A path with a query
// ("/v1/chat?key=k") is taken the same way; text that is neither comes
// back as it is. The rest (scheme, host, path, fragment) is kept, so two
// URLs that differ only in a credential read alike.
func URL(u string) string {
	rest, frag, hasFrag := strings.Cut(u, "#")
	rest, query, hasQuery := strings.Cut(rest, "?")
	if scheme, after, ok := strings.Cut(rest, "://"); ok {
		authority, path := after, ""
		if i := strings.IndexByte(after, '/'); i >= 0 {
			authority, path = after[:i], after[i:]
		}
		if i := strings.LastIndexByte(authority, '@'); i >= 0 {
			authority = Marker + authority[i:]
		}
		rest = scheme + "://" + authority + path
	}
	if hasQuery {
		parts := strings.Split(query, "&")
		for i, p := range parts {
			if k, v, ok := strings.Cut(p, "="); ok && v != "" {
				parts[i] = k + "=" + Marker
			}
		}
		rest += "?" + strings.Join(parts, "&")
	}
	if hasFrag {
		rest += "#" + frag
	}
	return rest
}
