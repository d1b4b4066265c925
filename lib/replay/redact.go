package replay

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// redactor removes the run's credentials from what a record carries. A
// server's error may echo the request's headers (a 401 body quoting the
// Authorization header it refused, a proxy dumping the request), and an
// error's message and type are written to the results and, from them, to
// every export and the HTML page; the key must appear in none of them.
//
// The credentials are the API key and the values of the extra headers that
// carry credentials (Authorization, Proxy-Authorization, Cookie, and any
// name holding "key", "token", "secret", "auth", "password" or
// "session"), each also without its scheme ("Bearer KEY" gives KEY). Each
// is looked for, and replaced by "[redacted]", in the forms an echo takes:
//
//   - as sent, and as JSON string text with any mix of escapes: any
//     character as \uXXXX (hex of either case, a surrogate pair past
//     U+FFFF), "/" as \/, and the short escapes (\" \\ \n ...);
//   - percent-encoded (query and path escaping);
//   - base64 (standard and URL alphabets, padded or not) of the
//     credential and of "Bearer " + the credential, and, for one of at
//     least minBase64 bytes, the characters of a longer base64 text that
//     encode its bytes alone, at each of the three alignments it can have
//     there (a header dump encoded whole), so the text around it is kept.
//
// A message cut short ("...") that ends with the first 4 or more bytes of
// a form has them replaced too.
type redactor struct {
	secrets []string // as sent, longest first: also matched through JSON escapes
	forms   []string // every literal form, longest first
}

const redacted = "[redacted]"

// minBase64 is the shortest credential whose base64 forms are looked for:
// the base64 of a shorter one is a few characters that ordinary text holds.
const minBase64 = 8

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
		forms = append(forms, base64Forms(s)...)
	}
	longestFirst := func(a, b string) int { return len(b) - len(a) }
	slices.SortFunc(forms, longestFirst)
	slices.SortFunc(secrets, longestFirst)
	return &redactor{secrets: slices.Compact(secrets), forms: slices.Compact(forms)}
}

// base64Forms are the base64 texts of s that redact looks for (see
// redactor): none for a credential shorter than minBase64.
func base64Forms(s string) []string {
	if len(s) < minBase64 {
		return nil
	}
	encs := []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding}
	var forms []string
	for _, t := range []string{s, "Bearer " + s} {
		for _, e := range encs {
			forms = append(forms, e.EncodeToString([]byte(t)))
		}
	}
	// Within a longer text, s starts k bytes (mod 3) into a 3-byte group:
	// the characters from ceil(8k/6) to floor(8(k+len)/6) encode s's bits
	// alone.
	for k := range 3 {
		b := make([]byte, k+len(s))
		copy(b[k:], s)
		for _, e := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			enc := e.EncodeToString(b)
			forms = append(forms, enc[(8*k+5)/6:8*(k+len(s))/6])
		}
	}
	return forms
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
	if strings.Contains(s, `\`) {
		for _, sec := range rd.secrets {
			s = replaceEscaped(s, sec)
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

// replaceEscaped replaces each run of s that reads, as JSON string text,
// as secret, whatever its characters' escapes (matchEscaped).
func replaceEscaped(s, secret string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if n := matchEscaped(s[i:], secret); n > 0 {
			b.WriteString(s[last:i])
			b.WriteString(redacted)
			i += n - 1
			last = i + 1
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// matchEscaped returns the length of the start of s that reads as secret
// with any of its characters escaped, or 0.
func matchEscaped(s, secret string) int {
	n := 0
	for _, r := range secret {
		m := matchRune(s[n:], r)
		if m == 0 {
			return 0
		}
		n += m
	}
	return n
}

// matchRune returns the length of the start of s that is r, as it is or as
// a JSON escape of it, or 0.
func matchRune(s string, r rune) int {
	if lit := string(r); strings.HasPrefix(s, lit) {
		return len(lit)
	}
	if len(s) < 2 || s[0] != '\\' {
		return 0
	}
	switch c := s[1]; c {
	case 'u':
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			if hex4(s[2:]) == r1 && len(s) >= 8 && s[6:8] == `\u` && hex4(s[8:]) == r2 {
				return 12
			}
		} else if hex4(s[2:]) == r {
			return 6
		}
	case '/', '"', '\\':
		if rune(c) == r {
			return 2
		}
	default:
		if short := map[byte]rune{'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f'}[c]; short != 0 && short == r {
			return 2
		}
	}
	return 0
}

// hex4 is the value of the 4 hex digits s starts with, or -1.
func hex4(s string) rune {
	if len(s) < 4 {
		return -1
	}
	var v rune
	for i := range 4 {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return v
}
