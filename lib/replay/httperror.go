package replay

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/result"
)

// httpError is the outcome of an answer with a status outside 2xx, as the
// Python aiperf records it (its aiohttp transport, ai-dynamo/aiperf
// aiperf/clients/http/aiohttp_client.py and the later
// src/aiperf/transports/aiohttp_client.py: ErrorDetails(code=status,
// type=response.reason, message=await response.text())): the type is the
// status's reason phrase ("Internal Server Error") and the message the
// body as it came, so that error summaries group the same errors alike in
// both tools. The body is kept up to maxMessage bytes (aiperf keeps it
// whole), invalid UTF-8 replaced. A status without a standard phrase gets
// "HTTP <code>".
func httpError(status int, body []byte) *result.Error {
	typ := http.StatusText(status)
	if typ == "" {
		typ = "HTTP " + strconv.Itoa(status)
	}
	return &result.Error{Code: status, Type: typ, Message: clipText(strings.ToValidUTF8(string(body), "\uFFFD"), maxMessage)}
}

// redirectMessage is the error message of a redirect (3xx). Redirects are
// not followed: each would add a second exchange (and maybe a dial to
// another host) inside every measured request, so the run would time the
// detour, not the server; a redirect is a failed request whose message
// names where the server points, and the error gate fails a run of them.
func redirectMessage(location string) string {
	if location == "" {
		return "redirected without a Location: redirects are not followed"
	}
	return "redirected to " + location + ": redirects are not followed (each would be timed inside the request); give --url the address it names"
}
