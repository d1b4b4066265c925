package replay

import (
	"fmt"
	"strings"
)

// Connection reuse strategies (Options.ConnectionReuse), as the Python
// aiperf's --connection-reuse-strategy names them (pooled, never,
// sticky-user-sessions).
const (
	// ReusePooled: every request takes an idle keep-alive connection from
	// the pool, or a new one (the default).
	ReusePooled = "pooled"
	// ReuseNever: every request opens its own connection and closes it
	// after the response.
	ReuseNever = "never"
	// ReuseSticky: a session run's turns go on one connection, opened by
	// its first turn and closed after its last (routers that pin a
	// connection to a replica see the conversation as one).
	ReuseSticky = "sticky"
)

// DefaultSessionHeader carries one id per session run on every turn, as
// the Python aiperf sends it (Options.SessionHeader).
const DefaultSessionHeader = "X-Correlation-ID"

// checkReuse checks the connection reuse and session header options.
func (o *Options) checkReuse() error {
	switch o.ConnectionReuse {
	case "", ReusePooled, ReuseNever, ReuseSticky:
	default:
		return optErr("connection-reuse", " %q: unknown strategy (want pooled, never or sticky)", o.ConnectionReuse)
	}
	name := o.SessionHeader
	if o.NoSessionHeader || name == "" || asciiEqualFold([]byte(name), "x-correlation-id") {
		return nil
	}
	if err := checkHeader(Header{Name: name}); err != nil {
		return optErr("session-header", ": %v", err)
	}
	for _, h := range o.Headers {
		if asciiEqualFold([]byte(h.Name), strings.ToLower(name)) {
			return optErr("session-header", ": %s is also given as a header (the client sets it to the session's id)", name)
		}
	}
	return nil
}

// sessionHeader returns the session id header line's start ("\r\nName: "),
// or nil when none is sent.
func sessionHeader(o *Options) []byte {
	if o.NoSessionHeader {
		return nil
	}
	name := o.SessionHeader
	if name == "" {
		name = DefaultSessionHeader
	}
	return fmt.Appendf(nil, "\r\n%s: ", name)
}

// connFor returns the connection a session's turn goes on and whether it
// was open already.
func (r *runner) connFor(sess *session) (*conn, bool, error) {
	switch r.o.ConnectionReuse {
	case ReuseNever:
		c, err := r.pool.dial(r.abortCtx)
		return c, false, err
	case ReuseSticky:
		if c := sess.conn; c != nil {
			sess.conn = nil
			return c, true, nil
		}
		c, err := r.pool.dial(r.abortCtx)
		return c, false, err
	}
	return r.pool.get(r.abortCtx)
}

// release hands back a turn's connection after its response; keep
// reports that it can carry another request.
func (r *runner) release(sess *session, c *conn, keep bool) {
	switch {
	case !keep || r.o.ConnectionReuse == ReuseNever:
		r.pool.drop(c)
	case r.o.ConnectionReuse == ReuseSticky:
		if sess.turn+1 < sess.turns {
			c.uses++
			sess.conn = c
		} else {
			r.pool.drop(c)
		}
	default:
		r.pool.put(c)
	}
}

// endSession closes the connection a session run held, when its run ends
// before its last turn.
func (r *runner) endSession(sess *session) {
	if sess.conn != nil {
		r.pool.drop(sess.conn)
		sess.conn = nil
	}
}

// warmFor is how many of n connections to dial before the clock starts:
// one, for the check that the server is there, when requests do not take
// connections from the pool.
func (r *runner) warmFor(n int) int {
	if r.o.ConnectionReuse == ReuseNever || r.o.ConnectionReuse == ReuseSticky {
		return min(n, 1)
	}
	return n
}
